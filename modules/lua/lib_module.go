// lib_module.go: module methods beyond the http provider:
// module:load_resource, module:add_timer.

package lua

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// addModuleAPI adds the methods of this file to the module object.
func addModuleAPI(L *lua.LState, mod *lua.LTable, m *Module) {
	mod.RawSetString("add_timer", L.NewFunction(func(L *lua.LState) int { return addTimer(L, m) }))
	// module:load_resource(path[, mode]) opens a file next to the module
	// (Prosody resolves it against the module's folder) for reading. It
	// returns a file object with read, lines and close, or nil and an
	// error. Paths leaving the modules folder, and modes other than
	// reading, are refused; a file over half the memory cap is too.
	mod.RawSetString("load_resource", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(2)
		mode := L.OptString(3, "rb")
		fail := func(msg string) int {
			L.Push(lua.LNil)
			L.Push(lua.LString(msg))
			return 2
		}
		if strings.TrimSuffix(mode, "b") != "r" {
			return fail("load_resource: only reading is allowed")
		}
		dir := filepath.Dir(m.path)
		p := filepath.Clean(filepath.Join(dir, name))
		if filepath.IsAbs(name) || (p != dir && !strings.HasPrefix(p, dir+string(filepath.Separator))) {
			return fail(name + ": outside the modules folder")
		}
		f, err := os.Open(p)
		if err != nil {
			return fail(name + ": " + err.Error())
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, m.lim.maxMem/2+1))
		if err != nil {
			return fail(name + ": " + err.Error())
		}
		if int64(len(b)) > m.lim.maxMem/2 {
			return fail(name + ": larger than half of Modules.Lua.MaxMemory")
		}
		L.Push(newFileObject(L, b))
		return 1
	}))
}

// newFileObject is a read-only Lua file over b: read("*a" | "*l" | "*n"
// | n), lines(), close(), as io's files (Lua 5.1 formats; "a" and "l"
// without "*" as 5.4 spells them).
func newFileObject(L *lua.LState, b []byte) *lua.LTable {
	r := bufio.NewReader(bytes.NewReader(b))
	closed := false
	readOne := func(L *lua.LState, f lua.LValue) lua.LValue {
		if n, ok := f.(lua.LNumber); ok {
			buf := make([]byte, int(n))
			k, _ := io.ReadFull(r, buf)
			if k == 0 && n > 0 {
				return lua.LNil
			}
			return lua.LString(buf[:k])
		}
		switch strings.TrimPrefix(lua.LVAsString(f), "*") {
		case "a":
			rest, _ := io.ReadAll(r)
			return lua.LString(rest)
		case "l", "L":
			line, err := r.ReadString('\n')
			if err != nil && line == "" {
				return lua.LNil
			}
			if strings.TrimPrefix(lua.LVAsString(f), "*") == "l" {
				line = strings.TrimSuffix(line, "\n")
			}
			return lua.LString(line)
		}
		L.ArgError(2, "invalid format")
		return lua.LNil
	}
	t := L.NewTable()
	t.RawSetString("read", L.NewFunction(func(L *lua.LState) int {
		if closed {
			L.RaiseError("attempt to use a closed file")
		}
		if L.GetTop() < 2 {
			L.Push(readOne(L, lua.LString("*l")))
			return 1
		}
		top := L.GetTop()
		for i := 2; i <= top; i++ {
			L.Push(readOne(L, L.Get(i)))
		}
		return top - 1
	}))
	t.RawSetString("lines", L.NewFunction(func(L *lua.LState) int {
		L.Push(L.NewFunction(func(L *lua.LState) int {
			L.Push(readOne(L, lua.LString("*l")))
			return 1
		}))
		return 1
	}))
	t.RawSetString("close", L.NewFunction(func(L *lua.LState) int {
		closed = true
		L.Push(lua.LTrue)
		return 1
	}))
	return t
}

// timer is one module:add_timer task.
type timer struct {
	t       *time.Timer
	stopped bool
}

// addTimer is module:add_timer(delay, callback, ...): callback(now, ...)
// runs after delay seconds in the module's state, one call at a time
// with the handlers and under the same limits; a number returned
// reschedules it that many seconds later. The returned object has stop
// (alias disarm) and reschedule(delay). Timers end with the state (a
// memory stop, an unload).
func addTimer(L *lua.LState, m *Module) int {
	delay := float64(L.CheckNumber(2))
	fn := L.CheckFunction(3)
	var args []lua.LValue
	for i := 4; i <= L.GetTop(); i++ {
		args = append(args, L.Get(i))
	}
	tm := &timer{}
	gen := m.gen
	var fire func()
	fire = func() {
		ctx, cancel := context.WithTimeout(context.Background(), m.lim.maxTime+time.Second)
		defer cancel()
		if m.lock(ctx) != nil {
			m.ctx.Log.Error("lua timer skipped: the module stayed busy")
			return
		}
		defer m.unlock()
		if tm.stopped || m.gen != gen || m.L == nil {
			return
		}
		L := m.L
		var next lua.LValue = lua.LNil
		ctx = withHeld(ctx, m)
		m.callCtx = ctx
		err := m.lim.run(ctx, L, func() error {
			L.Push(fn)
			L.Push(lua.LNumber(float64(time.Now().UnixNano()) / 1e9))
			for _, a := range args {
				L.Push(a)
			}
			if err := L.PCall(1+len(args), 1, nil); err != nil {
				return err
			}
			next = L.Get(-1)
			L.Pop(1)
			return nil
		})
		m.callCtx = nil
		if err != nil {
			m.ctx.Log.Error("lua timer failed", "err", err)
			m.recoverFrom(err)
			return
		}
		if n, ok := next.(lua.LNumber); ok && !tm.stopped {
			tm.t = time.AfterFunc(seconds(float64(n)), fire)
		}
	}
	tm.t = time.AfterFunc(seconds(delay), fire)
	m.timers = append(m.timers, tm)
	obj := L.NewTable()
	stop := L.NewFunction(func(L *lua.LState) int {
		tm.stopped = true
		tm.t.Stop()
		return 0
	})
	obj.RawSetString("stop", stop)
	obj.RawSetString("disarm", stop)
	obj.RawSetString("reschedule", L.NewFunction(func(L *lua.LState) int {
		d := float64(L.CheckNumber(2))
		tm.t.Stop()
		tm.stopped = false
		tm.t = time.AfterFunc(seconds(d), fire)
		return 0
	}))
	L.Push(obj)
	return 1
}

func seconds(s float64) time.Duration {
	if s < 0 {
		s = 0
	}
	return time.Duration(s * float64(time.Second))
}

// stopTimers ends every timer of the state; m.sem is held.
func (m *Module) stopTimers() {
	for _, tm := range m.timers {
		tm.stopped = true
		tm.t.Stop()
	}
	m.timers = nil
	m.gen++
}
