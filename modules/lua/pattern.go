// pattern.go: Lua 5.1 patterns (string.find, match, gmatch, gsub) with
// bounded work: gopher-lua's own matcher recurses once per subject byte
// (a Go stack as deep as the subject) and cannot be interrupted, so a
// backtracking pattern ran for minutes. This one follows the reference
// semantics (lstrlib's matcher: a loop for single items, recursion only
// per pattern item), stops at 200 nested items ("pattern too complex", as
// Lua 5.2+), and counts its steps against the call's time cap.

package lua

import (
	lua "github.com/yuin/gopher-lua"
)

const (
	maxCaptures   = 32
	maxMatchDepth = 200
	capUnfinished = -1
	capPosition   = -2
	patSpecials   = "^$*+?.([%-"
)

type capture struct{ init, len int }

// matcher matches one pattern against one subject.
type matcher struct {
	L     *lua.LState
	m     *meter
	src   string
	pat   string
	level int
	depth int
	caps  [maxCaptures]capture
}

func newMatcher(L *lua.LState, src, pat string) *matcher {
	return &matcher{L: L, m: meterOf(L), src: src, pat: pat}
}

func (ms *matcher) fail(format string, args ...any) {
	ms.L.RaiseError(format, args...)
}

// classEnd returns the index just past the single-character class at p.
func (ms *matcher) classEnd(p int) int {
	pat := ms.pat
	c := pat[p]
	p++
	switch c {
	case '%':
		if p >= len(pat) {
			ms.fail("malformed pattern (ends with '%%')")
		}
		return p + 1
	case '[':
		if p < len(pat) && pat[p] == '^' {
			p++
		}
		for { // look for a ']'; the first character is never the end
			if p >= len(pat) {
				ms.fail("malformed pattern (missing ']')")
			}
			c := pat[p]
			p++
			if c == '%' && p < len(pat) {
				p++ // skip escapes (e.g. '%]')
			}
			if p < len(pat) && pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// matchClass reports whether c is in class %cl.
func matchClass(c, cl byte) bool {
	var res bool
	lower := cl | 0x20
	switch lower {
	case 'a':
		res = isLower(c) || isUpper(c)
	case 'c':
		res = c < 0x20 || c == 0x7f
	case 'd':
		res = isDigit(c)
	case 'l':
		res = isLower(c)
	case 'p':
		res = 0x21 <= c && c <= 0x2f || 0x3a <= c && c <= 0x40 || 0x5b <= c && c <= 0x60 || 0x7b <= c && c <= 0x7e
	case 's':
		res = c == ' ' || '\t' <= c && c <= '\r'
	case 'u':
		res = isUpper(c)
	case 'w':
		res = isLower(c) || isUpper(c) || isDigit(c)
	case 'x':
		res = isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f'
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if isUpper(cl) {
		return !res
	}
	return res
}

// matchBracket reports whether c is in the set pat[p:ec+1] ("[...]").
func (ms *matcher) matchBracket(c byte, p, ec int) bool {
	pat := ms.pat
	sig := true
	if pat[p+1] == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case pat[p] == '%':
			p++
			if matchClass(c, pat[p]) {
				return sig
			}
		case p+2 < ec && pat[p+1] == '-':
			if pat[p] <= c && c <= pat[p+2] {
				return sig
			}
			p += 2
		case pat[p] == c:
			return sig
		}
	}
	return !sig
}

// singleMatch reports whether the subject byte at s matches the class
// pat[p:ep].
func (ms *matcher) singleMatch(s, p, ep int) bool {
	if s >= len(ms.src) {
		return false
	}
	c := ms.src[s]
	switch ms.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, ms.pat[p+1])
	case '[':
		return ms.matchBracket(c, p, ep-1)
	}
	return ms.pat[p] == c
}

// match returns the end of a match of pat[p:] at src[s:], or -1.
func (ms *matcher) match(s, p int) int {
	ms.depth++
	if ms.depth > maxMatchDepth {
		ms.fail("pattern too complex")
	}
	defer func() { ms.depth-- }()
	pat := ms.pat
	for {
		ms.m.step(ms.L, 1)
		if p >= len(pat) {
			return s
		}
		switch pat[p] {
		case '(':
			if p+1 < len(pat) && pat[p+1] == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case '$':
			if p+1 == len(pat) {
				if s == len(ms.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 >= len(pat) {
				break
			}
			switch c := pat[p+1]; {
			case c == 'b':
				if s = ms.matchBalance(s, p+2); s == -1 {
					return -1
				}
				p += 4
				continue
			case c == 'f':
				p += 2
				if p >= len(pat) || pat[p] != '[' {
					ms.fail("missing '[' after '%%f' in pattern")
				}
				ep := ms.classEnd(p)
				var prev, cur byte
				if s > 0 {
					prev = ms.src[s-1]
				}
				if s < len(ms.src) {
					cur = ms.src[s]
				}
				if ms.matchBracket(prev, p, ep-1) || !ms.matchBracket(cur, p, ep-1) {
					return -1
				}
				p = ep
				continue
			case isDigit(c):
				if s = ms.matchCapture(s, c); s == -1 {
					return -1
				}
				p += 2
				continue
			}
		}
		ep := ms.classEnd(p)
		m := ms.singleMatch(s, p, ep)
		if ep < len(pat) {
			switch pat[ep] {
			case '?':
				if m {
					if r := ms.match(s+1, ep+1); r != -1 {
						return r
					}
				}
				p = ep + 1
				continue
			case '*':
				return ms.maxExpand(s, p, ep)
			case '+':
				if !m {
					return -1
				}
				return ms.maxExpand(s+1, p, ep)
			case '-':
				return ms.minExpand(s, p, ep)
			}
		}
		if !m {
			return -1
		}
		s, p = s+1, ep
	}
}

func (ms *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for ms.singleMatch(s+i, p, ep) {
		i++
	}
	ms.m.step(ms.L, i)
	for ; i >= 0; i-- {
		if r := ms.match(s+i, ep+1); r != -1 {
			return r
		}
	}
	return -1
}

func (ms *matcher) minExpand(s, p, ep int) int {
	for {
		if r := ms.match(s, ep+1); r != -1 {
			return r
		}
		if !ms.singleMatch(s, p, ep) {
			return -1
		}
		s++
	}
}

func (ms *matcher) startCapture(s, p, what int) int {
	if ms.level >= maxCaptures {
		ms.fail("too many captures")
	}
	ms.caps[ms.level] = capture{s, what}
	ms.level++
	r := ms.match(s, p)
	if r == -1 {
		ms.level--
	}
	return r
}

func (ms *matcher) endCapture(s, p int) int {
	l := -1
	for i := ms.level - 1; i >= 0; i-- {
		if ms.caps[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		ms.fail("invalid pattern capture")
	}
	ms.caps[l].len = s - ms.caps[l].init
	r := ms.match(s, p)
	if r == -1 {
		ms.caps[l].len = capUnfinished
	}
	return r
}

func (ms *matcher) matchBalance(s, p int) int {
	if p+1 >= len(ms.pat) {
		ms.fail("unbalanced pattern")
	}
	if s >= len(ms.src) || ms.src[s] != ms.pat[p] {
		return -1
	}
	b, e := ms.pat[p], ms.pat[p+1]
	cont := 1
	for i := s + 1; i < len(ms.src); i++ {
		switch ms.src[i] {
		case e:
			if cont--; cont == 0 {
				ms.m.step(ms.L, i-s)
				return i + 1
			}
		case b:
			cont++
		}
	}
	ms.m.step(ms.L, len(ms.src)-s)
	return -1
}

func (ms *matcher) matchCapture(s int, c byte) int {
	l := int(c - '1')
	if l < 0 || l >= ms.level || ms.caps[l].len == capUnfinished {
		ms.fail("invalid capture index")
	}
	cp := ms.caps[l]
	if cp.len == capPosition {
		cp.len = 0
	}
	if len(ms.src)-s >= cp.len && ms.src[s:s+cp.len] == ms.src[cp.init:cp.init+cp.len] {
		ms.m.step(ms.L, cp.len)
		return s + cp.len
	}
	return -1
}

// find tries the pattern at every start from init (only there when
// anchored) and returns the match's start and end, or -1.
func (ms *matcher) find(init int, anchored bool) (int, int) {
	p := 0
	if anchored {
		p = 1
	}
	for s := init; s <= len(ms.src); s++ {
		ms.level, ms.depth = 0, 0
		if e := ms.match(s, p); e != -1 {
			return s, e
		}
		if anchored {
			break
		}
	}
	return -1, -1
}

// capture returns capture i of the match src[s:e] (the whole match when
// the pattern has no captures and i is 0).
func (ms *matcher) capture(i, s, e int) lua.LValue {
	if i >= ms.level {
		if i != 0 {
			ms.fail("invalid capture index")
		}
		return lua.LString(ms.src[s:e])
	}
	c := ms.caps[i]
	switch c.len {
	case capUnfinished:
		ms.fail("unfinished capture")
	case capPosition:
		return lua.LNumber(c.init + 1)
	}
	return lua.LString(ms.src[c.init : c.init+c.len])
}

// pushCaptures pushes the captures of src[s:e] (the whole match when
// there are none and whole is set) and returns how many.
func (ms *matcher) pushCaptures(s, e int, whole bool) int {
	n := ms.level
	if n == 0 && whole {
		n = 1
	}
	for i := 0; i < n; i++ {
		ms.L.Push(ms.capture(i, s, e))
	}
	return n
}
