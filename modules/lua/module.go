// module.go: a Lua module: its state, its load, its route handlers.

package lua

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"cairn/modules/httpapp"
	"cairn/modules/modapi"

	lua "github.com/yuin/gopher-lua"
)

// Module is a mod_<name>.lua file.
type Module struct {
	name, path string
	ctx        *modapi.Context
	lim        limits

	mu       sync.Mutex // one call at a time in L
	L        *lua.LState
	broken   bool                  // L was thrown away; boot again before use
	provided bool                  // the http app is mounted
	handlers map[string]lua.LValue // route key -> function of the current L
	callCtx  context.Context       // context of the call running in L
	ev       *httpapp.Event        // event of the handler running in L
}

// New returns the module of a Lua file; nothing runs before Load.
func New(name, path string) *Module {
	return &Module{name: name, path: path}
}

var _ modapi.Module = (*Module)(nil)
var _ modapi.Unloader = (*Module)(nil)

// Load implements modapi.Module: it runs the file, which should call
// module:provides("http", {...}).
func (m *Module) Load(ctx *modapi.Context) error {
	m.ctx = ctx
	m.lim = limits{maxTime: ctx.Settings.LuaMaxRunTime, maxMem: ctx.Settings.LuaMaxMemory}
	if m.lim.maxTime <= 0 {
		m.lim.maxTime = time.Second
	}
	if m.lim.maxMem <= 0 {
		m.lim.maxMem = 64 << 20
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.boot()
}

// Unload implements modapi.Unloader.
func (m *Module) Unload() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.L != nil {
		m.L.Close()
		m.L = nil
	}
	return nil
}

// boot makes a fresh state and runs the file in it; m.mu is held.
func (m *Module) boot() error {
	src, err := os.ReadFile(m.path)
	if err != nil {
		return err
	}
	if m.L != nil {
		m.L.Close()
	}
	m.L = newState(m)
	m.broken = false
	fn, err := m.L.Load(bytesReader(src), "@"+m.path)
	if err != nil {
		return fmt.Errorf("%s: %w", m.path, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.lim.maxTime+time.Second)
	defer cancel()
	m.callCtx = ctx
	err = m.lim.run(ctx, m.L, func() error {
		m.L.Push(fn)
		return m.L.PCall(0, 0, nil)
	})
	m.callCtx = nil
	if err != nil {
		m.throwAway(err)
		return fmt.Errorf("loading %s: %w", m.path, err)
	}
	return nil
}

// throwAway discards L after a memory stop, so its garbage goes.
func (m *Module) throwAway(err error) {
	if errors.Is(err, ErrMemoryLimit) && m.L != nil {
		m.L.Close()
		m.L = nil
		m.broken = true
	}
}

// provide is module:provides("http", t).
func (m *Module) provide(L *lua.LState, t *lua.LTable) error {
	routes, ok := t.RawGetString("route").(*lua.LTable)
	if !ok {
		return errors.New(`http provider has no "route" table`)
	}
	handlers := map[string]lua.LValue{}
	app := &httpapp.App{Routes: map[string]any{}}
	var convErr error
	routes.ForEach(func(k, v lua.LValue) {
		key, ok := k.(lua.LString)
		if !ok {
			convErr = fmt.Errorf("route key %v is not a string", k)
			return
		}
		switch v := v.(type) {
		case *lua.LFunction:
			handlers[string(key)] = v
			app.Routes[string(key)] = m.handler(string(key))
		case *lua.LUserData:
			if h, ok := v.Value.(httpapp.Handler); ok {
				app.Routes[string(key)] = h
				return
			}
			convErr = fmt.Errorf("route %q: unsupported handler", key)
		default:
			app.Routes[string(key)] = constValue(v)
		}
	})
	if convErr != nil {
		return convErr
	}
	m.handlers = handlers
	if m.provided {
		return nil // a reload after a memory stop: same routes, new functions
	}
	if s, ok := t.RawGetString("name").(lua.LString); ok {
		app.Name = string(s)
	}
	if s, ok := t.RawGetString("default_path").(lua.LString); ok {
		app.DefaultPath = string(s)
	}
	if _, err := m.ctx.Provide(app); err != nil {
		return err
	}
	m.provided = true
	return nil
}

// handler is the Go side of the Lua route key.
func (m *Module) handler(key string) httpapp.Handler {
	return func(ev *httpapp.Event) any {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.broken || m.L == nil {
			if err := m.boot(); err != nil {
				return fmt.Errorf("module %s: reload: %w", m.name, err)
			}
		}
		fn, ok := m.handlers[key]
		if !ok {
			return nil
		}
		return m.call(ev, fn)
	}
}

// call runs one handler under the limits and converts its result.
func (m *Module) call(ev *httpapp.Event, fn lua.LValue) any {
	L := m.L
	evt, resp := m.eventTable(ev)
	var ret lua.LValue = lua.LNil
	m.callCtx, m.ev = ev.Ctx, ev
	err := m.lim.run(ev.Ctx, L, func() error {
		L.Push(fn)
		L.Push(evt)
		nargs := 1
		if ev.Wildcard {
			L.Push(lua.LString(ev.Arg))
			nargs = 2
		}
		if err := L.PCall(nargs, 1, nil); err != nil {
			return err
		}
		ret = L.Get(-1)
		L.Pop(1)
		return nil
	})
	m.callCtx, m.ev = nil, nil
	if err != nil {
		m.throwAway(err)
		m.ctx.Log.Error("lua handler failed", "path", ev.Request.Path, "err", err)
		return fmt.Errorf("module %s: %w", m.name, err)
	}
	if !ev.Response.Finished() {
		syncResponse(resp, ev.Response)
	}
	return result(ret)
}
