// lib_util.go: the util.* libraries a ported Prosody module uses:
// util.json, util.encodings, util.hashes, util.set (the last one, with
// the typed option getters, is Lua code in prelude.lua).

package lua

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"cairn/modules/httpapp"
	"cairn/modules/lua/luaparse"

	lua "github.com/yuin/gopher-lua"
)

//go:embed prelude.lua
var preludeSrc string

var (
	preludeOnce  sync.Once
	preludeProto *lua.FunctionProto
	preludeErr   error
)

// runPrelude runs prelude.lua (compiled once per process) with the
// module object and the tables it fills: util.set, util.jid, util.stanza,
// util.json and util.timer.
func runPrelude(L *lua.LState, mod *lua.LTable, libs map[string]lua.LValue) {
	preludeOnce.Do(func() {
		chunk, err := luaparse.Parse(strings.NewReader(preludeSrc), "prelude.lua")
		if err != nil {
			preludeErr = err
			return
		}
		preludeProto, preludeErr = lua.Compile(chunk, "prelude.lua")
	})
	if preludeErr != nil {
		panic(fmt.Sprintf("lua prelude: %v", preludeErr)) // a bug in prelude.lua, caught by every test
	}
	L.Push(L.NewFunctionFromProto(preludeProto))
	L.Push(mod)
	names := []string{"util.set", "util.jid", "util.stanza", "util.json", "util.timer"}
	for _, name := range names {
		L.Push(libs[name])
	}
	L.Call(1+len(names), 0)
}

func libNames(libs map[string]lua.LValue) string {
	names := make([]string, 0, len(libs))
	for n := range libs {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// addUtilLibs adds util.json, util.encodings, util.hashes and util.set
// (filled by the prelude) to libs.
func addUtilLibs(L *lua.LState, libs map[string]lua.LValue) {
	libs["util.json"] = newJSONLib(L)
	libs["util.encodings"] = newEncodingsLib(L)
	libs["util.hashes"] = newHashesLib(L)
	libs["util.set"] = L.NewTable()
	libs["util.jid"] = L.NewTable()
	libs["util.stanza"] = L.NewTable()
	libs["util.timer"] = L.NewTable()
}

func newLib(L *lua.LState, fns map[string]lua.LGFunction) *lua.LTable {
	t := L.NewTable()
	for name, f := range fns {
		t.RawSetString(name, L.NewFunction(f))
	}
	return t
}

// --- util.json -------------------------------------------------------

// maxJSONDepth bounds nesting both ways (and catches cyclic tables).
const maxJSONDepth = 200

func newJSONLib(L *lua.LState) *lua.LTable {
	null := L.NewUserData()
	nullMT := L.NewTable()
	nullMT.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("null")); return 1 }))
	null.Metatable = nullMT
	t := newLib(L, map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			var b bytes.Buffer
			if err := encodeJSON(&b, L.CheckAny(1), null, 0); err != nil {
				L.Push(lua.LNil)
				L.Push(lua.LString(err.Error()))
				return 2
			}
			L.Push(lua.LString(b.String()))
			return 1
		},
		"decode": func(L *lua.LState) int {
			d := json.NewDecoder(strings.NewReader(L.CheckString(1)))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				L.Push(lua.LNil)
				L.Push(lua.LString("json: " + err.Error()))
				return 2
			}
			if d.More() {
				L.Push(lua.LNil)
				L.Push(lua.LString("json: trailing data after the value"))
				return 2
			}
			L.Push(jsonToLua(L, v, null))
			return 1
		},
	})
	t.RawSetString("null", null)
	return t
}

// encodeJSON writes v as util.json does: a non-empty table whose keys
// are exactly 1..n is an array, any other table an object (string keys;
// number keys written as strings); object keys are sorted.
func encodeJSON(b *bytes.Buffer, v lua.LValue, null *lua.LUserData, depth int) error {
	if depth > maxJSONDepth {
		return errors.New("json: tables nested too deep (or a table contains itself)")
	}
	switch v := v.(type) {
	case *lua.LNilType:
		b.WriteString("null")
	case lua.LBool:
		b.WriteString(strconv.FormatBool(bool(v)))
	case lua.LNumber:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("json: cannot encode %v", f)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			b.WriteString(strconv.FormatInt(int64(f), 10))
		} else {
			b.WriteString(strconv.FormatFloat(f, 'g', 14, 64))
		}
	case lua.LString:
		enc, _ := json.Marshal(string(v))
		b.Write(enc)
	case *lua.LUserData:
		if v != null {
			return errors.New("json: cannot encode a userdata")
		}
		b.WriteString("null")
	case *lua.LTable:
		n := v.Len()
		keys, onlySeq := 0, true
		v.ForEach(func(k, _ lua.LValue) {
			keys++
			if kn, ok := k.(lua.LNumber); !ok || float64(kn) != math.Trunc(float64(kn)) || kn < 1 || int(kn) > n {
				onlySeq = false
			}
		})
		if keys > 0 && onlySeq && keys == n {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				if err := encodeJSON(b, v.RawGetInt(i), null, depth+1); err != nil {
					return err
				}
			}
			b.WriteByte(']')
			return nil
		}
		type kv struct {
			k string
			v lua.LValue
		}
		var fields []kv
		v.ForEach(func(k, val lua.LValue) {
			switch k.(type) {
			case lua.LString, lua.LNumber:
				switch val.(type) {
				case *lua.LFunction, *lua.LState:
					return // not data (util.json skips them too)
				}
				fields = append(fields, kv{lua.LVAsString(k), val})
			}
		})
		sort.Slice(fields, func(i, j int) bool { return fields[i].k < fields[j].k })
		b.WriteByte('{')
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(',')
			}
			enc, _ := json.Marshal(f.k)
			b.Write(enc)
			b.WriteByte(':')
			if err := encodeJSON(b, f.v, null, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("json: cannot encode a %s", v.Type())
	}
	return nil
}

func jsonToLua(L *lua.LState, v any, null *lua.LUserData) lua.LValue {
	switch v := v.(type) {
	case nil:
		return null
	case bool:
		return lua.LBool(v)
	case json.Number:
		f, _ := v.Float64()
		return lua.LNumber(f)
	case string:
		return lua.LString(v)
	case []any:
		t := L.CreateTable(len(v), 0)
		for _, e := range v {
			t.Append(jsonToLua(L, e, null))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(v))
		for k, e := range v {
			t.RawSetString(k, jsonToLua(L, e, null))
		}
		return t
	}
	return lua.LNil
}

// --- util.encodings --------------------------------------------------

func newEncodingsLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("base64", newLib(L, map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			L.Push(lua.LString(base64.StdEncoding.EncodeToString([]byte(L.CheckString(1)))))
			return 1
		},
		// decode skips characters outside the alphabet (line breaks in
		// a long literal), as Prosody's C decoder does.
		"decode": func(L *lua.LState) int {
			s := L.CheckString(1)
			clean := make([]byte, 0, len(s))
			for i := 0; i < len(s); i++ {
				c := s[i]
				if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' {
					clean = append(clean, c)
				}
			}
			if len(clean)%4 == 1 {
				clean = clean[:len(clean)-1] // a lone sextet carries no byte
			}
			out, err := base64.RawStdEncoding.DecodeString(string(clean))
			if err != nil {
				L.Push(lua.LNil)
				L.Push(lua.LString(err.Error()))
				return 2
			}
			L.Push(lua.LString(out))
			return 1
		},
	}))
	t.RawSetString("url", newLib(L, map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int { L.Push(lua.LString(httpapp.URLEncode(L.CheckString(1)))); return 1 },
		"decode": func(L *lua.LState) int { L.Push(lua.LString(httpapp.URLDecode(L.CheckString(1)))); return 1 },
	}))
	t.RawSetString("stringprep", newLib(L, map[string]lua.LGFunction{
		"nodeprep":     stringprep(true, true),
		"nameprep":     stringprep(true, false),
		"resourceprep": stringprep(false, false),
		"saslprep":     stringprep(false, false),
	}))
	t.RawSetString("utf8", newLib(L, map[string]lua.LGFunction{
		"valid": func(L *lua.LState) int { L.Push(lua.LBool(utf8.ValidString(L.CheckString(1)))); return 1 },
		"length": func(L *lua.LState) int {
			s := L.CheckString(1)
			if !utf8.ValidString(s) {
				L.Push(lua.LNil)
				return 1
			}
			L.Push(lua.LNumber(utf8.RuneCountInString(s)))
			return 1
		},
	}))
	return t
}

// stringprep is one profile of util.encodings.stringprep, for what
// modules pass it (user names, host names, passwords): the string, case
// folded when fold is set, or nil when it is not UTF-8, holds a control
// character, or (node) one of the characters a JID's node part cannot
// hold. Unlike libidn it does not apply NFKC normalisation or the RFC
// 3454 mapping tables beyond lower case.
func stringprep(fold, node bool) lua.LGFunction {
	return func(L *lua.LState) int {
		s := L.CheckString(1)
		bad := !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl)
		if node && strings.ContainsAny(s, " \"&'/:<>@") {
			bad = true
		}
		if bad {
			L.Push(lua.LNil)
			return 1
		}
		if fold {
			s = strings.ToLower(s)
		}
		L.Push(lua.LString(s))
		return 1
	}
}

// --- util.hashes -----------------------------------------------------

func newHashesLib(L *lua.LState) *lua.LTable {
	fns := map[string]lua.LGFunction{}
	out := func(L *lua.LState, sum []byte, hexArg int) int {
		if L.ToBool(hexArg) {
			L.Push(lua.LString(hex.EncodeToString(sum)))
		} else {
			L.Push(lua.LString(sum))
		}
		return 1
	}
	for name, h := range map[string]func() hash.Hash{"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224,
		"sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New} {
		fns[name] = func(L *lua.LState) int {
			d := h()
			d.Write([]byte(L.CheckString(1)))
			return out(L, d.Sum(nil), 2)
		}
		fns["hmac_"+name] = func(L *lua.LState) int {
			d := hmac.New(h, []byte(L.CheckString(1)))
			d.Write([]byte(L.CheckString(2)))
			return out(L, d.Sum(nil), 3)
		}
	}
	fns["equals"] = func(L *lua.LState) int {
		L.Push(lua.LBool(subtle.ConstantTimeCompare([]byte(L.CheckString(1)), []byte(L.CheckString(2))) == 1))
		return 1
	}
	return newLib(L, fns)
}
