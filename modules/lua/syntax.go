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
// '<eof>'"), so this finds the bracket left open, or says which line the
// file ends on.
func syntaxError(path string, src []byte, err error) error {
	msg := strings.TrimSpace(err.Error())
	msg = strings.TrimPrefix(msg, "@")
	if !strings.Contains(msg, " at EOF") {
		return errors.New(msg)
	}
	last := strings.Count(strings.TrimRight(string(src), "\n"), "\n") + 1
	if open, line, ok := unclosed(src); ok {
		closer := map[byte]byte{'(': ')', '{': '}', '[': ']'}[open]
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
	line := 1
	s := string(src)
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
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
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
			i++
			for i < len(s) && s[i] != c && s[i] != '\n' {
				if s[i] == '\\' && i+1 < len(s) {
					if s[i+1] == '\n' {
						line++
					}
					i++
				}
				i++
			}
			i++
		case c == '[':
			if n, lvl := longBracket(i); n > 0 {
				i = skipLong(i+n, lvl)
				continue
			}
			stack = append(stack, opener{c, line})
			i++
		case c == '(' || c == '{':
			stack = append(stack, opener{c, line})
			i++
		case c == ')' || c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			i++
		default:
			i++
		}
	}
	if len(stack) == 0 {
		return 0, 0, false
	}
	o := stack[len(stack)-1]
	return o.c, o.line, true
}
