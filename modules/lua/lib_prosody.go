// lib_prosody.go: the parts of Prosody's environment that published
// prosody-modules reach for besides the module object: the prosody and
// hosts globals, lfs.attributes, util.uuid, util.id and util.datetime,
// module:get_directory and the log functions of the module and the
// request (util.jid and util.stanza are Lua code in prelude.lua).

package lua

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// addProsodyGlobals sets prosody and hosts. cairn is one process with no
// XMPP hosts: process_type is "prosody" (what 0.12 sets in the server,
// and what modules test to choose between net.http.files and the older
// http_files module), hosts is empty, and so are the session tables, so
// a module that looks a user's session up finds none (offline).
func addProsodyGlobals(L *lua.LState) {
	hosts := L.NewTable()
	p := L.NewTable()
	p.RawSetString("process_type", lua.LString("prosody"))
	p.RawSetString("hosts", hosts)
	p.RawSetString("full_sessions", L.NewTable())
	p.RawSetString("bare_sessions", L.NewTable())
	p.RawSetString("start_time", lua.LNumber(float64(time.Now().UnixNano())/1e9))
	L.SetGlobal("prosody", p)
	L.SetGlobal("hosts", hosts)
}

// addProsodyLibs adds lfs, util.uuid, util.id and util.datetime to libs.
func addProsodyLibs(L *lua.LState, libs map[string]lua.LValue) {
	libs["lfs"] = newLib(L, map[string]lua.LGFunction{"attributes": lfsAttributes})
	libs["util.uuid"] = newLib(L, map[string]lua.LGFunction{
		"generate": func(L *lua.LState) int { L.Push(lua.LString(uuid4())); return 1 },
	})
	ids := map[string]lua.LGFunction{}
	// util.id's sizes: random bytes, in unpadded URL-safe base64.
	for name, n := range map[string]int{"tiny": 3, "short": 6, "medium": 12, "long": 24} {
		ids[name] = func(L *lua.LState) int { L.Push(lua.LString(randomID(n))); return 1 }
	}
	libs["util.id"] = newLib(L, ids)
	libs["util.datetime"] = newDatetimeLib(L)
}

// lfsAttributes is LuaFileSystem's attributes(path[, name]) with the
// fields modules read: mode, size, modification, access, change and
// permissions. It reveals no more than net.http.files.serve, which
// reads any file of the node's disk a module names.
func lfsAttributes(L *lua.LState) int {
	path := L.CheckString(1)
	fi, err := os.Stat(path)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(path + ": " + strings.TrimPrefix(err.Error(), "stat "+path+": ")))
		return 2
	}
	mode := "other"
	switch {
	case fi.Mode().IsRegular():
		mode = "file"
	case fi.IsDir():
		mode = "directory"
	}
	mtime := lua.LNumber(fi.ModTime().Unix())
	attrs := map[string]lua.LValue{
		"mode": lua.LString(mode), "size": lua.LNumber(fi.Size()),
		"modification": mtime, "access": mtime, "change": mtime,
		"permissions": lua.LString(permString(fi.Mode())),
	}
	if name, ok := L.Get(2).(lua.LString); ok {
		v, known := attrs[string(name)]
		if !known {
			L.ArgError(2, "invalid attribute name '"+string(name)+"'")
		}
		L.Push(v)
		return 1
	}
	t := L.NewTable()
	for k, v := range attrs {
		t.RawSetString(k, v)
	}
	L.Push(t)
	return 1
}

// permString is lfs's "rwxr-xr-x".
func permString(m os.FileMode) string {
	return m.Perm().String()[1:]
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails on Linux (getrandom)
	return b
}

func randomID(n int) string { return base64.RawURLEncoding.EncodeToString(randomBytes(n)) }

// uuid4 is a random (version 4) UUID, as util.uuid.generate makes.
func uuid4() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// newDatetimeLib is util.datetime (XEP-0082 profiles): date, datetime,
// time and legacy format a Unix time (default now, in UTC); parse reads
// a date-time with an optional fraction and zone back into Unix time,
// or returns nil.
func newDatetimeLib(L *lua.LState) *lua.LTable {
	format := func(layout string) lua.LGFunction {
		return func(L *lua.LState) int {
			t := time.Now()
			if n, ok := L.Get(1).(lua.LNumber); ok {
				sec := float64(n)
				t = time.Unix(int64(sec), int64((sec-float64(int64(sec)))*1e9))
			}
			L.Push(lua.LString(t.UTC().Format(layout)))
			return 1
		}
	}
	return newLib(L, map[string]lua.LGFunction{
		"date":     format("2006-01-02"),
		"datetime": format("2006-01-02T15:04:05Z"),
		"time":     format("15:04:05"),
		"legacy":   format("20060102T15:04:05"),
		"parse": func(L *lua.LState) int {
			s := strings.TrimSpace(L.CheckString(1))
			for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05"} {
				if t, err := time.Parse(layout, s); err == nil {
					L.Push(lua.LNumber(float64(t.UnixNano()) / 1e9))
					return 1
				}
			}
			L.Push(lua.LNil)
			return 1
		},
	})
}

// getDirectory is module:get_directory(): the folder of the module's
// file (load_resource reads from there).
func getDirectory(m *Module) lua.LGFunction {
	return func(L *lua.LState) int {
		L.Push(lua.LString(filepath.Dir(m.path)))
		return 1
	}
}

// logFunc is a logger of Prosody's shape, log(level, format, ...): the
// message is string.format(format, ...) when arguments follow (each
// passed through tostring), and the level one of debug, info, warn
// and error. module:log, module._log and request.log are made of it;
// skip is how many leading arguments (self) come before the level, and
// attrs are added to the log line.
func logFunc(m *Module, skip int, attrs ...any) lua.LGFunction {
	return func(L *lua.LState) int {
		level := L.CheckString(skip + 1)
		msg := L.OptString(skip+2, "")
		if L.GetTop() > skip+2 {
			// Format with Lua's own string.format.
			format := L.GetGlobal("string").(*lua.LTable).RawGetString("format")
			args := []lua.LValue{lua.LString(msg)}
			for i := skip + 3; i <= L.GetTop(); i++ {
				args = append(args, L.ToStringMeta(L.Get(i)))
			}
			if err := L.CallByParam(lua.P{Fn: format, NRet: 1, Protect: true}, args...); err == nil {
				msg = L.ToString(-1)
				L.Pop(1)
			}
		}
		log := m.ctx.Log
		switch level {
		case "debug":
			log.Debug(msg, attrs...)
		case "warn", "warning":
			log.Warn(msg, attrs...)
		case "error":
			log.Error(msg, attrs...)
		default:
			log.Info(msg, attrs...)
		}
		return 0
	}
}
