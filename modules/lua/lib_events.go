// lib_events.go: module:hook, module:fire_event and the HTTP server's
// events (require "net.http.server"), with Prosody's rules (see package
// modules/events).

package lua

import (
	"context"
	"fmt"

	"cairn/modules/events"
	"cairn/modules/httpapp"
	"cairn/modules/modapi"

	lua "github.com/yuin/gopher-lua"
)

// luaValue is a Lua value that left its state through an event: data a
// module fires, or a hook's answer. The module it came from sees the
// value itself (one table, as in Prosody); another module gets a copy
// of its strings, numbers, booleans and tables (functions and userdata
// other than shared tables are left out).
type luaValue struct {
	from   *Module
	gen    int
	v      lua.LValue
	copied bool
	copy   any
	fresh  map[*modapi.SharedTable]bool
}

// makeCopy copies v out of its state; the state's lock must be held.
func (x *luaValue) makeCopy() {
	if !x.copied {
		x.copy, x.fresh, _ = x.from.copyOut(x.v, false)
		x.copied = true
	}
}

// in is x in m's state.
func (x *luaValue) in(m *Module, L *lua.LState) lua.LValue {
	if x.from == m && x.gen == m.gen {
		return x.v
	}
	x.makeCopy()
	return m.importCopy(L, x.copy, x.fresh)
}

// hookError is what a Lua hook that raised answers to an event fired
// from Lua: the firing stops there, and fire_event raises it again (as
// Prosody's fire_event lets a handler's error through). For events the
// server fires (http-error, directory-index) the error is logged and the
// next handler answers instead.
type hookError struct{ err error }

// addEvents adds the event methods to the module object, and returns
// the net.http.server library.
func addEvents(L *lua.LState, mod *lua.LTable, m *Module) *lua.LTable {
	set := func(name string, f lua.LGFunction) { mod.RawSetString(name, L.NewFunction(f)) }
	hook := func(bus *events.Bus, L *lua.LState, event string, fn *lua.LFunction, prio int) {
		bus.Add(m.name, event, fn, prio, m.hookHandler(fn, m.gen))
	}
	// module:hook(event, handler[, priority]); every cairn module is
	// global, so hook_global is the same.
	hookMethod := func(L *lua.LState) int {
		hook(m.ctx.Events, L, L.CheckString(2), L.CheckFunction(3), L.OptInt(4, 0))
		return 0
	}
	set("hook", hookMethod)
	set("hook_global", hookMethod)
	set("unhook", func(L *lua.LState) int {
		m.ctx.Events.Remove(L.CheckString(2), L.CheckFunction(3))
		return 0
	})
	set("fire_event", func(L *lua.LState) int {
		return m.fire(L, m.ctx.Events, L.CheckString(2), L.Get(3))
	})

	server := L.NewTable()
	server.RawSetString("add_handler", L.NewFunction(func(L *lua.LState) int {
		hook(m.ctx.HTTPEvents, L, L.CheckString(1), L.CheckFunction(2), L.OptInt(3, 0))
		return 0
	}))
	server.RawSetString("remove_handler", L.NewFunction(func(L *lua.LState) int {
		m.ctx.HTTPEvents.Remove(L.CheckString(1), L.CheckFunction(2))
		return 0
	}))
	server.RawSetString("fire_event", L.NewFunction(func(L *lua.LState) int {
		return m.fire(L, m.ctx.HTTPEvents, L.CheckString(1), L.Get(2))
	}))
	server.RawSetString("_events", server)
	busOf := func(L *lua.LState) *events.Bus {
		if L.Get(2) != server {
			L.ArgError(2, `events object expected: require "net.http.server" (the only one cairn has besides module:hook's)`)
		}
		return m.ctx.HTTPEvents
	}
	set("hook_object_event", func(L *lua.LState) int {
		hook(busOf(L), L, L.CheckString(3), L.CheckFunction(4), L.OptInt(5, 0))
		return 0
	})
	set("unhook_object_event", func(L *lua.LState) int {
		busOf(L).Remove(L.CheckString(3), L.CheckFunction(4))
		return 0
	})
	return server
}

// fire is fire_event from Lua: the first non-nil answer, in this state.
func (m *Module) fire(L *lua.LState, bus *events.Bus, event string, data lua.LValue) int {
	ctx := L.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	var arg any = &luaValue{from: m, gen: m.gen, v: data}
	if data == lua.LNil {
		arg = nil
	}
	switch r := bus.Fire(ctx, event, arg).(type) {
	case hookError:
		L.RaiseError("event %s: %s", event, r.err.Error())
	case *luaValue:
		L.Push(r.in(m, L))
	default:
		L.Push(goToLua(L, r))
	}
	return 1
}

// unhookAll removes the hooks of the state (its module's, on both
// buses).
func (m *Module) unhookAll() {
	if m.ctx == nil {
		return
	}
	m.ctx.Events.RemoveOwner(m.name)
	m.ctx.HTTPEvents.RemoveOwner(m.name)
}

// hookHandler runs fn, a hook of the state of generation gen, for an
// event. Fired from a call that holds this module's state (its own
// call, or one that reached another module and came back), it runs
// there at once, within that call's limits; otherwise it waits for the
// state (until the firer's deadline) and runs under the module's limits.
func (m *Module) hookHandler(fn *lua.LFunction, gen int) events.Handler {
	return func(ctx context.Context, data any) any {
		_, fromLua := data.(*luaValue)
		answer := func(out any, err error) any {
			if err == nil {
				return out
			}
			if fromLua {
				return hookError{fmt.Errorf("a handler of module %s failed: %w", m.name, err)}
			}
			m.ctx.Log.Error("lua hook failed", "err", err)
			return nil
		}
		if holds(ctx, m) {
			if m.gen != gen || m.L == nil {
				return nil
			}
			return answer(m.runHook(m.L, fn, data))
		}
		if err := m.lock(ctx); err != nil {
			return answer(nil, err)
		}
		defer m.unlock()
		if m.src == nil || m.gen != gen || m.L == nil {
			return nil
		}
		hctx := withHeld(ctx, m)
		prev := m.callCtx
		m.callCtx = hctx
		var out any
		err := m.lim.run(hctx, m.L, func() error {
			var err error
			out, err = m.runHook(m.L, fn, data)
			return err
		})
		m.callCtx = prev
		if err != nil {
			m.recoverFrom(err)
			return answer(nil, err)
		}
		if x, ok := out.(*luaValue); ok {
			x.makeCopy() // before the state is let go
		}
		return out
	}
}

// runHook calls fn with the event's data in L and returns its answer.
func (m *Module) runHook(L *lua.LState, fn *lua.LFunction, data any) (any, error) {
	var after func()
	var arg lua.LValue = lua.LNil
	switch d := data.(type) {
	case *luaValue:
		arg = d.in(m, L)
	case *httpapp.ErrorEvent:
		t, resp := m.errorEventTable(L, d)
		arg = t
		after = func() { syncResponse(resp, d.Response) }
	case *modapi.DirectoryIndex:
		t := L.NewTable()
		t.RawSetString("path", lua.LString(d.Path))
		t.RawSetString("full_path", lua.LString(d.FullPath))
		arg = t
	case nil:
	default:
		arg = goToLua(L, d)
	}
	L.Push(fn)
	L.Push(arg)
	if err := L.PCall(1, 1, keepError(L)); err != nil {
		return nil, err
	}
	ret := L.Get(-1)
	L.Pop(1)
	if after != nil {
		after()
	}
	switch r := ret.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LString:
		return string(r), nil
	case lua.LNumber:
		return float64(r), nil
	case lua.LBool:
		return bool(r), nil
	}
	return &luaValue{from: m, gen: m.gen, v: ret}, nil
}

// errorEventTable is an http-error event's data in L: code, message,
// private_message, error {code, text}, request (when there is one) and
// response {status_code, headers}, which is copied back after the hook.
func (m *Module) errorEventTable(L *lua.LState, e *httpapp.ErrorEvent) (*lua.LTable, *lua.LTable) {
	t := L.NewTable()
	t.RawSetString("code", lua.LNumber(e.Code))
	if e.Message != "" {
		t.RawSetString("message", lua.LString(e.Message))
	}
	if e.PrivateMessage != "" {
		t.RawSetString("private_message", lua.LString(e.PrivateMessage))
	}
	if e.Err != nil {
		et := L.NewTable()
		et.RawSetString("code", lua.LNumber(e.Err.Code))
		et.RawSetString("text", lua.LString(e.Err.Text))
		t.RawSetString("error", et)
	}
	if e.Request != nil {
		t.RawSetString("request", requestTable(L, e.Request))
	}
	resp := L.NewTable()
	resp.RawSetString("status_code", lua.LNumber(e.Response.StatusCode))
	resp.RawSetString("headers", stringMap(L, e.Response.Headers))
	t.RawSetString("response", resp)
	return t, resp
}
