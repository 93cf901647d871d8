package httpapp_test

import (
	"strings"
	"testing"
	"time"

	"cairn/modules/httpapp"
)

// Ensure reason phrases and titles are those Prosody's codes table
// and mod_http_errors give them.
func TestServer_StatusLine_UnassignedAndVersion(t *testing.T) {
	h := func(v any) httpapp.Handler { return func(*httpapp.Event) any { return v } }
	_, u := start(t, httpapp.Options{}, &httpapp.App{Module: "http_s", Routes: map[string]any{
		"GET /599": h(599),
		"GET /413": h(413),
		"GET /ok":  h("fine"),
		"GET /304": httpapp.Handler(func(ev *httpapp.Event) any {
			ev.Response.Headers["etag"] = `"x"`
			return 304
		}),
	}})
	resp := raw(t, u, "GET /s/599 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if firstLine(resp) != "HTTP/1.1 599 Unassigned" || !strings.Contains(resp, "<title>Code 599</title>") {
		t.Errorf("599: got %q, want status line \"599 Unassigned\" and title \"Code 599\"\n%s", firstLine(resp), resp)
	}
	if resp := raw(t, u, "GET /s/413 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); firstLine(resp) != "HTTP/1.1 413 Content Too Large" || !strings.Contains(resp, "<title>413 Content Too Large</title>") {
		t.Errorf("413: got %q", firstLine(resp))
	}
	resp = raw(t, u, "GET /s/304 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if firstLine(resp) != "HTTP/1.1 304 Not Modified" || !strings.Contains(resp, "\r\nContent-Length: 0\r\n") || !strings.Contains(resp, "\r\nEtag: \"x\"\r\n") || !strings.HasSuffix(resp, "\r\n\r\n") {
		t.Errorf("304: want Content-Length: 0 (Prosody's send() sets it for every status > 199 but 204), got %q", resp)
	}
	resp = raw(t, u, "GET /s/ok HTTP/1.0\r\nHost: x\r\n\r\n")
	if firstLine(resp) != "HTTP/1.0 200 OK" || !strings.HasSuffix(resp, "fine") {
		t.Errorf("HTTP/1.0 request: got %q, want an HTTP/1.0 status line", resp)
	}
	if resp := raw(t, u, "GET /nothing HTTP/1.0\r\nHost: x\r\n\r\n"); firstLine(resp) != "HTTP/1.0 404 Not Found" {
		t.Errorf("HTTP/1.0 404: got %q", firstLine(resp))
	}
}

// Ensure an app's printed URL and its root-page link answer.
func TestServer_AppHome_Answers(t *testing.T) {
	s, u := start(t, httpapp.Options{},
		&httpapp.App{Module: "http_base", Routes: map[string]any{"GET": text("base")}},
		&httpapp.App{Module: "http_slash", Routes: map[string]any{"GET /": text("slash"), "GET": text("base")}},
		&httpapp.App{Module: "http_sub", Routes: map[string]any{"GET /sub": text("sub"), "POST /x": text("x")}},
		&httpapp.App{Module: "http_wild", Routes: map[string]any{"GET /static/*": text("wild")}},
		&httpapp.App{Module: "http_post", Routes: map[string]any{"POST": text("post")}},
	)
	want := map[string]string{"base": "/base", "slash": "/slash/", "sub": "/sub/sub", "wild": "/wild/static/", "post": "/post"}
	for _, a := range s.Apps() {
		if a.Home != want[a.Name] {
			t.Errorf("app %s: home %q, want %q", a.Name, a.Home, want[a.Name])
		}
		if a.Name == "post" {
			continue // no GET route: nothing a browser can open
		}
		if r := do(t, "GET", u+a.Home, ""); r.code != 200 {
			t.Errorf("app %s: GET %s: %d", a.Name, a.Home, r.code)
		}
	}
	root := do(t, "GET", u+"/", "")
	for _, name := range []string{"base", "slash", "sub", "wild"} {
		if !strings.Contains(root.body, `href="`+want[name]+`"`) {
			t.Errorf("root page has no link to %s: %s", want[name], root.body)
		}
	}
}

// Close right after Listen returns (it hung when Serve had not yet
// registered the listener with fasthttp).
func TestServer_Close_RightAfterListen(t *testing.T) {
	for i := 0; i < 20; i++ {
		s, err := httpapp.NewServer(httpapp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Listen("127.0.0.1:0", nil); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Close hung")
		}
	}
}
