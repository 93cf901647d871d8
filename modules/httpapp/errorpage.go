// errorpage.go: the default error pages (spec §5) and the root page.

package httpapp

import (
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

func errorMessage(code int) string {
	m, ok := errorMessages[code]
	if !ok {
		return defaultErrorMessage
	}
	if len(m) == 1 {
		return m[0]
	}
	return strings.Replace(m[0], "%", m[1+rand.IntN(len(m)-1)], 1)
}

const pageStyle = `body{margin-top:14%;text-align:center;font-family:sans-serif;background:#f8f8f8;color:#222}` +
	`h1{font-size:1.6em}p.extra{color:#666;font-size:.9em}` +
	`@media(prefers-color-scheme:dark){body{background:#161616;color:#ddd}p.extra{color:#999}}`

// ErrorPage renders the HTML page of status code, with an optional extra
// line. Every inserted value is escaped.
func ErrorPage(code int, extra string) []byte {
	title := html.EscapeString(pageTitle(code))
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>%s</title><style>%s</style></head><body>", title, pageStyle)
	fmt.Fprintf(&b, "<h1>%s</h1><p>%s</p>", title, html.EscapeString(errorMessage(code)))
	if extra != "" {
		fmt.Fprintf(&b, `<p class="extra">%s</p>`, html.EscapeString(extra))
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

// rootPage is what "/" shows when no app answers it: the apps mounted.
func rootPage(apps []AppInfo) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>cairn is running!</title><style>%s</style></head><body>", pageStyle)
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
