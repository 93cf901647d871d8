// route.go: route keys, parsed when an app is added, the index that
// orders the handlers for a request, and the automatic trailing-slash
// redirects (the rules are in doc.go, "Route keys").

package httpapp

import (
	"fmt"
	"sort"
	"strings"
)

// Priorities: handlers run at 0, the automatic redirects at -1.
const (
	prioHandler  = 0
	prioRedirect = -1
)

// routeKey is a parsed route key.
type routeKey struct {
	method string // upper-cased
	sub    string // "" (the base path itself), "/x", "/x/" ...; without "*"
	wild   bool   // key ended in "/*"
}

// parseRouteKey splits "METHOD[ PATH]". The method must be letters and
// digits (upper-cased here) or "*", which is accepted but never matches.
// PATH must start with "/"; a trailing "/*" makes a wildcard, any other
// "*" is literal.
func parseRouteKey(key string) (routeKey, error) {
	k := strings.TrimSpace(key)
	method, path := k, ""
	if i := strings.IndexAny(k, " \t"); i >= 0 {
		method, path = k[:i], strings.TrimLeft(k[i:], " \t")
	}
	if method == "" {
		return routeKey{}, fmt.Errorf("invalid route %q: no method", key)
	}
	if method != "*" {
		for i := 0; i < len(method); i++ {
			c := method[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return routeKey{}, fmt.Errorf("invalid route %q: method must be letters and digits", key)
			}
		}
	}
	rk := routeKey{method: strings.ToUpper(method)}
	if path == "" {
		return rk, nil
	}
	if !strings.HasPrefix(path, "/") {
		return routeKey{}, fmt.Errorf("invalid route %q: path must start with /", key)
	}
	if strings.ContainsAny(path, " \t") {
		return routeKey{}, fmt.Errorf("invalid route %q: path contains white space", key)
	}
	if strings.HasSuffix(path, "/*") {
		rk.wild = true
		path = path[:len(path)-1] // keep the "/" in front of "*"
	}
	rk.sub = path
	return rk, nil
}

// joinBase joins an app base path ("/" or "/name") and a key's sub path.
func joinBase(base, sub string) string {
	if base == "/" && strings.HasPrefix(sub, "/") {
		return sub
	}
	return base + sub
}

// normalizeBase adds a leading "/" and removes one trailing "/" ("/"
// stays "/").
func normalizeBase(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p = p[:len(p)-1]
	}
	return p
}

// route is one entry of the index.
type route struct {
	method string
	path   string // exact path, or the wildcard prefix ending in "/"
	wild   bool
	prio   int
	seq    int // order of addition across all apps
	depth  int // count of "/" in the pattern
	app    *appEntry
	key    string // the key as written, for logs
	h      Handler
	value  any // constant handler's value (h == nil)
	// redirect marks the automatic trailing-slash redirect.
	redirect bool
}

// index holds the routes of every app; it is immutable once built.
type index struct {
	exact map[string][]*route // method + " " + path
	wild  map[string][]*route // method + " " + prefix (ends in "/")
	n     int
}

func newIndex(routes []*route) *index {
	ix := &index{exact: map[string][]*route{}, wild: map[string][]*route{}, n: len(routes)}
	for _, r := range routes {
		k := r.method + " " + r.path
		if r.wild {
			ix.wild[k] = append(ix.wild[k], r)
		} else {
			ix.exact[k] = append(ix.exact[k], r)
		}
	}
	return ix
}

// candidates returns the routes for method and path in the order they
// run: deeper first, exact before wildcard, priority descending, then
// order of addition.
func (ix *index) candidates(method, path string) []*route {
	var out []*route
	out = append(out, ix.exact[method+" "+path]...)
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			out = append(out, ix.wild[method+" "+path[:i+1]]...)
		}
	}
	if len(out) > 1 {
		sort.SliceStable(out, func(i, j int) bool { return routeLess(out[i], out[j]) })
	}
	return out
}

// routeLess is the candidate order: deeper patterns first, exact before
// wildcard at equal depth, then higher priority, with the order of
// addition breaking ties that Prosody leaves unspecified.
func routeLess(a, b *route) bool {
	if a.depth != b.depth {
		return a.depth > b.depth
	}
	if a.wild != b.wild {
		return !a.wild
	}
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	return a.seq < b.seq
}

// hasPath reports whether any route (any method) answers path; used for
// CORS preflight.
func (ix *index) hasPath(path string) bool {
	for k := range ix.exact {
		if _, p, _ := strings.Cut(k, " "); p == path {
			return true
		}
	}
	for k := range ix.wild {
		if _, p, _ := strings.Cut(k, " "); strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
