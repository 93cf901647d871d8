// event.go: what a module publishes (App) and what its handlers get
// (Event, Request, Response) and may return.

package httpapp

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/valyala/fasthttp"
)

// Handler answers a request. Its return value, as in Prosody:
//
//   - nil: pass to the next candidate route;
//   - string or []byte: the body, with Response's status and headers;
//   - int >= 400: that status with the default error page;
//   - int < 400: that status, body Response.Body (or empty), no page;
//   - true: the handler has called Response.Send (or SendStream);
//   - false: 200 with an empty body (Prosody's quirk, kept);
//   - *Reply: its fields are copied onto the response and sent, without
//     an error page even for a status >= 400;
//   - *Error: its status (500 when 0) with the error page and its text;
//   - error: a handler failure: 500 page, Connection: close, logged;
//   - Raw: the function answers on the connection's fasthttp context
//     itself (Response is not used).
//
// A panic is caught and treated like an error.
type Handler func(ev *Event) any

// Raw is a handler's answer that writes the whole response itself, on
// the request's fasthttp context: a server of its own mounted as an app
// (the node's HTTP gateway in http_ipfs). The host checks, logins and
// route matching have run; X-Request-Id is set; CORS and error pages are
// the function's own.
type Raw func(c *fasthttp.RequestCtx)

// App is one published web application (Prosody's "http" provider item).
type App struct {
	// Module is the internal module name ("http_hello"); Name, when
	// empty, is derived from it by stripping "http_".
	Module string
	Name   string
	// DefaultPath is the base path when Paths config has no entry;
	// default "/" + name.
	DefaultPath string
	// Routes maps route keys to a Handler (or func(*Event) any) or to a
	// constant value (string, int, *Reply) returned on every request.
	Routes map[string]any
	// StreamingUploads apps get Request.BodyStream instead of a buffered
	// Body (Prosody's streaming_uploads).
	StreamingUploads bool
}

// AppName derives the app name of a module: an exact "http_" prefix is
// stripped ("http_hello" -> "hello"; "httpfoo" and "pastebin" stay).
func AppName(module string) string {
	return strings.TrimPrefix(module, "http_")
}

// Event is the argument of a handler.
type Event struct {
	Request  *Request
	Response *Response
	// Arg is the wildcard argument: request.path minus
	// everything up to the "/" in front of "*". Wildcard tells whether
	// the route was a wildcard at all (an exact route gets Arg "").
	Arg      string
	Wildcard bool
	// Ctx ends when the handler's time is up or the server closes.
	Ctx context.Context
	// App is the name of the app whose route is running.
	App string
	// Base is that app's base path.
	Base string
}

// Request is the request object a handler gets (Prosody's event.request).
type Request struct {
	Method  string
	Path    string // decoded, "//"-collapsed, with the base path
	URL     URL
	Version string // "1.0" or "1.1"
	// Headers has lower-case names with "-" turned into "_"; repeats are
	// joined with ",".
	Headers map[string]string
	// Body is the whole body ("" if none). Nil for streaming apps, which
	// read BodyStream instead.
	Body       []byte
	BodyStream io.Reader
	IP         string // peer IP, or the forwarded client through a trusted proxy
	Secure     bool   // TLS, or X-Forwarded-Proto https from a trusted proxy
	ID         string // short random id, sent back as X-Request-Id
	Conn       ConnInfo
}

// URL is the raw (undecoded) path and query of the request target.
type URL struct {
	Path     string
	Query    string
	HasQuery bool
}

// ConnInfo describes the connection (the raw socket is not exposed).
type ConnInfo struct {
	RemoteAddr string
	LocalAddr  string
	TLS        bool
}

// Header returns a request header by any spelling of its name.
func (r *Request) Header(name string) string {
	return r.Headers[HeaderKey(name)]
}

// HeaderKey turns a header name into the table convention:
// "Content-Type" -> "content_type".
func HeaderKey(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

// HeaderName turns a table key into the wire form: "_" -> "-" and the
// first letter of each alphanumeric word upper-cased ("content_type" ->
// "Content-Type", "etag" -> "Etag").
func HeaderName(key string) string {
	b := []byte(strings.ReplaceAll(key, "_", "-"))
	up := true
	for i, c := range b {
		isAlnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if up && 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
		up = !isAlnum
	}
	return string(b)
}

// Response is the response object a handler fills (Prosody's
// event.response).
type Response struct {
	StatusCode int
	// Status overrides the reason phrase ("299 Whatever" or "Whatever").
	Status string
	// Headers use the table convention of Request.Headers.
	Headers map[string]string
	Body    []byte

	sent       bool
	stream     io.Reader
	streamSize int // -1: unknown (chunked)
}

// Send finishes the response with body (nil: Response.Body). It is a
// no-op once the response is finished.
func (r *Response) Send(body []byte) {
	if r.sent {
		return
	}
	if body != nil {
		r.Body = body
	}
	r.sent = true
}

// SendStream finishes the response with a body read from rd; size is its
// length, or -1 for chunked encoding. rd is closed if it is an io.Closer.
func (r *Response) SendStream(rd io.Reader, size int) {
	if r.sent {
		return
	}
	r.stream, r.streamSize, r.sent = rd, size, true
}

// Finished reports whether Send or SendStream was called.
func (r *Response) Finished() bool { return r.sent }

// Reply is a table return value: its fields are copied onto the
// response and sent as they are.
type Reply struct {
	StatusCode int
	Status     string
	Headers    map[string]string
	Body       []byte
}

// Error is an error object return value (Prosody's util.error): the
// status (500 when 0) with the error page, Text as its extra line.
type Error struct {
	Code int
	Text string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Text) }
