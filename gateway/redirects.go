// redirects.go: a _redirects file at the root of a subdomain or DNSLink
// site (the web redirects file spec): when a path is missing, its first
// matching rule redirects (3xx), rewrites (200) or serves a custom error
// page (404, 410, 451).

package gateway

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"cairn/node"

	redirects "github.com/ipfs/go-ipfs-redirects-file"
)

// redirects applies the site's _redirects to the request; done when it
// answered (streams: the answer's body streams on).
func (rq *request) redirects() (done, streams bool) {
	root := "/ipfs/" + rq.root.String()
	file := root + "/_redirects"
	res, err := rq.s.n.Dag().Resolve(rq.rctx, file)
	if err != nil {
		return false, false // no file: the plain 404
	}
	fail := func(err error) (bool, bool) {
		rq.fail(http.StatusInternalServerError, fmt.Sprintf("trouble processing _redirects file at %q: %v", file, err))
		return true, false
	}
	st, err := rq.s.n.UnixFS().Stat(rq.rctx, res.Node)
	if err != nil {
		return fail(err)
	}
	if st.Kind != node.EntryFile {
		return fail(fmt.Errorf(" _redirects is not a file"))
	}
	var buf bytes.Buffer
	// One byte past the cap, so that the parser sees a file too large.
	if err := rq.s.n.UnixFS().WriteFile(rq.rctx, res.Cid, 0, min(int64(st.Size), redirects.MaxFileSizeInBytes+1), &buf); err != nil {
		return fail(err)
	}
	rules, err := redirects.Parse(&buf)
	if err != nil {
		return fail(fmt.Errorf("could not parse _redirects: %w", err))
	}
	segs := rq.content.Segments()
	if len(segs) <= 2 {
		return false, false
	}
	urlPath := strings.TrimSuffix("/"+strings.Join(segs[2:], "/"), "/")
	for _, rule := range rules {
		if !rule.MatchAndExpandPlaceholders(urlPath) {
			continue
		}
		switch {
		case rule.Status == http.StatusOK:
			return true, rq.serveAt(root+rule.To, 0)
		case rule.Status == 404 || rule.Status == 410 || rule.Status == 451:
			return true, rq.serveAt(root+rule.To, rule.Status)
		case rule.Status >= 301 && rule.Status <= 308:
			to := rule.To
			if q := string(rq.ctx.URI().QueryString()); q != "" {
				u, err := url.Parse(rule.To)
				if err != nil {
					return fail(err)
				}
				tq := u.Query()
				orig, _ := url.ParseQuery(q)
				for k, vs := range orig {
					for _, v := range vs {
						tq.Add(k, v)
					}
				}
				u.RawQuery = tq.Encode()
				to = u.String()
			}
			h := &rq.ctx.Response.Header
			h.Set("Location", to)
			h.Set("Content-Type", "text/html; charset=utf-8")
			rq.ctx.SetStatusCode(rule.Status)
			if !rq.ctx.IsHead() {
				rq.ctx.SetBodyString(`<a href="` + htmlEscape(to) + `">` + http.StatusText(rule.Status) + "</a>.\n\n")
			}
			return true, false
		}
	}
	return false, false
}

// serveAt answers the content at p (under the site's root) in place of
// the request's own, with status when not 0.
func (rq *request) serveAt(p string, status int) bool {
	res, err := rq.s.n.Dag().Resolve(rq.rctx, p)
	if err != nil {
		rq.failResolve(err)
		return false
	}
	rq.res = res
	if status != 0 {
		st, err := rq.s.n.UnixFS().Stat(rq.rctx, res.Node)
		if err != nil || st.Kind != node.EntryFile {
			rq.fail(http.StatusInternalServerError, fmt.Sprintf("could not convert node for %d page to file", status))
			return false
		}
		rq.headers(noTime)
		h := &rq.ctx.Response.Header
		h.Set("Content-Type", "text/html")
		var buf bytes.Buffer
		if err := rq.s.n.UnixFS().WriteFile(rq.rctx, res.Cid, 0, -1, &buf); err != nil {
			rq.failResolve(err)
			return false
		}
		rq.ctx.SetStatusCode(status)
		rq.ctx.SetBody(buf.Bytes())
		return false
	}
	if rq.notModified() {
		return false
	}
	return rq.serveUnixFS()
}
