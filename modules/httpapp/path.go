// path.go: turning a request target into the path used for matching:
// "//" collapsed, decoded once, checked for depth (CleanPath).

package httpapp

import (
	"errors"
	"net/url"
	"strings"
)

// errInvalidPath is the 400 "Invalid path" of the depth check.
var errInvalidPath = errors.New("Invalid path")

// target is a split request target.
type target struct {
	rawPath  string // undecoded, uncollapsed
	rawQuery string
	hasQuery bool
	host     string // from an absolute-form target, else ""
}

// splitTarget splits an origin-form ("/p?q") or absolute-form
// ("http://h/p?q") request target.
func splitTarget(uri string) target {
	if strings.HasPrefix(uri, "http://") || strings.HasPrefix(uri, "https://") {
		if u, err := url.Parse(uri); err == nil {
			t := target{rawPath: u.EscapedPath(), rawQuery: u.RawQuery, hasQuery: u.ForceQuery || u.RawQuery != "", host: u.Host}
			if t.rawPath == "" {
				t.rawPath = "/"
			}
			return t
		}
	}
	p, q, ok := strings.Cut(uri, "?")
	return target{rawPath: p, rawQuery: q, hasQuery: ok}
}

// collapseSlashes turns every run of "/" into one.
func collapseSlashes(s string) string {
	if !strings.Contains(s, "//") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '/' && i > 0 && s[i-1] == '/' {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CleanPath collapses "//", decodes once, adds a leading "/", then runs
// the depth check: for each segment followed by "/", ".." counts -1, "."
// 0, anything else +1; a running total below 0 is an error. The path is
// not normalised ("/a/../b" stays literal).
func CleanPath(raw string) (string, error) {
	p := URLDecode(collapseSlashes(raw))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	depth := 0
	rest := p[1:]
	for {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			break
		}
		switch rest[:i] {
		case "..":
			depth--
		case ".":
		default:
			depth++
		}
		if depth < 0 {
			return "", errInvalidPath
		}
		rest = rest[i+1:]
	}
	return p, nil
}

// matchKey is the cleaned path cut at its first "?" (which can only come
// from a decoded %3F).
func matchKey(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}
