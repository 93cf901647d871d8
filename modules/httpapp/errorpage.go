// errorpage.go: the http-error event, the default error pages (as
// Prosody's mod_http_errors) and the root page.

package httpapp

import (
	"context"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"strings"
)

var errorMessages = map[int][]string{
	400: {"What kind of request do you call that??"},
	403: {"You're not allowed to do that."},
	404: {"Whatever you were looking for is not here. %", "Keep looking.", "It may have wandered off.", "Try another path."},
	413: {"That is more than this board wants to read."},
	500: {"% Check your error log for more info.", "Something broke.", "That went wrong.", "Gremlins at work."},
}

const defaultErrorMessage = "That's all I know."

// reasonRenamed are the IANA names (RFC 9110) that Go's table still
// spells the RFC 7231 way; Prosody's codes table uses the new ones.
var reasonRenamed = map[int]string{
	413: "Content Too Large",
	414: "URI Too Long",
	416: "Range Not Satisfiable",
	422: "Unprocessable Content",
}

// Reason returns the reason phrase of a registered code, "" otherwise.
func Reason(code int) string {
	if t, ok := reasonRenamed[code]; ok {
		return t
	}
	return http.StatusText(code)
}

// StatusLineText is the status line's reason: Reason, or "Unassigned"
// for a code outside the registry (as Prosody's codes table).
func StatusLineText(code int) string {
	if t := Reason(code); t != "" {
		return t
	}
	return "Unassigned"
}

// pageTitle is an error page's title: "<code> <reason>", or "Code <n>"
// for an unregistered code (mod_http_errors).
func pageTitle(code int) string {
	if t := Reason(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprintf("Code %d", code)
}

// message is the page's message for code: the configured one, the
// built-in one, or the default. A "%" in the template is replaced by one
// of the alternatives, picked at random. ok is false when code has no
// message of its own.
func (o *ErrorPages) message(code int) (msg string, ok bool) {
	m, ok := o.Messages[code]
	if !ok {
		m, ok = errorMessages[code]
	}
	if !ok || len(m) == 0 {
		if o.DefaultMessage != "" {
			return o.DefaultMessage, false
		}
		return defaultErrorMessage, false
	}
	if len(m) == 1 {
		return m[0], true
	}
	return strings.Replace(m[0], "%", m[1+rand.IntN(len(m)-1)], 1), true
}

const pageStyle = `body{margin-top:14%;text-align:center;font-family:sans-serif;background:#f8f8f8;color:#222}` +
	`h1{font-size:1.6em}p.extra{color:#666;font-size:.9em}` +
	`@media(prefers-color-scheme:dark){body{background:#161616;color:#ddd}p.extra{color:#999}}`

// EventHTTPError is the server event every error page comes from
// (Prosody's "http-error"): the first hook that returns a
// string gives the body. The server hooks mod_http_errors' two handlers
// itself (the page at priority 0, the root page at 1) and the plain-text
// fallback at -1; a module hooks it to customise pages.
const EventHTTPError = "http-error"

// ErrorEvent is the data of an http-error event.
type ErrorEvent struct {
	Code int
	// Request is nil outside a handler chain (a parse error, an unknown
	// host, an invalid path, a refused login) and for a failed handler.
	Request *Request
	// Response is the response being sent; a hook may set its headers
	// (content_type) and, for the root page, its status.
	Response *Response
	// Message is shown on the page ("Unknown host: x", "Invalid path").
	Message string
	// PrivateMessage is a failure's cause, shown only with
	// ErrorPages.Detailed.
	PrivateMessage string
	// Err is the error object a handler returned ({code=, text=}).
	Err *Error
}

// extra is the page's extra line (mod_http_errors' order).
func (o *ErrorPages) extra(e *ErrorEvent) string {
	switch {
	case o.Detailed && e.PrivateMessage != "":
		return e.PrivateMessage
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Text
	}
	return ""
}

// page renders the HTML page of code, with an optional extra line.
// Every inserted value is escaped.
func page(title, message, extra string) []byte {
	title = html.EscapeString(title)
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=utf-8><meta name=viewport content=\"width=device-width, initial-scale=1\"><title>%s</title><style>%s</style></head><body>", title, pageStyle)
	fmt.Fprintf(&b, "<h1>%s</h1><p>%s</p>", title, html.EscapeString(message))
	if extra != "" {
		fmt.Fprintf(&b, `<p class="extra">%s</p>`, html.EscapeString(extra))
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

// fallbackBody is the plain-text body when no hook gives a page
// (Prosody's net.http.server fallback; no Content-Type).
func fallbackBody(code int) []byte {
	return []byte(fmt.Sprintf("Error processing request: %d %s. Check your error log for more information.", code, StatusLineText(code)))
}

type hookKey string

// hookErrorPages adds the built-in http-error handlers to s.events.
func (s *Server) hookErrorPages() {
	o := &s.opts.Errors
	s.events.Add("http", EventHTTPError, hookKey("fallback"), -1, func(_ context.Context, data any) any {
		if e, ok := data.(*ErrorEvent); ok {
			return fallbackBody(e.Code)
		}
		return nil
	})
	s.events.Add("http_errors", EventHTTPError, hookKey("page"), 0, func(_ context.Context, data any) any {
		e, ok := data.(*ErrorEvent)
		if !ok {
			return nil
		}
		msg, own := o.message(e.Code)
		if o.SkipUnlisted && !own {
			return nil
		}
		if e.Response != nil {
			e.Response.Headers["content_type"] = "text/html; charset=utf-8"
		}
		return page(pageTitle(e.Code), msg, o.extra(e))
	})
	s.events.Add("http_errors", EventHTTPError, hookKey("root"), 1, func(_ context.Context, data any) any {
		e, ok := data.(*ErrorEvent)
		if !ok || e.Request == nil || e.Response == nil || e.Request.Path != "/" || e.Response.StatusCode != 404 {
			return nil
		}
		e.Response.StatusCode = 200
		e.Response.Headers["content_type"] = "text/html; charset=utf-8"
		return rootPage(s.Apps())
	})
}

// rootPage is what "/" shows when no app answers it: the apps mounted.
func rootPage(apps []AppInfo) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=utf-8><meta name=viewport content=\"width=device-width, initial-scale=1\"><title>cairn is running!</title><style>%s</style></head><body>", pageStyle)
	b.WriteString("<h1>cairn is running!</h1>")
	if len(apps) == 0 {
		b.WriteString("<p>No apps are mounted.</p>")
	} else {
		b.WriteString("<p>Apps:</p><p>")
		for i, a := range apps {
			if i > 0 {
				b.WriteString(" · ")
			}
			fmt.Fprintf(&b, `<a href="%s">%s</a>`, html.EscapeString(a.Home), html.EscapeString(a.Name))
		}
		b.WriteString("</p>")
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}
