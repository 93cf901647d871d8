// bounded.go: the string and table builtins that allocate or loop in Go,
// replaced by versions that stay within the call's caps. The time cap is
// seen by gopher-lua only between Lua instructions, and the memory cap by
// a heap sampler every few milliseconds: a single builtin call (a gsub
// with a large result, a backtracking pattern, a table.concat of large
// strings, a format width of a billion) could run for minutes or allocate
// gigabytes between two looks. Each one here checks the size of what it
// is about to build against the memory budget (meter.reserve) before
// allocating it, and counts its work against the time cap (meter.step).

package lua

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// installBounded replaces the unbounded builtins of L's string and table
// libraries, and pcall (see boundedPCall).
func installBounded(L *lua.LState) {
	str := L.GetGlobal("string").(*lua.LTable)
	for name, fn := range map[string]lua.LGFunction{
		"rep": strRep, "find": strFind, "match": strMatch, "gmatch": strGmatch, "gfind": strGmatch,
		"gsub": strGsub, "format": strFormat,
		"upper":   sameSize("string.upper", strings.ToUpper),
		"lower":   sameSize("string.lower", strings.ToLower),
		"reverse": sameSize("string.reverse", reverse),
	} {
		str.RawSetString(name, L.NewFunction(fn))
	}
	tab := L.GetGlobal("table").(*lua.LTable)
	tab.RawSetString("concat", L.NewFunction(tabConcat))
	L.SetGlobal("pcall", L.NewFunction(boundedPCall))
}

// builder is a string being built within the call's memory budget.
type builder struct {
	L    *lua.LState
	m    *meter
	what string
	b    strings.Builder
}

func newBuilder(L *lua.LState, what string) *builder {
	return &builder{L: L, m: meterOf(L), what: what}
}

// grow reserves room for n more bytes, checking the budget whenever the
// buffer would have to grow.
func (b *builder) grow(n int) {
	if b.b.Len()+n > b.b.Cap() {
		b.m.reserve(b.L, int64(2*b.b.Cap()+n), b.what)
		b.b.Grow(b.b.Cap() + n)
	}
}

func (b *builder) add(s string) {
	b.grow(len(s))
	b.b.WriteString(s)
}

func (b *builder) addByte(c byte) {
	b.grow(1)
	b.b.WriteByte(c)
}

func (b *builder) String() string { return b.b.String() }

func reverse(s string) string {
	out := make([]byte, len(s))
	for i := range s {
		out[len(s)-1-i] = s[i]
	}
	return string(out)
}

// sameSize wraps a builtin whose result is as large as its argument.
func sameSize(what string, f func(string) string) lua.LGFunction {
	return func(L *lua.LState) int {
		s := L.CheckString(1)
		meterOf(L).reserve(L, int64(len(s)), what)
		L.Push(lua.LString(f(s)))
		return 1
	}
}

// strRep is string.rep(s, n[, sep]).
func strRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	sep := L.OptString(3, "")
	if n <= 0 || len(s)+len(sep) == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	m := meterOf(L)
	unit := int64(len(s) + len(sep))
	if int64(n) > m.maxMem/unit+1 {
		m.reserve(L, m.maxMem+1, "string.rep")
	}
	m.reserve(L, unit*int64(n), "string.rep")
	if sep == "" {
		L.Push(lua.LString(strings.Repeat(s, n)))
		return 1
	}
	var b strings.Builder
	b.Grow(int(unit) * n)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s)
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// startIndex turns a Lua init argument into a byte offset (Lua 5.1).
func startIndex(L *lua.LState, n int, l int) int {
	i := L.OptInt(n, 1)
	if i < 0 {
		i = l + i + 1
	}
	i--
	if i < 0 {
		i = 0
	} else if i > l {
		i = l
	}
	return i
}

// strFind is string.find(s, pattern[, init[, plain]]).
func strFind(L *lua.LState) int {
	s, p := L.CheckString(1), L.CheckString(2)
	init := startIndex(L, 3, len(s))
	if lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(p, patSpecials) {
		i := strings.Index(s[init:], p)
		if i < 0 {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(init + i + 1))
		L.Push(lua.LNumber(init + i + len(p)))
		return 2
	}
	return findAux(L, s, p, init, true)
}

// strMatch is string.match(s, pattern[, init]).
func strMatch(L *lua.LState) int {
	s, p := L.CheckString(1), L.CheckString(2)
	return findAux(L, s, p, startIndex(L, 3, len(s)), false)
}

func findAux(L *lua.LState, s, p string, init int, find bool) int {
	ms := newMatcher(L, s, p)
	anchored := len(p) > 0 && p[0] == '^'
	st, e := ms.find(init, anchored)
	if st < 0 {
		L.Push(lua.LNil)
		return 1
	}
	if find {
		L.Push(lua.LNumber(st + 1))
		L.Push(lua.LNumber(e))
		return 2 + ms.pushCaptures(st, e, false)
	}
	return ms.pushCaptures(st, e, true)
}

// strGmatch is string.gmatch(s, pattern): an iterator that matches lazily
// (gopher-lua's collected every match up front).
func strGmatch(L *lua.LState) int {
	s, p := L.CheckString(1), L.CheckString(2)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		ms := newMatcher(L, s, p)
		for src := pos; src <= len(s); src++ {
			ms.level, ms.depth = 0, 0
			if e := ms.match(src, 0); e != -1 {
				pos = e
				if e == src {
					pos++ // an empty match: go on at least one byte
				}
				return ms.pushCaptures(src, e, true)
			}
		}
		pos = len(s) + 1
		return 0
	}))
	return 1
}

// strGsub is string.gsub(s, pattern, repl[, n]).
func strGsub(L *lua.LState) int {
	src, p := L.CheckString(1), L.CheckString(2)
	repl := L.Get(3)
	switch repl.Type() {
	case lua.LTNumber, lua.LTString, lua.LTTable, lua.LTFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(src)+1)
	anchored := len(p) > 0 && p[0] == '^'
	pi := 0
	if anchored {
		pi = 1
	}
	ms := newMatcher(L, src, p)
	b := newBuilder(L, "string.gsub")
	s, n := 0, 0
loop:
	for n < maxN {
		ms.level, ms.depth = 0, 0
		e := ms.match(s, pi)
		if e != -1 {
			n++
			gsubValue(ms, b, repl, s, e)
		}
		switch {
		case e != -1 && e > s:
			s = e
		case s < len(src):
			b.addByte(src[s])
			s++
		default:
			break loop
		}
		if anchored {
			break
		}
	}
	if s < len(src) {
		b.add(src[s:])
	}
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// gsubValue appends the replacement of the match src[s:e].
func gsubValue(ms *matcher, b *builder, repl lua.LValue, s, e int) {
	L := ms.L
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		rs := lua.LVAsString(r)
		for i := 0; i < len(rs); i++ {
			c := rs[i]
			if c != '%' || i+1 == len(rs) {
				b.addByte(c)
				continue
			}
			i++
			switch d := rs[i]; {
			case !isDigit(d):
				b.addByte(d)
			case d == '0':
				b.add(ms.src[s:e])
			default:
				b.add(lua.LVAsString(ms.capture(int(d-'1'), s, e)))
			}
		}
		return
	case *lua.LTable:
		v = L.GetTable(r, ms.capture(0, s, e))
	case *lua.LFunction:
		L.Push(r)
		n := ms.pushCaptures(s, e, true)
		L.Call(n, 1)
		v = L.Get(-1)
		L.Pop(1)
	}
	switch v.Type() {
	case lua.LTNil:
		b.add(ms.src[s:e])
	case lua.LTBool:
		if v == lua.LFalse {
			b.add(ms.src[s:e])
			return
		}
		L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	case lua.LTString, lua.LTNumber:
		b.add(lua.LVAsString(v))
	default:
		L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	}
}

// tabConcat is table.concat(t[, sep[, i[, j]]]): the size of the result
// is known, and checked, before it is built.
func tabConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	i := L.OptInt(3, 1)
	j := L.OptInt(4, t.Len())
	m := meterOf(L)
	var total int64
	for k := i; k <= j; k++ {
		v := t.RawGetInt(k)
		if v.Type() != lua.LTString && v.Type() != lua.LTNumber {
			L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
		}
		total += int64(len(lua.LVAsString(v)))
		if k < j {
			total += int64(len(sep))
		}
		m.step(L, 1)
		if total > m.maxMem {
			break
		}
	}
	m.reserve(L, total, "table.concat")
	var b strings.Builder
	b.Grow(int(total))
	for k := i; k <= j; k++ {
		b.WriteString(lua.LVAsString(t.RawGetInt(k)))
		if k < j {
			b.WriteString(sep)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// strFormat is string.format with Lua 5.1's rules: flags "-+ #0", a width
// and a precision of at most two digits each (Go's fmt would pad to any
// width asked for), %s through tostring.
func strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	b := newBuilder(L, "string.format")
	arg := 1
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.addByte(c)
			continue
		}
		i++
		if i >= len(f) {
			L.RaiseError("invalid option '%%' to 'format'")
		}
		if f[i] == '%' {
			b.addByte('%')
			continue
		}
		start := i
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		if i-start > 5 {
			L.RaiseError("invalid format (repeated flags)")
		}
		for k := 0; k < 2 && i < len(f) && isDigit(f[i]); k++ {
			i++
		}
		if i < len(f) && f[i] == '.' {
			i++
			for k := 0; k < 2 && i < len(f) && isDigit(f[i]); k++ {
				i++
			}
		}
		if i < len(f) && isDigit(f[i]) {
			L.RaiseError("invalid format (width or precision too long)")
		}
		if i >= len(f) {
			L.RaiseError("invalid option '%%' to 'format'")
		}
		spec, conv := f[start:i], f[i]
		arg++
		if arg > L.GetTop() {
			L.ArgError(arg, "no value")
		}
		switch conv {
		case 'c':
			b.addByte(byte(L.CheckInt(arg)))
		case 'd', 'i':
			b.add(fmt.Sprintf("%"+spec+"d", int64(L.CheckNumber(arg))))
		case 'o', 'u', 'x', 'X':
			v := uint64(int64(L.CheckNumber(arg)))
			verb := string(conv)
			if conv == 'u' {
				verb = "d"
			}
			b.add(fmt.Sprintf("%"+spec+verb, v))
		case 'e', 'E', 'f', 'g', 'G':
			if !strings.Contains(spec, ".") {
				spec += ".6"
			}
			b.add(fmt.Sprintf("%"+spec+string(conv), float64(L.CheckNumber(arg))))
		case 'q':
			quote(b, L.CheckString(arg))
		case 's':
			s := L.ToStringMeta(L.Get(arg)).String()
			if spec == "" {
				b.add(s)
			} else {
				b.add(fmt.Sprintf("%"+spec+"s", s))
			}
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// quote writes s as a Lua string literal (%q).
func quote(b *builder, s string) {
	b.addByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.addByte('\\')
			b.addByte(c)
		case '\n':
			b.add("\\\n")
		case '\r':
			b.add("\\r")
		case 0:
			b.add("\\000")
		default:
			b.addByte(c)
		}
	}
	b.addByte('"')
}

// boundedPCall is pcall with an error handler that keeps the error value
// as it is. Without a handler gopher-lua writes a traceback for every
// error that pcall catches, one line per tail call: after an endless tail
// recursion is stopped that is millions of lines, seconds and gigabytes
// past the caps.
func boundedPCall(L *lua.LState) int {
	L.CheckAny(1)
	v := L.Get(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	if err := L.PCall(L.GetTop()-1, lua.MultRet, keepError(L)); err != nil {
		L.Push(lua.LFalse)
		if aerr, ok := err.(*lua.ApiError); ok {
			L.Push(aerr.Object)
		} else {
			L.Push(lua.LString(err.Error()))
		}
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// keepError is the error handler that returns the error unchanged.
func keepError(L *lua.LState) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int { return 1 })
}
