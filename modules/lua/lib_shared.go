// lib_shared.go: module:shared, and copying Lua values between module
// states (shared tables, event data).

package lua

import (
	"fmt"
	"strings"

	"cairn/modules/modapi"

	lua "github.com/yuin/gopher-lua"
)

// sharedPath resolves a module:shared path as Prosody does: an absolute
// path is taken as it is; a relative one gets the missing leading
// components of /<host>/<module>/ ("x" is /*/<module>/x, "other/x" is
// /*/other/x; cairn's host is "*").
func sharedPath(module, path string) string {
	if strings.HasPrefix(path, "/") {
		return path
	}
	defaults := []string{"*", module}
	n := strings.Count(path, "/")
	if n >= len(defaults) {
		return "/" + path
	}
	return "/" + strings.Join(defaults[:len(defaults)-n], "/") + "/" + path
}

// addShared adds module:shared(path). The table it returns lives in the
// host (modapi.Shared), so every module sees the same one and it
// survives this module's state; in Lua it is a userdata that indexes,
// assigns, counts (#) and iterates (pairs, ipairs, next) like a table.
// Assigning a Lua table copies it in; a function, a coroutine or a
// userdata other than a shared table cannot be stored.
func addShared(L *lua.LState, mod *lua.LTable, m *Module) {
	addSharedTableLib(L, m)
	mod.RawSetString("shared", L.NewFunction(func(L *lua.LState) int {
		path := sharedPath(m.name, L.CheckString(2))
		L.Push(m.sharedProxy(L, m.ctx.Shared.Table(path)))
		return 1
	}))
	// pairs, ipairs and next see shared tables (Lua 5.1 has no __pairs).
	for _, name := range []string{"pairs", "ipairs", "next"} {
		orig := L.GetGlobal(name).(*lua.LFunction)
		name := name
		L.SetGlobal(name, L.NewFunction(func(L *lua.LState) int {
			t, ok := m.sharedOf(L.Get(1))
			if !ok { // the base library's, on the same arguments
				L.Insert(orig, 1)
				L.Call(L.GetTop()-1, lua.MultRet)
				return L.GetTop()
			}
			switch name {
			case "pairs":
				keys := m.ctx.Shared.Keys(t)
				i := 0
				L.Push(L.NewFunction(func(L *lua.LState) int {
					for i < len(keys) {
						k := keys[i]
						i++
						if v := m.ctx.Shared.Get(t, k); v != nil { // not removed meanwhile
							L.Push(goScalar(k))
							L.Push(m.fromShared(L, v))
							return 2
						}
					}
					L.Push(lua.LNil)
					return 1
				}))
				L.Push(L.Get(1))
				L.Push(lua.LNil)
				return 3
			case "ipairs":
				L.Push(L.NewFunction(func(L *lua.LState) int {
					i := float64(L.CheckNumber(2)) + 1
					v := m.ctx.Shared.Get(t, i)
					if v == nil {
						L.Push(lua.LNil)
						return 1
					}
					L.Push(lua.LNumber(i))
					L.Push(m.fromShared(L, v))
					return 2
				}))
				L.Push(L.Get(1))
				L.Push(lua.LNumber(0))
				return 3
			}
			// next(t, k): the key after k in Keys' order.
			keys := m.ctx.Shared.Keys(t)
			start := 0
			if k := L.Get(2); k != lua.LNil {
				start = -1
				gk := sharedKey(k)
				for i, x := range keys {
					if x == gk {
						start = i + 1
						break
					}
				}
				if start < 0 {
					L.RaiseError("invalid key to 'next'")
				}
			}
			if start >= len(keys) {
				L.Push(lua.LNil)
				return 1
			}
			L.Push(goScalar(keys[start]))
			L.Push(m.fromShared(L, m.ctx.Shared.Get(t, keys[start])))
			return 2
		}))
	}
}

// addSharedTableLib makes table.insert and table.remove work on shared
// tables as Lua 5.3's do on a table with __index, __newindex and __len
// (Prosody's shared tables are plain tables, and modules keep lists in
// them); on anything else they are the table library's.
func addSharedTableLib(L *lua.LState, m *Module) {
	tab := L.GetGlobal("table").(*lua.LTable)
	for _, name := range []string{"insert", "remove"} {
		orig := tab.RawGetString(name).(*lua.LFunction)
		name := name
		tab.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			t, ok := m.sharedOf(L.Get(1))
			if !ok {
				L.Insert(orig, 1)
				L.Call(L.GetTop()-1, lua.MultRet)
				return L.GetTop()
			}
			if name == "insert" {
				return m.sharedInsert(L, t)
			}
			return m.sharedRemove(L, t)
		}))
	}
}

// sharedInsert is table.insert(t, [pos,] v) on a shared table.
func (m *Module) sharedInsert(L *lua.LState, t *modapi.SharedTable) int {
	sh := m.ctx.Shared
	n := sh.Len(t)
	pos, val := n+1, L.Get(2)
	switch L.GetTop() {
	case 2:
	case 3:
		pos, val = L.CheckInt(2), L.Get(3)
		if pos < 1 || pos > n+1 {
			L.ArgError(2, "position out of bounds")
		}
	default:
		L.RaiseError("wrong number of arguments to 'insert'")
	}
	v, err := m.toShared(val, true)
	for i := n; err == nil && i >= pos; i-- {
		err = sh.Set(t, float64(i+1), sh.Get(t, float64(i)))
	}
	if err == nil {
		err = sh.Set(t, float64(pos), v)
	}
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	return 0
}

// sharedRemove is table.remove(t[, pos]) on a shared table.
func (m *Module) sharedRemove(L *lua.LState, t *modapi.SharedTable) int {
	sh := m.ctx.Shared
	n := sh.Len(t)
	pos := L.OptInt(2, n)
	if n == 0 && L.GetTop() < 2 {
		return 0
	}
	if pos < 1 || pos > n+1 {
		L.ArgError(2, "position out of bounds")
	}
	L.Push(m.fromShared(L, sh.Get(t, float64(pos))))
	var err error
	for i := pos; err == nil && i < n; i++ {
		err = sh.Set(t, float64(i), sh.Get(t, float64(i+1)))
	}
	if err == nil && pos <= n {
		err = sh.Set(t, float64(n), nil)
	}
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	return 1
}

// sharedProxy is the one Lua object of t in this state.
func (m *Module) sharedProxy(L *lua.LState, t *modapi.SharedTable) *lua.LUserData {
	if ud, ok := m.proxies[t]; ok {
		return ud
	}
	if m.proxies == nil {
		m.proxies = map[*modapi.SharedTable]*lua.LUserData{}
	}
	if m.sharedMT == nil {
		m.sharedMT = m.newSharedMT(L)
	}
	ud := L.NewUserData()
	ud.Value = t
	ud.Metatable = m.sharedMT
	m.proxies[t] = ud
	return ud
}

func (m *Module) sharedOf(v lua.LValue) (*modapi.SharedTable, bool) {
	ud, ok := v.(*lua.LUserData)
	if !ok || ud.Metatable != m.sharedMT || m.sharedMT == nil {
		return nil, false
	}
	t, ok := ud.Value.(*modapi.SharedTable)
	return t, ok
}

func (m *Module) newSharedMT(L *lua.LState) *lua.LTable {
	mt := L.NewTable()
	self := func(L *lua.LState) *modapi.SharedTable {
		t, ok := m.sharedOf(L.Get(1))
		if !ok {
			L.ArgError(1, "shared table expected")
		}
		return t
	}
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		t := self(L)
		L.Push(m.fromShared(L, m.ctx.Shared.Get(t, sharedKey(L.Get(2)))))
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		t := self(L)
		v, err := m.toShared(L.Get(3), true)
		if err == nil {
			err = m.ctx.Shared.Set(t, sharedKey(L.Get(2)), v)
		}
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		return 0
	}))
	mt.RawSetString("__len", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(m.ctx.Shared.Len(self(L))))
		return 1
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(fmt.Sprintf("shared table: %p", self(L))))
		return 1
	}))
	mt.RawSetString("__metatable", lua.LString("shared table"))
	return mt
}

// sharedKey is a Lua key as a shared-table key (Set checks it).
func sharedKey(k lua.LValue) any {
	switch k := k.(type) {
	case lua.LString:
		return string(k)
	case lua.LNumber:
		return float64(k)
	case lua.LBool:
		return bool(k)
	case *lua.LNilType:
		return nil
	}
	return k
}

func goScalar(v any) lua.LValue {
	switch v := v.(type) {
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case bool:
		return lua.LBool(v)
	}
	return lua.LNil
}

// fromShared is a stored value in this state: a scalar, or the proxy of
// a table.
func (m *Module) fromShared(L *lua.LState, v any) lua.LValue {
	if t, ok := v.(*modapi.SharedTable); ok {
		return m.sharedProxy(L, t)
	}
	return goScalar(v)
}

// maxCopyDepth bounds the nesting of a copied table.
const maxCopyDepth = 64

// toShared copies v out of the state: scalars as Go values, a table as
// a new SharedTable (a table met twice, or a cycle, is copied once), a
// shared table as itself. With strict, a function, coroutine or other
// userdata is an error; without (event data), it is left out.
func (m *Module) toShared(v lua.LValue, strict bool) (any, error) {
	c, _, err := m.copyOut(v, strict)
	return c, err
}

// copyOut is toShared that also returns the tables it made (the others
// in the copy are stored shared tables).
func (m *Module) copyOut(v lua.LValue, strict bool) (any, map[*modapi.SharedTable]bool, error) {
	seen := map[*lua.LTable]*modapi.SharedTable{}
	fresh := map[*modapi.SharedTable]bool{}
	var conv func(v lua.LValue, depth int) (any, error)
	conv = func(v lua.LValue, depth int) (any, error) {
		switch v := v.(type) {
		case *lua.LNilType:
			return nil, nil
		case lua.LBool:
			return bool(v), nil
		case lua.LNumber:
			return float64(v), nil
		case lua.LString:
			return string(v), nil
		case *lua.LUserData:
			if t, ok := m.sharedOf(v); ok {
				return t, nil
			}
		case *lua.LTable:
			if t, ok := seen[v]; ok {
				return t, nil
			}
			if depth > maxCopyDepth {
				return nil, fmt.Errorf("module:shared: table nested deeper than %d", maxCopyDepth)
			}
			t := modapi.NewSharedTable()
			seen[v] = t
			fresh[t] = true
			var err error
			v.ForEach(func(k, e lua.LValue) {
				if err != nil {
					return
				}
				gk := sharedKey(k)
				switch gk.(type) {
				case string, float64, bool:
				default:
					if strict {
						err = fmt.Errorf("module:shared: a %s cannot be a key", k.Type())
					}
					return
				}
				var ge any
				if ge, err = conv(e, depth+1); err == nil {
					t.RawSet(gk, ge)
				}
			})
			return t, err
		}
		if strict {
			return nil, fmt.Errorf("module:shared: cannot store a %s (only strings, numbers, booleans and tables cross module states)", v.Type())
		}
		return nil, nil
	}
	c, err := conv(v, 0)
	return c, fresh, err
}

// importCopy makes plain Lua tables of the fresh tables of a copy that
// copyOut made in another state (event data, hook answers); a stored
// shared table in it becomes that table's object in this state.
func (m *Module) importCopy(L *lua.LState, v any, fresh map[*modapi.SharedTable]bool) lua.LValue {
	seen := map[*modapi.SharedTable]*lua.LTable{}
	var conv func(v any) lua.LValue
	conv = func(v any) lua.LValue {
		t, ok := v.(*modapi.SharedTable)
		if !ok {
			return goScalar(v)
		}
		if !fresh[t] {
			return m.sharedProxy(L, t)
		}
		if lt, ok := seen[t]; ok {
			return lt
		}
		lt := L.NewTable()
		seen[t] = lt
		for _, k := range t.RawKeys() {
			lt.RawSet(goScalar(k), conv(t.RawGet(k)))
		}
		return lt
	}
	return conv(v)
}
