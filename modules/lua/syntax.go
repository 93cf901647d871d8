// syntax.go: load errors that name a line.

package lua

import (
	"errors"
	"fmt"
	"strings"
)

// syntaxError words a parse error of the file at path. gopher-lua says
// only "at EOF" when the file ends inside an open construct; Lua 5.1
// names the lines ("'}' expected (to close '{' at line 3) near
// '<eof>'", or "'}' expected near '<eof>'" when the bracket opened on
// the last line), so this finds the bracket left open, or says which
// line the file ends on.
func syntaxError(path string, src []byte, err error) error {
	msg := strings.TrimSpace(err.Error())
	msg = strings.TrimPrefix(msg, "@")
	if !strings.Contains(msg, " at EOF") {
		return errors.New(msg)
	}
	last := strings.Count(strings.TrimRight(string(src), "\n"), "\n") + 1
	if open, line, ok := unclosed(src); ok {
		closer := map[byte]byte{'(': ')', '{': '}', '[': ']'}[open]
		if line == last {
			return fmt.Errorf("%s:%d: '%c' expected near '<eof>'", path, last, closer)
		}
		return fmt.Errorf("%s:%d: '%c' expected (to close '%c' at line %d) near '<eof>'", path, last, closer, open, line)
	}
	return fmt.Errorf("%s:%d: 'end' expected near '<eof>' (a function, if, do, while or for block is not closed)", path, last)
}

// unclosed scans Lua source, skipping strings and comments, and returns
// the innermost bracket ( { [ that is never closed, with its line.
func unclosed(src []byte) (byte, int, bool) {
	type opener struct {
		c    byte
		line int
	}
	var stack []opener
	scanCode(string(src), func(tok string, line int) bool {
		switch tok {
		case "(", "{", "[":
			stack = append(stack, opener{tok[0], line})
		case ")", "}", "]":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
		return true
	})
	if len(stack) == 0 {
		return 0, 0, false
	}
	o := stack[len(stack)-1]
	return o.c, o.line, true
}

// scanCode calls tok for each piece of code in Lua source s, with its
// line, until tok returns false: a word (name, keyword or number, dots
// included) or one other character. Strings, long strings and comments
// are skipped (a string is passed as `"`), and so is white space.
func scanCode(s string, tok func(string, int) bool) {
	line := 1
	// longBracket returns the length of "[==[" at i (0 if none) and its
	// level.
	longBracket := func(i int) (int, int) {
		if i >= len(s) || s[i] != '[' {
			return 0, 0
		}
		j := i + 1
		for j < len(s) && s[j] == '=' {
			j++
		}
		if j < len(s) && s[j] == '[' {
			return j - i + 1, j - i - 1
		}
		return 0, 0
	}
	skipLong := func(i, level int) int {
		end := "]" + strings.Repeat("=", level) + "]"
		k := strings.Index(s[i:], end)
		if k < 0 {
			line += strings.Count(s[i:], "\n")
			return len(s)
		}
		line += strings.Count(s[i:i+k], "\n")
		return i + k + len(end)
	}
	word := func(c byte) bool {
		return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '-' && strings.HasPrefix(s[i:], "--"):
			if n, lvl := longBracket(i + 2); n > 0 {
				i = skipLong(i+2+n, lvl)
				continue
			}
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			at := line
			i++
			for i < len(s) && s[i] != c && s[i] != '\n' {
				if s[i] == '\\' && i+1 < len(s) {
					if s[i+1] == '\n' {
						line++
					}
					if s[i+1] == 'z' { // \z skips white space, line breaks too
						for i+2 < len(s) && strings.IndexByte(" \t\r\n\f\v", s[i+2]) >= 0 {
							if s[i+2] == '\n' {
								line++
							}
							i++
						}
					}
					i++
				}
				i++
			}
			i++
			if !tok(`"`, at) {
				return
			}
		case c == '[':
			if n, lvl := longBracket(i); n > 0 {
				at := line
				i = skipLong(i+n, lvl)
				if !tok(`"`, at) {
					return
				}
				continue
			}
			i++
			if !tok("[", line) {
				return
			}
		case !word(c):
			i++
			if !tok(s[i-1:i], line) {
				return
			}
		default:
			j := i
			for j < len(s) && word(s[j]) {
				j++
			}
			w := s[i:j]
			i = j
			if !tok(w, line) {
				return
			}
		}
	}
}
