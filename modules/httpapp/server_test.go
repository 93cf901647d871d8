package httpapp_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/modules/httpapp"
)

func start(t *testing.T, o httpapp.Options, apps ...*httpapp.App) (*httpapp.Server, string) {
	t.Helper()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Hosts == nil {
		o.Hosts = []string{"x"} // the Host of the raw requests
	}
	s, err := httpapp.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range apps {
		if _, err := s.Add(a); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, l.URL()
}

var client = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type result struct {
	code   int
	body   string
	header http.Header
	closed bool // Connection: close
}

func do(t *testing.T, method, url, body string, hdr ...string) result {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, string(b), resp.Header, resp.Close}
}

// raw sends one raw request and returns the raw response.
func raw(t *testing.T, base, request string) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

func text(s string) httpapp.Handler { return func(*httpapp.Event) any { return s } }

func TestServer_Route_BaseOnlyGET(t *testing.T) {
	_, u := start(t, httpapp.Options{}, &httpapp.App{Module: "http_hello", Routes: map[string]any{"GET": text("base")}})
	if r := do(t, "GET", u+"/hello", ""); r.code != 200 || r.body != "base" {
		t.Errorf("/hello: got %d %q, want 200 base", r.code, r.body)
	}
	if r := do(t, "GET", u+"/hello/", ""); r.code != 404 {
		t.Errorf("/hello/: got %d, want 404", r.code)
	}
}

func TestServer_Redirect_TrailingSlash(t *testing.T) {
	_, u := start(t, httpapp.Options{}, &httpapp.App{Module: "http_hello", Routes: map[string]any{"GET /": text("root"), "GET /d/": text("d")}})
	for _, tc := range []struct{ path, loc string }{
		{"/hello", "/hello/"}, {"/hello?a=1", "/hello/?a=1"}, {"/hello/d", "/hello/d/"},
	} {
		r := do(t, "GET", u+tc.path, "")
		if r.code != 301 || r.header.Get("Location") != tc.loc || r.body != "" {
			t.Errorf("%s: got %d Location %q body %q, want 301 %q", tc.path, r.code, r.header.Get("Location"), r.body, tc.loc)
		}
	}
	if r := do(t, "POST", u+"/hello", ""); r.code != 404 {
		t.Errorf("POST /hello: got %d, want 404 (redirects are per method)", r.code)
	}
}

func TestServer_Wildcard_Arg(t *testing.T) {
	echo := func(ev *httpapp.Event) any { return "[" + ev.Arg + "]" }
	_, u := start(t, httpapp.Options{}, &httpapp.App{Module: "http_hello", Routes: map[string]any{"GET /*": httpapp.Handler(echo), "GET /a": text("exact")}})
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/hello/", 200, "[]"},
		{"/hello/a/b", 200, "[a/b]"},
		{"/hello/a", 200, "exact"},
		{"/hello/x%20y+z", 200, "[x y+z]"},
		{"/hello/a%3Fb", 200, "exact"}, // match key cut at the decoded "?"
		{"/hello/q%3Fb", 200, "[q?b]"},
		{"/hello/a?q=1", 200, "exact"},
		{"/hello", 301, ""},
		{"/helloX", 404, ""},
	} {
		r := do(t, "GET", u+tc.path, "")
		if r.code != tc.code || (tc.body != "" && r.body != tc.body) {
			t.Errorf("%s: got %d %q, want %d %q", tc.path, r.code, r.body, tc.code, tc.body)
		}
	}
}

func TestServer_FallThrough_OnNil(t *testing.T) {
	calls := []string{}
	inner := func(ev *httpapp.Event) any { calls = append(calls, "a/*:"+ev.Arg); return nil }
	outer := func(ev *httpapp.Event) any { calls = append(calls, "*:"+ev.Arg); return "outer " + ev.Arg }
	_, u := start(t, httpapp.Options{}, &httpapp.App{Module: "http_hello", Routes: map[string]any{"GET /*": httpapp.Handler(outer), "GET /a/*": httpapp.Handler(inner)}})
	r := do(t, "GET", u+"/hello/a/x", "")
	if r.body != "outer a/x" || strings.Join(calls, ",") != "a/*:x,*:a/x" {
		t.Errorf("got %q after calls %v", r.body, calls)
	}
	_, u2 := start(t, httpapp.Options{}, &httpapp.App{Module: "http_none", Routes: map[string]any{"GET /x": httpapp.Handler(func(*httpapp.Event) any { return nil })}})
	if r := do(t, "GET", u2+"/none/x", ""); r.code != 404 || !strings.Contains(r.body, "<title>404 Not Found</title>") {
		t.Errorf("nothing answered: got %d %q, want the 404 page", r.code, r.body)
	}
}

func TestServer_Head_FromGet(t *testing.T) {
	_, u := start(t, httpapp.Options{}, &httpapp.App{Module: "http_hello", Routes: map[string]any{
		"GET /g": httpapp.Handler(func(ev *httpapp.Event) any { return "method " + ev.Request.Method }),
		"HEAD /h": httpapp.Handler(func(ev *httpapp.Event) any {
			ev.Response.Headers["x_head"] = "1"
			return ""
		}),
		"GET /h": text("get"),
	}})
	resp := raw(t, u, "HEAD /hello/g HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(resp, "HTTP/1.1 200") || !strings.Contains(resp, "Content-Length: 11\r\n") || !strings.HasSuffix(resp, "\r\n\r\n") {
		t.Errorf("HEAD on a GET route: got %q, want 200, Content-Length 11 (len of \"method HEAD\"), no body", resp)
	}
	if r := do(t, "HEAD", u+"/hello/h", ""); r.header.Get("X-Head") != "1" {
		t.Errorf("explicit HEAD route did not win: %v", r.header)
	}
	if r := do(t, "POST", u+"/hello/g", ""); r.code != 404 {
		t.Errorf("POST to a GET route: got %d, want 404 (no 405)", r.code)
	}
	if resp := raw(t, u, "get /hello/g HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(resp, "HTTP/1.1 404") {
		t.Errorf("lower-case method: got %q, want 404", firstLine(resp))
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\r\n"); return l }

func TestServer_Returns_Conventions(t *testing.T) {
	h := func(v any) httpapp.Handler { return func(*httpapp.Event) any { return v } }
	_, u := start(t, httpapp.Options{}, &httpapp.App{Module: "http_r", Routes: map[string]any{
		"GET /string": h("body"),
		"GET /bytes":  h([]byte("bytes")),
		"GET /204":    h(204),
		"GET /301": httpapp.Handler(func(ev *httpapp.Event) any {
			ev.Response.Headers["location"] = "/elsewhere"
			return 301
		}),
		"GET /503":   h(503),
		"GET /reply": h(&httpapp.Reply{StatusCode: 418, Body: []byte("x"), Headers: map[string]string{"content_type": "text/plain"}}),
		"GET /error": h(&httpapp.Error{Code: 409, Text: "already there"}),
		"GET /false": h(false),
		"GET /send": httpapp.Handler(func(ev *httpapp.Event) any {
			ev.Response.StatusCode = 201
			ev.Response.Headers["content_type"] = "text/plain"
			ev.Response.Send([]byte("sent"))
			return true
		}),
		"GET /true-unsent": h(true),
		"GET /fail":        h(errors.New("boom")),
		"GET /panic":       httpapp.Handler(func(*httpapp.Event) any { panic("kaboom") }),
		"GET /status-text": httpapp.Handler(func(ev *httpapp.Event) any {
			ev.Response.StatusCode, ev.Response.Status = 299, "299 Whatever"
			return "odd"
		}),
		"GET /const": "constant",
	}})
	for _, tc := range []struct {
		path   string
		code   int
		body   string // substring
		ctype  string
		closed bool
	}{
		{path: "/r/string", code: 200, body: "body"},
		{path: "/r/bytes", code: 200, body: "bytes"},
		{path: "/r/204", code: 204},
		{path: "/r/301", code: 301},
		{path: "/r/503", code: 503, body: "<title>503 Service Unavailable</title>", ctype: "text/html; charset=utf-8"},
		{path: "/r/reply", code: 418, body: "x", ctype: "text/plain"},
		{path: "/r/error", code: 409, body: "already there", ctype: "text/html; charset=utf-8"},
		{path: "/r/false", code: 200},
		{path: "/r/send", code: 201, body: "sent", ctype: "text/plain"},
		{path: "/r/true-unsent", code: 500, ctype: "text/html; charset=utf-8", closed: true},
		{path: "/r/fail", code: 500, body: "<title>500 Internal Server Error</title>", ctype: "text/html; charset=utf-8", closed: true},
		{path: "/r/panic", code: 500, body: "<title>500 Internal Server Error</title>", ctype: "text/html; charset=utf-8", closed: true},
		{path: "/r/status-text", code: 299, body: "odd"},
		{path: "/r/const", code: 200, body: "constant"},
	} {
		r := do(t, "GET", u+tc.path, "")
		if r.code != tc.code || !strings.Contains(r.body, tc.body) || r.header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s: got %d %q type %q, want %d containing %q type %q", tc.path, r.code, r.body, r.header.Get("Content-Type"), tc.code, tc.body, tc.ctype)
		}
		if r.header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", tc.path)
		}
		if tc.closed && (!r.closed || r.header.Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("%s: want Connection: close and nosniff, got %v", tc.path, r.header)
		}
	}
	if resp := raw(t, u, "GET /r/status-text HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); firstLine(resp) != "HTTP/1.1 299 Whatever" {
		t.Errorf("status text: got %q", firstLine(resp))
	}
	if resp := raw(t, u, "GET /r/301 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); !strings.Contains(resp, "Location: /elsewhere\r\n") {
		t.Errorf("301 lost the handler's location: %q", resp)
	}
}

func TestServer_Body_CapAndRead(t *testing.T) {
	echo := func(ev *httpapp.Event) any {
		return fmt.Sprintf("%d:%s", len(ev.Request.Body), ev.Request.Headers["content_type"])
	}
	_, u := start(t, httpapp.Options{MaxBodySize: 1000}, &httpapp.App{Module: "http_b", Routes: map[string]any{"POST /": httpapp.Handler(echo)}})
	if r := do(t, "POST", u+"/b/", strings.Repeat("x", 1000), "Content-Type", "text/plain"); r.code != 200 || r.body != "1000:text/plain" {
		t.Errorf("body at the cap: got %d %q", r.code, r.body)
	}
	if r := do(t, "POST", u+"/b/", strings.Repeat("x", 100000)); r.code != 413 || !r.closed {
		t.Errorf("body over the cap: got %d %v, want 413 and close", r.code, r.header)
	}
	resp := raw(t, u, "POST /b/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"+"7d0\r\n"+strings.Repeat("y", 2000)+"\r\n0\r\n\r\n")
	if !strings.HasPrefix(resp, "HTTP/1.1 413") {
		t.Errorf("chunked body over the cap: got %q, want 413", firstLine(resp))
	}
}

func TestServer_ForwardedFor_TrustedOnly(t *testing.T) {
	who := func(ev *httpapp.Event) any { return fmt.Sprintf("%s %v", ev.Request.IP, ev.Request.Secure) }
	app := func() *httpapp.App {
		return &httpapp.App{Module: "http_ip", Routes: map[string]any{"GET": httpapp.Handler(who)}}
	}
	_, trusting := start(t, httpapp.Options{}, app())
	_, wary := start(t, httpapp.Options{TrustedProxies: []string{"127.0.0.2/32"}}, app())
	for _, tc := range []struct {
		base, xff, proto, want string
	}{
		{trusting, "1.2.3.4", "", "1.2.3.4 false"},
		{trusting, "5.6.7.8, 1.2.3.4", "https", "1.2.3.4 true"},
		{trusting, "1.2.3.4, 127.0.0.1", "", "1.2.3.4 false"},
		{trusting, "127.0.0.1", "", "127.0.0.1 false"},
		{trusting, "", "", "127.0.0.1 false"},
		{wary, "1.2.3.4", "https", "127.0.0.1 false"},
	} {
		hdr := []string{}
		if tc.xff != "" {
			hdr = append(hdr, "X-Forwarded-For", tc.xff)
		}
		if tc.proto != "" {
			hdr = append(hdr, "X-Forwarded-Proto", tc.proto)
		}
		if r := do(t, "GET", tc.base+"/ip", "", hdr...); r.body != tc.want {
			t.Errorf("XFF %q proto %q: got %q, want %q", tc.xff, tc.proto, r.body, tc.want)
		}
	}
}

func TestServer_Request_Fields(t *testing.T) {
	var got *httpapp.Request
	_, u := start(t, httpapp.Options{Hosts: []string{"h", "other"}}, &httpapp.App{Module: "http_f", Routes: map[string]any{"GET /*": httpapp.Handler(func(ev *httpapp.Event) any {
		got = ev.Request
		return "ok"
	})}})
	resp := raw(t, u, "GET //f/a%20b/../c?x=1&y HTTP/1.1\r\nHost: h\r\nX-Multi: a\r\nX-Multi: b\r\nX-Some-Thing:   v\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(resp, "HTTP/1.1 200") || got == nil {
		t.Fatalf("got %q", firstLine(resp))
	}
	if got.Path != "/f/a b/../c" || got.URL.Path != "//f/a%20b/../c" || got.URL.Query != "x=1&y" || got.Method != "GET" || got.Version != "1.1" {
		t.Errorf("fields: %+v", got)
	}
	if got.Headers["x_multi"] != "a,b" || got.Headers["x_some_thing"] != "v" || got.Headers["host"] != "h" {
		t.Errorf("headers: %v", got.Headers)
	}
	if r := do(t, "GET", u+"/%2e%2e/x", ""); r.code != 400 || !strings.Contains(r.body, "Invalid path") {
		t.Errorf("/%%2e%%2e/x: got %d %q, want 400 Invalid path", r.code, r.body)
	}
	if resp := raw(t, u, "GET http://other/f/abs HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(resp, "HTTP/1.1 200") || got.Path != "/f/abs" || got.Headers["host"] != "other" {
		t.Errorf("absolute form: %q %+v", firstLine(resp), got)
	}
}

func TestServer_Remove_Unmounts(t *testing.T) {
	s, u := start(t, httpapp.Options{},
		&httpapp.App{Module: "one", Name: "shared", Routes: map[string]any{"GET /": text("one")}},
		&httpapp.App{Module: "two", Name: "shared", Routes: map[string]any{"GET /": text("two")}})
	if r := do(t, "GET", u+"/shared/", ""); r.body != "one" {
		t.Errorf("two apps on one path: got %q, want the first added", r.body)
	}
	s.Remove("one")
	if r := do(t, "GET", u+"/shared/", ""); r.body != "two" {
		t.Errorf("after unloading one: got %q, want two", r.body)
	}
	s.Remove("two")
	if r := do(t, "GET", u+"/shared", ""); r.code != 404 {
		t.Errorf("after unloading both: redirect still there (%d)", r.code)
	}
	if r := do(t, "POST", u+"/", ""); r.code != 200 || !strings.Contains(r.body, "cairn is running") {
		t.Errorf("root page: got %d %q", r.code, r.body)
	}
}

func TestServer_KeepAlive_AfterSend(t *testing.T) {
	_, u := start(t, httpapp.Options{}, &httpapp.App{Module: "http_k", Routes: map[string]any{"GET": httpapp.Handler(func(ev *httpapp.Event) any {
		ev.Response.Send([]byte("a"))
		return true
	})}})
	c, err := net.Dial("tcp", strings.TrimPrefix(u, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	for i := 0; i < 2; i++ {
		io.WriteString(c, "GET /k HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on one connection: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "a" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
}

// BenchmarkServer_Request measures one keep-alive GET through routing,
// the handler and the response.
func BenchmarkServer_Request(b *testing.B) {
	s, err := httpapp.NewServer(httpapp.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	s.Add(&httpapp.App{Module: "http_b", Routes: map[string]any{"GET /*": text("hello")}})
	l, err := s.Listen("127.0.0.1:0", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	u := l.URL() + "/b/x/y"
	for b.Loop() {
		resp, err := client.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// Ensure a request whose Host is not one of the server's names gets 403
// before any handler runs (a DNS-rebinding page sends its own name as
// Host and as Origin), while loopback names, IP literals and the
// configured names are served.
func TestServer_Host_OnlyOwnNames(t *testing.T) {
	ran := 0
	_, u := start(t, httpapp.Options{Hosts: []string{"pi.local"}}, &httpapp.App{Module: "http_h", Routes: map[string]any{
		"GET /":  httpapp.Handler(func(*httpapp.Event) any { ran++; return "ok" }),
		"POST /": httpapp.Handler(func(*httpapp.Event) any { ran++; return "ok" }),
	}})
	port := u[strings.LastIndex(u, ":")+1:]
	for _, tc := range []struct {
		host string
		code int
	}{
		{"127.0.0.1:" + port, 200},
		{"localhost:" + port, 200},
		{"LocalHost.:" + port, 200},
		{"[::1]:" + port, 200},
		{"192.0.2.7:" + port, 200}, // an IP literal cannot be rebound
		{"pi.local", 200},
		{"PI.local:" + port, 200},
		{"evil.example:" + port, 403},
		{"evil.example", 403},
		{"localhost.evil.example:" + port, 403},
		{"127.0.0.1.nip.io:" + port, 403},
	} {
		for _, method := range []string{"GET", "POST"} {
			before := ran
			resp := raw(t, u, method+" /h/ HTTP/1.1\r\nHost: "+tc.host+"\r\nOrigin: http://"+tc.host+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			if got := firstLine(resp); got != fmt.Sprintf("HTTP/1.1 %d %s", tc.code, http.StatusText(tc.code)) {
				t.Errorf("%s Host %q: got %q, want %d", method, tc.host, got, tc.code)
			}
			if tc.code == 403 && (ran != before || !strings.Contains(resp, "Unknown host")) {
				t.Errorf("%s Host %q: handler ran or no reason given: %q", method, tc.host, resp)
			}
		}
	}
	// The absolute form's host counts, not the Host header.
	if resp := raw(t, u, "GET http://evil.example:"+port+"/h/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(resp, "HTTP/1.1 403") {
		t.Errorf("absolute form with a foreign host: %q", firstLine(resp))
	}
}

// Ensure Authorizations protect every request: none or a wrong one gets
// 401 with a Basic challenge (browsers prompt), a valid one outside its
// paths 403, and the handler runs only for a valid one on its paths.
func TestServer_Authorizations(t *testing.T) {
	ran := 0
	h := httpapp.Handler(func(*httpapp.Event) any { ran++; return "ok" })
	_, u := start(t, httpapp.Options{Authorizations: map[string][]string{
		"Basic bWU6cHc=": {"/"}, // me:pw
		"Bearer tok":     {"/a/"},
	}}, &httpapp.App{Module: "http_a", Routes: map[string]any{"GET /*": h, "POST /*": h}},
		&httpapp.App{Module: "http_ab", Routes: map[string]any{"GET /*": h}})
	for _, tc := range []struct {
		method, path, auth string
		code               int
	}{
		{"GET", "/a/x", "", 401},
		{"POST", "/a/x", "", 401},
		{"GET", "/a/x", "Basic bWU6d3Jvbmc=", 401},
		{"GET", "/a/x", "Bearer to", 401},
		{"GET", "/a/x", "basic bWU6cHc=", 401},
		{"GET", "/a/x", "Basic bWU6cHc=", 200},
		{"POST", "/a/x", "Basic bWU6cHc=", 200},
		{"GET", "/ab/x", "Basic bWU6cHc=", 200},
		{"GET", "/a/x", "Bearer tok", 200},
		{"GET", "/a", "Bearer tok", 301},
		{"GET", "/ab/x", "Bearer tok", 403},
		{"GET", "/nothing", "", 401},
	} {
		before := ran
		var hdr []string
		if tc.auth != "" {
			hdr = []string{"Authorization", tc.auth}
		}
		r := do(t, tc.method, u+tc.path, "", hdr...)
		if r.code != tc.code {
			t.Errorf("%s %s %q: got %d %q, want %d", tc.method, tc.path, tc.auth, r.code, r.body, tc.code)
		}
		if tc.code >= 400 && ran != before {
			t.Errorf("%s %s %q: the handler ran", tc.method, tc.path, tc.auth)
		}
		if tc.code == 401 && r.header.Get("WWW-Authenticate") != `Basic realm="cairn modules", charset="UTF-8"` {
			t.Errorf("%s %s: challenge %q", tc.method, tc.path, r.header.Get("WWW-Authenticate"))
		}
	}
	// A browser's form post with the credentials it was prompted for.
	req, _ := http.NewRequest("POST", u+"/a/up", strings.NewReader("x=1"))
	req.SetBasicAuth("me", "pw")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("basic auth post: %v %v", resp, err)
	}
}
