package httpapp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cairn/modules/events"
	"cairn/modules/httpapp"
)

// Every error page comes from the server's "http-error" event:
// a hook of higher priority than the built-in page answers instead, it
// sees the code, the request and the message, and may set headers.
func TestServer_HTTPError_HookCustomisesPages(t *testing.T) {
	var bus events.Bus
	var seen []string
	bus.Add("custom", httpapp.EventHTTPError, "k", 1, func(_ context.Context, data any) any {
		e := data.(*httpapp.ErrorEvent)
		path := "-"
		if e.Request != nil {
			path = e.Request.Path
		}
		msg := e.Message
		if e.Err != nil {
			msg = "err " + e.Err.Text
		}
		seen = append(seen, strings.Join([]string{path, msg}, "|"))
		if e.Code == 418 || e.Code == 400 || e.Code == 403 {
			e.Response.Headers["content_type"] = "text/plain"
			e.Response.Headers["x_custom"] = "yes"
			return "custom " + httpapp.StatusLineText(e.Code) + ": " + e.Message
		}
		return nil // the built-in page
	})
	app := &httpapp.App{Module: "http_t", Routes: map[string]any{
		"GET /teapot": func(*httpapp.Event) any { return 418 },
		"GET /err":    func(*httpapp.Event) any { return &httpapp.Error{Code: 403, Text: "no entry"} },
	}}
	_, u := start(t, httpapp.Options{Events: &bus}, app)

	r := do(t, "GET", u+"/t/teapot", "")
	if r.code != 418 || r.body != "custom I'm a teapot: " || r.header.Get("Content-Type") != "text/plain" || r.header.Get("X-Custom") != "yes" {
		t.Errorf("418 from the hook: %d %q %v", r.code, r.body, r.header)
	}
	if r := do(t, "GET", u+"/t/err", ""); r.code != 403 || r.body != "custom Forbidden: " {
		t.Errorf("error object: %d %q", r.code, r.body)
	}
	// The built-in page still answers what the hook passes on.
	if r := do(t, "GET", u+"/t/none", ""); r.code != 404 || !strings.Contains(r.body, "<title>404 Not Found</title>") ||
		r.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("404 through to the built-in page: %d %q", r.code, r.body)
	}
	// Outside a handler: an invalid path (no request), an unknown host.
	if got := raw(t, u, "GET /../x HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 400") || !strings.HasSuffix(got, "custom Bad Request: Invalid path") {
		t.Errorf("invalid path: %q", got)
	}
	if got := raw(t, u, "GET /t/teapot HTTP/1.1\r\nHost: evil.example\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 403") || !strings.HasSuffix(got, "Unknown host: evil.example") {
		t.Errorf("unknown host: %q", got)
	}
	want := []string{"/t/teapot|", "/t/err|err no entry", "/t/none|", "-|Invalid path", "-|Unknown host: evil.example"}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("events seen:\n %q\nwant %q", seen, want)
	}
}

// The root page is an http-error hook of priority 1, as mod_http_errors':
// a hook above it can replace it, and a failed handler's private message
// is shown only with http_errors_detailed.
func TestServer_HTTPError_RootPageAndFailures(t *testing.T) {
	var bus events.Bus
	bus.Add("custom", httpapp.EventHTTPError, "root", 2, func(_ context.Context, data any) any {
		e := data.(*httpapp.ErrorEvent)
		if e.Request != nil && e.Request.Path == "/" && e.Response.StatusCode == 404 {
			e.Response.StatusCode = 200
			return "my own root"
		}
		return nil
	})
	app := &httpapp.App{Module: "http_f", Routes: map[string]any{
		"GET /fail": func(*httpapp.Event) any { return errors.New("secret detail") },
	}}
	_, u := start(t, httpapp.Options{Events: &bus}, app)
	if r := do(t, "GET", u+"/", ""); r.code != 200 || r.body != "my own root" {
		t.Errorf("root page from a hook: %d %q", r.code, r.body)
	}
	r := do(t, "GET", u+"/f/fail", "")
	if r.code != 500 || strings.Contains(r.body, "secret detail") || !strings.Contains(r.body, "<title>500 Internal Server Error</title>") {
		t.Errorf("failure page: %d %q", r.code, r.body)
	}

	_, u = start(t, httpapp.Options{Errors: httpapp.ErrorPages{Detailed: true}}, app)
	if r := do(t, "GET", u+"/", ""); r.code != 200 || !strings.Contains(r.body, "cairn is running!") {
		t.Errorf("built-in root page: %d %q", r.code, r.body)
	}
	if r := do(t, "GET", u+"/f/fail", ""); r.code != 500 || !strings.Contains(r.body, `<p class="extra">secret detail</p>`) {
		t.Errorf("detailed failure page: %d %q", r.code, r.body)
	}
}

// mod_http_errors' options: messages per code (a "%" picks one of the
// alternatives), the default message, and always_show = false, which
// leaves codes without a message to the plain-text fallback.
func TestServer_HTTPError_Options(t *testing.T) {
	app := &httpapp.App{Module: "http_o", Routes: map[string]any{
		"GET /gone":   func(*httpapp.Event) any { return 410 },
		"GET /teapot": func(*httpapp.Event) any { return 418 },
	}}
	_, u := start(t, httpapp.Options{Errors: httpapp.ErrorPages{
		Messages:       map[int][]string{404: {"Nothing at % today.", "this path"}, 410: {"Gone for good."}},
		DefaultMessage: "Ask the admin.",
	}}, app)
	if r := do(t, "GET", u+"/o/x", ""); !strings.Contains(r.body, "<p>Nothing at this path today.</p>") {
		t.Errorf("404 message: %q", r.body)
	}
	if r := do(t, "GET", u+"/o/teapot", ""); !strings.Contains(r.body, "<p>Ask the admin.</p>") {
		t.Errorf("default message: %q", r.body)
	}
	_, u = start(t, httpapp.Options{Errors: httpapp.ErrorPages{SkipUnlisted: true}}, app)
	r := do(t, "GET", u+"/o/teapot", "")
	if r.code != 418 || r.body != "Error processing request: 418 I'm a teapot. Check your error log for more information." || r.header.Get("Content-Type") != "" {
		t.Errorf("always_show=false, no message for 418: %d %q %v", r.code, r.body, r.header)
	}
	if r := do(t, "GET", u+"/o/x", ""); r.code != 404 || !strings.Contains(r.body, "<title>404 Not Found</title>") {
		t.Errorf("always_show=false, 404 has a message: %d %q", r.code, r.body)
	}
}
