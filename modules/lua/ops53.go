// ops53.go: what Lua 5.3 and 5.4 add that modules written for Prosody
// 0.12 (on Lua 5.4) use: the operators //, &, |, ~, <<, >> and unary ~
// (compile.go turns each into a call of the functions here),
// table.move, table.pack, table.unpack, math.type, math.tointeger,
// math.ult and the utf8 library.
//
// gopher-lua has one number type, float64. An operand that holds an
// integral value is taken as a Lua 5.3 integer: 7 // 2 is 3 and 1 // 0
// raises "attempt to divide by zero" (Lua 5.4 gives 3.0 and inf for the
// floats 7.0 // 2 and 1.0 // 0, which gopher-lua cannot tell apart).
// Bitwise operators work on 64-bit integers as Lua 5.3 does and raise
// "number has no integer representation" on a fraction; results are
// exact up to 2^53, beyond which float64 rounds them.

package lua

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"cairn/modules/lua/luaparse"

	lua "github.com/yuin/gopher-lua"
)

// ops53 maps an operator to the global its calls name ("~u" is unary ~):
// not identifiers, so no Lua code names them by accident.
var ops53 = map[string]string{
	"//": "cairn idiv", "&": "cairn band", "|": "cairn bor", "~": "cairn bxor",
	"<<": "cairn shl", ">>": "cairn shr", "~u": "cairn bnot",
}

// installOps53 puts the operators' functions and the Lua 5.3 table and
// utf8 functions into L.
func installOps53(L *lua.LState) {
	L.SetGlobal(ops53["//"], L.NewFunction(opIdiv))
	for op, b := range map[string]struct {
		event string
		f     func(a, b int64) int64
	}{
		"&":  {"__band", func(a, b int64) int64 { return a & b }},
		"|":  {"__bor", func(a, b int64) int64 { return a | b }},
		"~":  {"__bxor", func(a, b int64) int64 { return a ^ b }},
		"<<": {"__shl", shiftLeft},
		">>": {"__shr", func(a, b int64) int64 {
			if b <= -64 || b >= 64 {
				return 0
			}
			return shiftLeft(a, -b)
		}},
	} {
		L.SetGlobal(ops53[op], L.NewFunction(bitOp(b.event, b.f)))
	}
	L.SetGlobal(ops53["~u"], L.NewFunction(func(L *lua.LState) int {
		a := L.Get(1)
		if x, ok := toInteger(L, a, a); ok {
			L.Push(lua.LNumber(float64(^x)))
			return 1
		}
		if callMeta(L, "__bnot", a, a) {
			return 1
		}
		L.RaiseError("attempt to perform bitwise operation on a %s value", a.Type().String())
		return 0
	}))
	tab := L.GetGlobal("table").(*lua.LTable)
	tab.RawSetString("unpack", L.GetGlobal("unpack"))
	tab.RawSetString("pack", L.NewFunction(tabPack))
	tab.RawSetString("move", L.NewFunction(tabMove))
	L.SetGlobal("utf8", newUTF8Lib(L))
	addMath53(L, L.GetGlobal("math").(*lua.LTable))
}

// addMath53 adds math.type ("integer" for any integral number: gopher-lua
// cannot tell 3.0 from 3), math.tointeger (a numeric string too, as Lua
// 5.4.4) and math.ult.
func addMath53(L *lua.LState, m *lua.LTable) {
	m.RawSetString("type", L.NewFunction(func(L *lua.LState) int {
		v := L.CheckAny(1)
		n, ok := v.(lua.LNumber)
		switch {
		case !ok:
			L.Push(lua.LNil)
		case integral(float64(n)):
			L.Push(lua.LString("integer"))
		default:
			L.Push(lua.LString("float"))
		}
		return 1
	}))
	m.RawSetString("tointeger", L.NewFunction(func(L *lua.LState) int {
		f, ok := number(L.CheckAny(1))
		if !ok || !integral(f) {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(f))
		return 1
	}))
	m.RawSetString("ult", L.NewFunction(func(L *lua.LState) int {
		a, okA := toInteger(L, L.CheckNumber(1), lua.LNumber(0))
		b, okB := toInteger(L, L.CheckNumber(2), lua.LNumber(0))
		L.Push(lua.LBool(okA && okB && uint64(a) < uint64(b)))
		return 1
	}))
}

// shiftLeft is Lua 5.3's logical shift: a negative n shifts right, and
// 64 places or more give 0.
func shiftLeft(x, n int64) int64 {
	switch {
	case n <= -64 || n >= 64:
		return 0
	case n >= 0:
		return int64(uint64(x) << uint(n))
	}
	return int64(uint64(x) >> uint(-n))
}

// number is v as a number, converting a numeric string as Lua does.
func number(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		s := strings.TrimSpace(string(v))
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return float64(i), true
		}
	}
	return 0, false
}

// integral reports whether f is an integer that fits in int64.
func integral(f float64) bool {
	return f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63
}

// toInteger is v as a Lua 5.3 integer. A number with a fraction, or out
// of range, raises Lua's error when the other operand is a number too;
// any other value, strings included (Lua 5.4 does not convert them for
// bitwise operators), gives false: its metamethod is tried next.
func toInteger(L *lua.LState, v, other lua.LValue) (int64, bool) {
	f, ok := v.(lua.LNumber)
	if !ok {
		return 0, false
	}
	if !integral(float64(f)) {
		if _, isNum := other.(lua.LNumber); isNum {
			L.RaiseError("number has no integer representation")
		}
		return 0, false
	}
	return int64(f), true
}

// callMeta calls the metamethod event of a, else of b, with (a, b) and
// leaves its first result on the stack; false when neither has one.
func callMeta(L *lua.LState, event string, a, b lua.LValue) bool {
	mm := L.GetMetaField(a, event)
	if mm == lua.LNil {
		mm = L.GetMetaField(b, event)
	}
	if mm == lua.LNil {
		return false
	}
	L.Push(mm)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	return true
}

// bitOp is a binary bitwise operator with metamethod event.
func bitOp(event string, f func(a, b int64) int64) lua.LGFunction {
	return func(L *lua.LState) int {
		a, b := L.Get(1), L.Get(2)
		x, okA := toInteger(L, a, b)
		y, okB := toInteger(L, b, a)
		if okA && okB {
			L.Push(lua.LNumber(float64(f(x, y))))
			return 1
		}
		if callMeta(L, event, a, b) {
			return 1
		}
		_, numA := a.(lua.LNumber)
		_, numB := b.(lua.LNumber)
		if numA && numB {
			L.RaiseError("number has no integer representation")
		}
		bad := a
		if numA {
			bad = b
		}
		L.RaiseError("attempt to perform bitwise operation on a %s value", bad.Type().String())
		return 0
	}
}

// opIdiv is a // b: floor division, integer division when both operands
// are integral.
func opIdiv(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	x, okA := number(a)
	y, okB := number(b)
	if !okA || !okB {
		if callMeta(L, "__idiv", a, b) {
			return 1
		}
		_, strA := a.(lua.LString)
		_, strB := b.(lua.LString)
		if strA || strB { // the string library's metamethod words it so
			L.RaiseError("attempt to idiv a '%s' with a '%s'", a.Type().String(), b.Type().String())
		}
		bad := a
		if okA {
			bad = b
		}
		L.RaiseError("attempt to perform arithmetic on a %s value", bad.Type().String())
	}
	if integral(x) && integral(y) {
		i, j := int64(x), int64(y)
		switch {
		case j == 0:
			L.RaiseError("attempt to divide by zero")
		case j == -1:
			L.Push(lua.LNumber(float64(-i))) // MinInt64 // -1 wraps, as in Lua
			return 1
		}
		q := i / j
		if i%j != 0 && (i < 0) != (j < 0) {
			q--
		}
		L.Push(lua.LNumber(float64(q)))
		return 1
	}
	L.Push(lua.LNumber(math.Floor(x / y)))
	return 1
}

// tabPack is table.pack(...): the arguments in a table with n set.
func tabPack(L *lua.LState) int {
	n := L.GetTop()
	t := L.CreateTable(n, 1)
	for i := 1; i <= n; i++ {
		t.RawSetInt(i, L.Get(i))
	}
	t.RawSetString("n", lua.LNumber(n))
	L.Push(t)
	return 1
}

// tabMove is table.move(a1, f, e, t[, a2]): a2[t..] = a1[f..e], through
// the metamethods, counted against the time cap; returns a2.
func tabMove(L *lua.LState) int {
	a1 := L.CheckAny(1)
	f, e, t := L.CheckInt64(2), L.CheckInt64(3), L.CheckInt64(4)
	a2 := a1
	if L.GetTop() >= 5 {
		a2 = L.CheckAny(5)
	}
	for _, v := range []lua.LValue{a1, a2} {
		if _, ok := v.(*lua.LTable); !ok && L.GetMetaField(v, "__index") == lua.LNil {
			L.TypeError(1, lua.LTTable)
		}
	}
	if e >= f {
		if f <= 0 && e >= math.MaxInt64+f {
			L.ArgError(3, "too many elements to move")
		}
		if t > math.MaxInt64-(e-f) {
			L.ArgError(4, "destination wrap around")
		}
		m := meterOf(L)
		move := func(i int64) {
			L.SetTable(a2, lua.LNumber(t+i), L.GetTable(a1, lua.LNumber(f+i)))
			if i&1023 == 0 {
				m.step(L, 1024)
			}
		}
		if t > e || t <= f || a1 != a2 {
			for i := int64(0); i <= e-f; i++ {
				move(i)
			}
		} else {
			for i := e - f; i >= 0; i-- {
				move(i)
			}
		}
	}
	L.Push(a2)
	return 1
}

// newUTF8Lib is Lua 5.3's utf8 library: char, charpattern, codepoint,
// len, offset and codes, on UTF-8 as Lua 5.3 reads it (no code point
// above 10FFFF, no surrogates).
func newUTF8Lib(L *lua.LState) *lua.LTable {
	t := newLib(L, map[string]lua.LGFunction{
		"char": func(L *lua.LState) int {
			b := newBuilder(L, "utf8.char")
			for i := 1; i <= L.GetTop(); i++ {
				c := L.CheckInt64(i)
				if c < 0 || c > 0x7FFFFFFF {
					L.ArgError(i, "value out of range")
				}
				b.add(string(luaparse.EncodeUTF8(c)))
			}
			L.Push(lua.LString(b.String()))
			return 1
		},
		"codepoint": utf8Codepoint,
		"len":       utf8Len,
		"offset":    utf8Offset,
		"codes": func(L *lua.LState) int {
			s := L.CheckString(1)
			L.Push(L.NewFunction(func(L *lua.LState) int {
				i := int(L.CheckNumber(2))
				// Skip the rest of the current character.
				if i > 0 {
					for i < len(s) && isCont(s[i]) {
						i++
					}
				}
				if i >= len(s) {
					return 0
				}
				r, n := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && n <= 1 || i+n < len(s) && isCont(s[i+n]) {
					L.RaiseError("invalid UTF-8 code")
				}
				L.Push(lua.LNumber(i + 1))
				L.Push(lua.LNumber(r))
				return 2
			}))
			L.Push(lua.LString(s))
			L.Push(lua.LNumber(0))
			return 3
		},
	})
	t.RawSetString("charpattern", lua.LString("[\x00-\x7F\xC2-\xFD][\x80-\xBF]*"))
	return t
}

func isCont(b byte) bool { return b&0xC0 == 0x80 }

// bytePos turns a Lua string position (negative from the end) into a
// 1-based one.
func bytePos(pos int64, n int) int64 {
	if pos >= 0 {
		return pos
	}
	if -pos > int64(n) {
		return 0
	}
	return int64(n) + pos + 1
}

// utf8Codepoint is utf8.codepoint(s[, i[, j]]).
func utf8Codepoint(L *lua.LState) int {
	s := L.CheckString(1)
	i := bytePos(L.OptInt64(2, 1), len(s))
	j := bytePos(L.OptInt64(3, i), len(s))
	if i < 1 {
		L.ArgError(2, "out of bounds")
	}
	if j > int64(len(s)) {
		L.ArgError(3, "out of bounds")
	}
	m := meterOf(L)
	n := 0
	for p := int(i - 1); p < int(j); {
		r, size := utf8.DecodeRuneInString(s[p:])
		if r == utf8.RuneError && size <= 1 {
			L.RaiseError("invalid UTF-8 code")
		}
		if n&1023 == 0 {
			m.step(L, 1024)
		}
		L.Push(lua.LNumber(r))
		n++
		p += size
	}
	return n
}

// utf8Len is utf8.len(s[, i[, j]]): the number of characters between
// byte positions i and j, or nil and the position of the first invalid
// byte.
func utf8Len(L *lua.LState) int {
	s := L.CheckString(1)
	i := bytePos(L.OptInt64(2, 1), len(s))
	j := bytePos(L.OptInt64(3, -1), len(s))
	if i < 1 || i > int64(len(s))+1 {
		L.ArgError(2, "initial position out of bounds")
	}
	if j > int64(len(s)) {
		L.ArgError(3, "final position out of bounds")
	}
	n := 0
	for p := int(i - 1); p < int(j); n++ {
		r, size := utf8.DecodeRuneInString(s[p:])
		if r == utf8.RuneError && size <= 1 {
			L.Push(lua.LNil)
			L.Push(lua.LNumber(p + 1))
			return 2
		}
		p += size
	}
	L.Push(lua.LNumber(n))
	return 1
}

// utf8Offset is utf8.offset(s, n[, i]): the byte position where the
// n-th character (counting from position i) starts.
func utf8Offset(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt64(2)
	def := int64(1)
	if n < 0 {
		def = int64(len(s)) + 1
	}
	i := bytePos(L.OptInt64(3, def), len(s))
	if i < 1 || i > int64(len(s))+1 {
		L.ArgError(3, "position out of bounds")
	}
	p := int(i - 1)
	cont := func(p int) bool { return p < len(s) && isCont(s[p]) }
	if n == 0 {
		for p > 0 && cont(p) {
			p--
		}
		L.Push(lua.LNumber(p + 1))
		return 1
	}
	if cont(p) {
		L.RaiseError("initial position is a continuation byte")
	}
	if n < 0 {
		for ; n < 0 && p > 0; n++ {
			p--
			for p > 0 && cont(p) {
				p--
			}
		}
	} else {
		for n--; n > 0 && p < len(s); n-- {
			p++
			for cont(p) {
				p++
			}
		}
	}
	if n != 0 {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(p + 1))
	return 1
}
