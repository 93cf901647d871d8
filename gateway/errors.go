// errors.go: error answers: the plain text Kubo's gateway sends to
// programs, and a small HTML page for browsers.

package gateway

import (
	"errors"
	"fmt"
	"html"
	"net/http"

	ipld "github.com/ipfs/go-ipld-format"
	"github.com/valyala/fasthttp"
)

// isNotFound reports a block or node that cannot be had: missing from the
// store (offline, Gateway.NoFetch) or from the network.
func isNotFound(err error) bool {
	var nf ipld.ErrNotFound
	return errors.As(err, &nf) || ipld.IsNotFound(err)
}

// htmlError answers code with a page that says what went wrong.
func htmlError(ctx *fasthttp.RequestCtx, code int, msg string) {
	plainError(ctx, code, msg)
	ctx.Response.Header.Set("Content-Type", "text/html")
	text := html.EscapeString(http.StatusText(code))
	ctx.SetBodyString(fmt.Sprintf(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>%d %s</title></head>
<body>
<h1>%d %s</h1>
<pre>%s</pre>
<p>The gateway could not serve this request.</p>
</body>
</html>
`, code, text, code, text, html.EscapeString(msg)))
}
