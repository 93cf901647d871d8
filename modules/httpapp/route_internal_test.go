package httpapp

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

func TestParseRouteKey_Shapes(t *testing.T) {
	for _, tc := range []struct {
		key    string
		method string
		sub    string
		wild   bool
		bad    bool
	}{
		{key: "GET", method: "GET"},
		{key: "GET /x", method: "GET", sub: "/x"},
		{key: "GET /", method: "GET", sub: "/"},
		{key: "GET /x/*", method: "GET", sub: "/x/", wild: true},
		{key: "GET /*", method: "GET", sub: "/", wild: true},
		{key: "get /x", method: "GET", sub: "/x"},
		{key: "PROPFIND /dav", method: "PROPFIND", sub: "/dav"},
		{key: "GET \t /x", method: "GET", sub: "/x"},
		{key: "GET /a*b", method: "GET", sub: "/a*b"},
		{key: "* /x", method: "*", sub: "/x"},
		{key: "/x", bad: true},
		{key: "GET x", bad: true},
		{key: "", bad: true},
		{key: "G-T /x", bad: true},
		{key: "GET /a b", bad: true},
	} {
		rk, err := parseRouteKey(tc.key)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: got %+v, want an error", tc.key, rk)
			}
			continue
		}
		if err != nil || rk.method != tc.method || rk.sub != tc.sub || rk.wild != tc.wild {
			t.Errorf("%q: got %+v %v, want {%s %s %v}", tc.key, rk, err, tc.method, tc.sub, tc.wild)
		}
	}
}

func TestJoinBase_RootApp(t *testing.T) {
	for _, tc := range []struct{ base, sub, want string }{
		{"/hello", "", "/hello"}, {"/hello", "/", "/hello/"}, {"/hello", "/a", "/hello/a"},
		{"/", "/a", "/a"}, {"/", "", "/"}, {"/", "/", "/"},
	} {
		if got := joinBase(tc.base, tc.sub); got != tc.want {
			t.Errorf("joinBase(%q, %q) = %q, want %q", tc.base, tc.sub, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{{"files", "/files"}, {"/files/", "/files"}, {"/", "/"}, {"", "/"}} {
		if got := normalizeBase(tc.in); got != tc.want {
			t.Errorf("normalizeBase(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAppName_StripsHTTPPrefix(t *testing.T) {
	for in, want := range map[string]string{"http_hello": "hello", "pastebin": "pastebin", "httpfoo": "httpfoo", "HTTP_x": "HTTP_x"} {
		if got := AppName(in); got != want {
			t.Errorf("AppName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanPath_Rules(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		bad       bool
	}{
		{raw: "/hello", want: "/hello"},
		{raw: "//hello///a", want: "/hello/a"},
		{raw: "/../x", bad: true},
		{raw: "/%2e%2e/x", bad: true},
		{raw: "/a/../b", want: "/a/../b"},
		{raw: "/a/..", want: "/a/.."},
		{raw: "/a/../../x", bad: true},
		{raw: "/./x", want: "/./x"},
		{raw: "/hello/a%3Fb", want: "/hello/a?b"},
		{raw: "/%41%aF%Af%af", want: "/A%aF%Af\xaf"},
		{raw: "hello", want: "/hello"},
	} {
		got, err := CleanPath(tc.raw)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q, bad=%v", tc.raw, got, err, tc.want, tc.bad)
		}
	}
	if got := matchKey("/hello/a?b"); got != "/hello/a" {
		t.Errorf("matchKey: got %q", got)
	}
}

// mkRoutes builds routes through Server.Add, as modules do.
func mkIndex(t *testing.T, apps ...*App) *Server {
	t.Helper()
	s, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range apps {
		if _, err := s.Add(a); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func names(rs []*route) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.key
	}
	return out
}

func nop(*Event) any { return nil }

func TestIndex_Candidates_Rules(t *testing.T) {
	s := mkIndex(t, &App{Module: "http_hello", Routes: map[string]any{
		"GET":      Handler(nop),
		"GET /a":   Handler(nop),
		"GET /*":   Handler(nop),
		"GET /a/*": Handler(nop),
		"POST /a":  Handler(nop),
	}})
	ix := s.ix.Load()
	for _, tc := range []struct {
		method, path string
		want         []string
	}{
		// exact beats wildcard at equal depth
		{"GET", "/hello/a", []string{"GET /a", "GET /a/* (redirect)", "GET /*"}},
		// deeper wildcard first, then shallower
		{"GET", "/hello/a/x", []string{"GET /a/*", "GET /*"}},
		{"GET", "/hello/a/", []string{"GET /a/*", "GET /*"}},
		// the base path: the empty-path route, then the redirect of GET /*
		{"GET", "/hello", []string{"GET", "GET /* (redirect)"}},
		{"GET", "/helloX", nil},
		{"GET", "/hello/", []string{"GET /*"}},
		{"POST", "/hello/a", []string{"POST /a"}},
		{"POST", "/hello/b", nil},
		{"get", "/hello/a", nil},
	} {
		got := names(ix.candidates(tc.method, tc.path))
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s %s: got %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestServer_Add_RejectsBadKeys(t *testing.T) {
	s := mkIndex(t)
	for _, routes := range []map[string]any{
		{"/x": Handler(nop)},
		{"GET x": Handler(nop)},
		{"get /a": Handler(nop), "GET /a": Handler(nop)},
		{"GET /a": nil},
	} {
		if _, err := s.Add(&App{Module: "bad", Routes: routes}); err == nil {
			t.Errorf("routes %v: want an error", routes)
		} else if !strings.Contains(err.Error(), "module bad") {
			t.Errorf("error %q does not name the module", err)
		}
	}
	if len(s.Apps()) != 0 {
		t.Errorf("a failed app was mounted: %v", s.Apps())
	}
	if _, err := s.Add(&App{Module: "x"}); err == nil {
		t.Error("an app without routes was accepted")
	}
}

// bruteCandidates is the oracle: every route whose method and pattern
// match, sorted by the candidate order read literally (routeLess).
func bruteCandidates(all []*route, method, path string) []*route {
	var out []*route
	for _, r := range all {
		if r.method != method {
			continue
		}
		if r.wild && strings.HasPrefix(path, r.path) || !r.wild && r.path == path {
			out = append(out, r)
		}
	}
	pattern := func(r *route) string {
		if r.wild {
			return r.path + "*"
		}
		return r.path
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		da, db := strings.Count(pattern(a), "/"), strings.Count(pattern(b), "/")
		if da != db {
			return da > db
		}
		if a.wild != b.wild {
			return b.wild
		}
		if a.prio != b.prio {
			return a.prio > b.prio
		}
		return a.seq < b.seq
	})
	return out
}

func TestIndex_Candidates_Oracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	segs := []string{"a", "b", "ab", "x.y", "%", "*"}
	randPath := func(max int) string {
		n := rng.IntN(max + 1)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString("/" + segs[rng.IntN(len(segs))])
		}
		if rng.IntN(3) == 0 {
			b.WriteString("/")
		}
		return b.String()
	}
	methods := []string{"GET", "POST", "HEAD"}
	for round := 0; round < 300; round++ {
		s := mkIndex(t)
		nApps := 1 + rng.IntN(3)
		for a := 0; a < nApps; a++ {
			routes := map[string]any{}
			for k := 0; k < 1+rng.IntN(8); k++ {
				key := methods[rng.IntN(len(methods))]
				if p := randPath(3); p != "" {
					key += " " + p
				}
				if rng.IntN(3) == 0 {
					key = strings.TrimSuffix(key, "/") + "/*"
					if !strings.Contains(key, " ") {
						key = strings.Replace(key, "/*", " /*", 1)
					}
				}
				if rng.IntN(5) == 0 {
					routes[key] = "constant"
				} else {
					routes[key] = Handler(nop)
				}
			}
			base := []string{"/app", "/", "/app/sub"}[rng.IntN(3)]
			if _, err := s.Add(&App{Module: fmt.Sprintf("m%d", a), DefaultPath: base, Routes: routes}); err != nil {
				continue // duplicate keys after normalisation: fine to skip
			}
		}
		ix := s.ix.Load()
		var all []*route
		for _, a := range s.apps {
			all = append(all, a.routes...)
		}
		for q := 0; q < 40; q++ {
			p := randPath(4)
			if p == "" {
				p = "/"
			}
			if rng.IntN(2) == 0 {
				p = "/app" + p
			}
			m := methods[rng.IntN(len(methods))]
			got, want := ix.candidates(m, p), bruteCandidates(all, m, p)
			if len(got) != len(want) {
				t.Fatalf("round %d %s %s: got %q, want %q", round, m, p, names(got), names(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("round %d %s %s: got %q, want %q", round, m, p, names(got), names(want))
				}
			}
		}
	}
}
