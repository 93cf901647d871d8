// module.go: a Lua module: its state, its load, its route handlers.

package lua

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
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

	sem    chan struct{} // held by the one call running in L (see lock)
	src    []byte        // the file as read at Load; rebuilds run this, never a re-read
	L      *lua.LState
	broken bool // L was thrown away; boot again before use
	// proxies are the Lua objects of module:shared tables in L.
	proxies   map[*modapi.SharedTable]*lua.LUserData
	sharedMT  *lua.LTable
	serverLib *lua.LTable // require "net.http.server" in L
	// apps holds, per module:provides("http") call in load order, route
	// key -> function of the current L. mounted is how many of them are
	// mounted on the server; nprov counts the calls of the current boot.
	apps    []map[string]lua.LValue
	mounted int
	nprov   int
	timers  []*timer        // module:add_timer tasks of the current L
	gen     int             // bumped when L ends: its timers and hooks are dead
	callCtx context.Context // context of the call running in L
	ev      *httpapp.Event  // event of the handler running in L
}

// New returns the module of a Lua file; nothing runs before Load.
func New(name, path string) *Module {
	return &Module{name: name, path: path, sem: make(chan struct{}, 1)}
}

// lock waits for L to be free, or for ctx to end (a call that waits on
// a module that waits on it gives up at its deadline).
func (m *Module) lock(ctx context.Context) error {
	select {
	case m.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("module %s is busy: %w", m.name, ctx.Err())
	}
}

func (m *Module) unlock() { <-m.sem }

// heldKey marks, in a call's context, the modules whose state the
// calling goroutine holds: a hook of such a module runs in its state
// directly (Prosody runs nested events synchronously) instead of
// waiting for a lock that is never released.
type heldKey struct{}

type held struct {
	m    *Module
	next *held
}

func withHeld(ctx context.Context, m *Module) context.Context {
	h, _ := ctx.Value(heldKey{}).(*held)
	return context.WithValue(ctx, heldKey{}, &held{m, h})
}

func holds(ctx context.Context, m *Module) bool {
	for h, _ := ctx.Value(heldKey{}).(*held); h != nil; h = h.next {
		if h.m == m {
			return true
		}
	}
	return false
}

var _ modapi.Module = (*Module)(nil)
var _ modapi.Unloader = (*Module)(nil)
var _ modapi.UsageReporter = (*Module)(nil)

// Usage implements modapi.UsageReporter: the module's caps and what its
// calls took since Load.
func (m *Module) Usage() modapi.Usage {
	u := modapi.Usage{MaxRunTime: m.lim.maxTime, MaxMemory: m.lim.maxMem}
	if c := m.lim.use; c != nil {
		u.Calls, u.CallTime = c.calls.Load(), time.Duration(c.nanos.Load())
		u.TimeStops, u.MemStops, u.PeakMemory = c.timeStops.Load(), c.memStops.Load(), c.peak.Load()
	}
	return u
}

// Load implements modapi.Module: it runs the file, which should call
// module:provides("http", {...}).
func (m *Module) Load(ctx *modapi.Context) error {
	m.ctx = ctx
	m.lim = limits{maxTime: ctx.Settings.LuaMaxRunTime, maxMem: ctx.Settings.LuaMaxMemory, use: &usage{}}
	if m.lim.maxTime <= 0 {
		m.lim.maxTime = time.Second
	}
	if m.lim.maxMem <= 0 {
		m.lim.maxMem = 64 << 20
	}
	src, err := os.ReadFile(m.path)
	if err != nil {
		return err
	}
	m.sem <- struct{}{}
	defer m.unlock()
	m.src = src
	return m.boot()
}

// callHook calls module.<name>() when the module defines it, as Prosody
// calls module.load once the file has run and module.unload before the
// module goes; m.sem is held and the caps apply.
func (m *Module) callHook(name string) error {
	mod, ok := m.L.GetGlobal("module").(*lua.LTable)
	if !ok {
		return nil
	}
	fn, ok := mod.RawGetString(name).(*lua.LFunction)
	if !ok {
		return nil
	}
	m.L.Push(fn)
	return m.L.PCall(0, 0, keepError(m.L))
}

// Unload implements modapi.Unloader: module.unload runs first (its error
// is logged; the module goes all the same).
func (m *Module) Unload() error {
	m.sem <- struct{}{}
	defer m.unlock()
	if m.L != nil && !m.broken {
		ctx, cancel := context.WithTimeout(context.Background(), m.lim.maxTime+time.Second)
		m.callCtx = withHeld(ctx, m)
		if err := m.lim.run(m.callCtx, m.L, func() error { return m.callHook("unload") }); err != nil {
			m.ctx.Log.Warn("module.unload failed", "err", err)
		}
		m.callCtx = nil
		cancel()
	}
	m.dropState()
	m.src = nil
	return nil
}

// boot makes a fresh state and runs the module's code in it; m.sem is
// held. The code is the file as read at Load: a rebuild after a memory
// stop never picks up edits made since (restart the daemon for those).
func (m *Module) boot() error {
	m.dropState()
	m.L = newState(m)
	m.broken = false
	m.nprov = 0
	// The chunk is named by its path, so errors read "path:line: msg"
	// as Lua words those of a file.
	fn, err := compile(m.L, string(m.src), m.path)
	if err != nil {
		m.dropState()
		return syntaxError(m.path, m.src, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.lim.maxTime+time.Second)
	defer cancel()
	ctx = withHeld(ctx, m)
	m.callCtx = ctx
	err = m.lim.run(ctx, m.L, func() error {
		m.L.Push(fn)
		if err := m.L.PCall(0, 0, keepError(m.L)); err != nil {
			return err
		}
		return m.callHook("load")
	})
	m.callCtx = nil
	if err != nil {
		// A state whose code failed half-way holds whatever it made:
		// drop it; the next request tries again from the same code.
		m.dropState()
		if errors.Is(err, ErrMemoryLimit) {
			debug.FreeOSMemory()
		}
		if _, ok := err.(*lua.ApiError); ok {
			return err // a Lua error names the file and line already
		}
		return fmt.Errorf("loading %s: %w", m.path, err)
	}
	return nil
}

// recoverFrom follows a failed call (m.sem held). After a memory stop
// it discards L, so its garbage goes, hands the freed pages back to the
// OS (a capped state can have grown the heap by up to twice MaxMemory,
// which would otherwise stay in the process's RSS), and runs the
// module's code again in a fresh state at once, so that its routes,
// hooks and timers are back.
func (m *Module) recoverFrom(err error) {
	if !errors.Is(err, ErrMemoryLimit) || m.L == nil {
		return
	}
	m.dropState()
	debug.FreeOSMemory()
	if err := m.boot(); err != nil {
		m.ctx.Log.Error("rebuilding the state after a memory stop failed; the next request tries again", "err", err)
	}
}

// dropState closes L and forgets every value of it: the route
// functions, the hooks, the timers, the shared-table objects. Nothing
// keeps the old state reachable.
func (m *Module) dropState() {
	m.stopTimers()
	m.unhookAll()
	m.proxies, m.sharedMT, m.serverLib = nil, nil, nil
	for i := range m.apps {
		m.apps[i] = nil
	}
	if m.L != nil {
		m.L.Close()
		m.L = nil
	}
	m.broken = true
}

// provide is module:provides("http", t).
func (m *Module) provide(L *lua.LState, t *lua.LTable) error {
	routes, ok := t.RawGetString("route").(*lua.LTable)
	if !ok {
		return errors.New(`http provider has no "route" table`)
	}
	idx := m.nprov
	m.nprov++
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
			app.Routes[string(key)] = m.handler(idx, string(key))
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
	if idx < m.mounted {
		// A rebuild after a memory stop: the same code provides the same
		// routes again; only the functions are new.
		m.apps[idx] = handlers
		return nil
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
	m.apps = append(m.apps, handlers)
	m.mounted++
	return nil
}

// handler is the Go side of the Lua route key.
func (m *Module) handler(app int, key string) httpapp.Handler {
	return func(ev *httpapp.Event) any {
		if err := m.lock(ev.Ctx); err != nil {
			return err
		}
		defer m.unlock()
		if m.src == nil {
			return nil // unloaded while the request was on its way
		}
		if m.broken || m.L == nil {
			if err := m.boot(); err != nil {
				return fmt.Errorf("module %s: rebuilding the state: %w", m.name, err)
			}
		}
		fn, ok := m.apps[app][key]
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
	ctx := withHeld(ev.Ctx, m)
	m.callCtx, m.ev = ctx, ev
	err := m.lim.run(ctx, L, func() error {
		L.Push(fn)
		L.Push(evt)
		nargs := 1
		if ev.Wildcard {
			L.Push(lua.LString(ev.Arg))
			nargs = 2
		}
		if err := L.PCall(nargs, 1, keepError(L)); err != nil {
			return err
		}
		ret = L.Get(-1)
		L.Pop(1)
		return nil
	})
	m.callCtx, m.ev = nil, nil
	if err != nil {
		m.ctx.Log.Error("lua handler failed", "path", ev.Request.Path, "err", err)
		m.recoverFrom(err)
		return fmt.Errorf("module %s: %w", m.name, err)
	}
	if !ev.Response.Finished() {
		syncResponse(resp, ev.Response)
	}
	return result(ret)
}
