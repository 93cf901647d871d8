// state.go: the sandboxed Lua state and the API modules see.

package lua

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"cairn/modules/files"
	"cairn/modules/httpapp"

	lua "github.com/yuin/gopher-lua"
)

// stateOptions are a module state's stack sizes: 200 frames, a register
// stack that grows to 256 Ki slots.
var stateOptions = lua.Options{
	SkipOpenLibs:        true,
	CallStackSize:       200,
	RegistrySize:        1024 * 4,
	RegistryMaxSize:     1024 * 256,
	RegistryGrowStep:    1024,
	IncludeGoStackTrace: false,
}

// openLibs opens base, table, string, math and coroutine, without the
// base functions that reach files or the collector.
func openLibs(L *lua.LState) {
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range []string{"dofile", "loadfile", "require", "module", "collectgarbage", "_printregs", "newproxy"} {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetGlobal("collectgarbage", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
}

// newState opens the allowed libraries and installs module, require,
// cairn and the trimmed os table.
func newState(m *Module) *lua.LState {
	L := lua.NewState(stateOptions)
	openLibs(L)
	L.SetGlobal("print", L.NewFunction(func(L *lua.LState) int {
		parts := make([]string, L.GetTop())
		for i := range parts {
			parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
		}
		m.ctx.Log.Info(strings.Join(parts, "\t"))
		return 0
	}))
	installBounded(L)
	installCompile(L)

	L.SetGlobal("os", newOSLib(L))

	httpLib := newHTTPLib(L)
	filesLib := newFilesLib(L, m)
	cairnLib := newCairnLib(L, m)
	L.SetGlobal("cairn", cairnLib)
	libs := map[string]lua.LValue{"net.http": httpLib, "util.http": httpLib, "net.http.files": filesLib, "cairn": cairnLib}
	addUtilLibs(L, libs)
	addProsodyLibs(L, libs)
	addProsodyGlobals(L)
	L.SetGlobal("require", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		lib, ok := libs[strings.TrimPrefix(name, "prosody.")]
		if !ok {
			L.RaiseError("module %q not found (this sandbox provides %s)", name, libNames(libs))
		}
		L.Push(lib)
		return 1
	}))
	mod := newModuleObject(L, m, filesLib)
	addModuleAPI(L, mod, m)
	addShared(L, mod, m)
	m.serverLib = addEvents(L, mod, m)
	libs["net.http.server"] = m.serverLib
	L.SetGlobal("module", mod)
	runPrelude(L, mod, libs)
	return L
}

// newModuleObject builds the "module" global.
func newModuleObject(L *lua.LState, m *Module, filesLib *lua.LTable) *lua.LTable {
	mod := L.NewTable()
	mod.RawSetString("name", lua.LString(m.name))
	mod.RawSetString("host", lua.LString("*"))
	set := func(name string, f lua.LGFunction) { mod.RawSetString(name, L.NewFunction(f)) }
	set("depends", func(L *lua.LState) int {
		name := L.CheckString(2)
		switch name {
		case "http":
			L.Push(L.NewTable())
			return 1
		case "http_files":
			L.Push(filesLib)
			return 1
		}
		if err := m.ctx.Depends(name); err != nil {
			L.RaiseError("depends(%q): %s", name, err.Error())
		}
		L.Push(L.NewTable())
		return 1
	})
	set("provides", func(L *lua.LState) int {
		kind := L.CheckString(2)
		if kind != "http" {
			L.RaiseError("provides(%q): only \"http\" is supported", kind)
		}
		t, ok := L.Get(3).(*lua.LTable)
		if !ok {
			// Prosody builds the item from the module's globals.
			t = L.NewTable()
			for _, k := range []string{"route", "name", "default_path"} {
				t.RawSetString(k, L.GetGlobal(k))
			}
		}
		if err := m.provide(L, t); err != nil {
			L.RaiseError("provides(\"http\"): %s", err.Error())
		}
		return 0
	})
	set("log", logFunc(m, 1))
	set("_log", logFunc(m, 0))
	set("get_directory", getDirectory(m))
	set("get_host", func(L *lua.LState) int { L.Push(lua.LString("*")); return 1 })
	// A module of host "*" is a global module in Prosody.
	set("get_host_type", func(L *lua.LState) int { L.Push(lua.LString("global")); return 1 })
	getOption := func(L *lua.LState) int {
		key := L.CheckString(2)
		if v, ok := m.ctx.Option(key); ok {
			L.Push(goToLua(L, v))
		} else {
			L.Push(L.Get(3))
		}
		return 1
	}
	set("get_option", getOption) // the typed getters are in prelude.lua
	set("http_url", func(L *lua.LState) int {
		app := L.OptString(2, httpapp.AppName(m.name))
		base := L.OptString(3, "/"+app)
		if m.ctx.URLFunc == nil {
			L.Push(lua.LString("http://disabled.invalid/"))
			return 1
		}
		L.Push(lua.LString(m.ctx.URLFunc(base)))
		return 1
	})
	return mod
}

// newHTTPLib is net.http / util.http.
func newHTTPLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	set := func(name string, f lua.LGFunction) { t.RawSetString(name, L.NewFunction(f)) }
	set("urlencode", func(L *lua.LState) int { L.Push(lua.LString(httpapp.URLEncode(L.CheckString(1)))); return 1 })
	set("urldecode", func(L *lua.LState) int { L.Push(lua.LString(httpapp.URLDecode(L.CheckString(1)))); return 1 })
	set("formdecode", func(L *lua.LState) int {
		f := httpapp.FormDecode(L.CheckString(1))
		if f.IsString {
			L.Push(lua.LString(f.String))
			return 1
		}
		out := L.NewTable()
		for _, fld := range f.Fields {
			pair := L.NewTable()
			pair.RawSetString("name", lua.LString(fld.Name))
			pair.RawSetString("value", lua.LString(fld.Value))
			out.Append(pair)
		}
		for k, v := range f.Values {
			out.RawSetString(k, lua.LString(v))
		}
		L.Push(out)
		return 1
	})
	set("formencode", func(L *lua.LState) int {
		tab := L.CheckTable(1)
		var fields []httpapp.FormField
		if tab.Len() > 0 {
			for i := 1; i <= tab.Len(); i++ {
				if p, ok := tab.RawGetInt(i).(*lua.LTable); ok {
					fields = append(fields, httpapp.FormField{Name: p.RawGetString("name").String(), Value: p.RawGetString("value").String()})
				}
			}
		} else {
			tab.ForEach(func(k, v lua.LValue) {
				fields = append(fields, httpapp.FormField{Name: k.String(), Value: v.String()})
			})
		}
		L.Push(lua.LString(httpapp.FormEncode(fields)))
		return 1
	})
	set("parse_multipart", func(L *lua.LState) int {
		parts, err := httpapp.ParseMultipart([]byte(L.CheckString(1)), L.CheckString(2), 0)
		if err != nil {
			L.Push(lua.LNil)
			L.Push(lua.LString(err.Error()))
			return 2
		}
		out := L.NewTable()
		for _, p := range parts {
			pt := L.NewTable()
			pt.RawSetString("name", lua.LString(p.Name))
			pt.RawSetString("filename", lua.LString(p.Filename))
			pt.RawSetString("content_type", lua.LString(p.ContentType))
			pt.RawSetString("body", lua.LString(p.Body))
			pt.RawSetString("headers", stringMap(L, p.Headers))
			out.Append(pt)
		}
		L.Push(out)
		return 1
	})
	return t
}

// newFilesLib is net.http.files: serve(path) or serve{path=...,
// directory_index=..., index_files={...}} returns a handler usable as a
// route value (or called with (event, path)).
func newFilesLib(L *lua.LState, m *Module) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("serve", L.NewFunction(func(L *lua.LState) int {
		o := files.Options{Node: m.ctx.Node, Events: m.ctx.HTTPEvents}
		switch a := L.Get(1).(type) {
		case lua.LString:
			o.Path = string(a)
		case *lua.LTable:
			o.Path = lua.LVAsString(a.RawGetString("path"))
			o.DirectoryIndex = lua.LVAsBool(a.RawGetString("directory_index"))
			if mm, ok := a.RawGetString("mime_map").(*lua.LTable); ok {
				o.MimeMap = map[string]string{}
				mm.ForEach(func(k, v lua.LValue) { o.MimeMap[lua.LVAsString(k)] = lua.LVAsString(v) })
			}
			if idx, ok := a.RawGetString("index_files").(*lua.LTable); ok {
				o.IndexFiles = []string{}
				for i := 1; i <= idx.Len(); i++ {
					o.IndexFiles = append(o.IndexFiles, lua.LVAsString(idx.RawGetInt(i)))
				}
			}
		}
		if o.Path == "" {
			L.ArgError(1, "serve: path is required")
		}
		if o.DirectoryIndex {
			if err := m.ctx.Depends("http_dir_listing"); err != nil {
				m.ctx.Log.Warn("directory listings unavailable", "err", err)
			}
		}
		ud := L.NewUserData()
		ud.Value = files.Serve(o)
		mt := L.NewTable()
		mt.RawSetString("__call", L.NewFunction(func(L *lua.LState) int {
			h := L.CheckUserData(1).Value.(httpapp.Handler)
			if m.ev == nil {
				L.RaiseError("serve handler called outside a request")
			}
			// Headers and status the Lua handler set before delegating
			// belong to the response (CORS, Content-Disposition, ...).
			if evt, ok := L.Get(2).(*lua.LTable); ok {
				if resp, ok := evt.RawGetString("response").(*lua.LTable); ok && !m.ev.Response.Finished() {
					syncResponse(resp, m.ev.Response)
				}
			}
			ev := *m.ev
			ev.Ctx = L.Context() // holds this state: a hook of it runs here
			if L.GetTop() >= 3 {
				ev.Arg, ev.Wildcard = L.CheckString(3), true
			}
			L.Push(resultToLua(L, h(&ev)))
			return 1
		}))
		ud.Metatable = mt
		L.Push(ud)
		return 1
	}))
	return t
}

// newCairnLib is the node API: id, cat, stat, ls, add, pin.
func newCairnLib(L *lua.LState, m *Module) *lua.LTable {
	t := L.NewTable()
	ctx := func() context.Context {
		if m.callCtx != nil {
			return m.callCtx
		}
		return context.Background()
	}
	fail := func(L *lua.LState, err error) int {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	set := func(name string, f lua.LGFunction) { t.RawSetString(name, L.NewFunction(f)) }
	set("id", func(L *lua.LState) int { L.Push(lua.LString(m.ctx.Node.ID())); return 1 })
	set("cat", func(L *lua.LState) int {
		var buf bytes.Buffer
		w := &capWriter{w: &buf, left: m.lim.maxMem / 2}
		if err := m.ctx.Node.Cat(ctx(), L.CheckString(1), w); err != nil {
			return fail(L, err)
		}
		L.Push(lua.LString(buf.String()))
		return 1
	})
	set("stat", func(L *lua.LState) int {
		e, err := m.ctx.Node.Stat(ctx(), L.CheckString(1))
		if err != nil {
			return fail(L, err)
		}
		L.Push(entryTable(L, e.Name, e.Cid, e.IsDir, e.Size))
		return 1
	})
	set("ls", func(L *lua.LState) int {
		es, err := m.ctx.Node.List(ctx(), L.CheckString(1))
		if err != nil {
			return fail(L, err)
		}
		out := L.NewTable()
		for _, e := range es {
			out.Append(entryTable(L, e.Name, e.Cid, e.IsDir, e.Size))
		}
		L.Push(out)
		return 1
	})
	set("add", func(L *lua.LState) int {
		c, err := m.ctx.Node.Add(ctx(), L.OptString(2, "file"), strings.NewReader(L.CheckString(1)))
		if err != nil {
			return fail(L, err)
		}
		L.Push(lua.LString(c))
		return 1
	})
	set("pin", func(L *lua.LState) int {
		if err := m.ctx.Node.Pin(ctx(), L.CheckString(1)); err != nil {
			return fail(L, err)
		}
		L.Push(lua.LTrue)
		return 1
	})
	return t
}

func entryTable(L *lua.LState, name, cid string, dir bool, size int64) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("name", lua.LString(name))
	t.RawSetString("cid", lua.LString(cid))
	t.RawSetString("is_dir", lua.LBool(dir))
	t.RawSetString("size", lua.LNumber(size))
	return t
}

// capWriter fails once more than left bytes are written.
type capWriter struct {
	w    io.Writer
	left int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		return 0, fmt.Errorf("cat: content larger than %d bytes", c.left)
	}
	c.left -= int64(len(p))
	return c.w.Write(p)
}
