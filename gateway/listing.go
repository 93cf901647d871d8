// listing.go: the HTML page of a directory without index.html: its path
// as breadcrumbs, its CID and size, and one row per entry (name, CID,
// size from the link, so no child block is read).

package gateway

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"net/http"
	"net/url"
	pathpkg "path"
	"strings"

	"cairn/node"

	"github.com/dustin/go-humanize"
	"github.com/ipfs/boxo/ipld/merkledag"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// listingVersion changes whenever the page's markup does, so that the
// listing's ETag changes with it.
const listingVersion = "cairn-listing-2"

var listingHash = func() string {
	h := fnv.New64a()
	h.Write([]byte(listingVersion))
	return fmt.Sprintf("%x", h.Sum64())
}()

// dirEtag is the ETag of the listing of directory c (Kubo's shape:
// "DirIndex-<page version>_CID-<cid>").
func dirEtag(c cid.Cid) string { return `"DirIndex-` + listingHash + `_CID-` + c.String() + `"` }

func htmlEscape(s string) string { return html.EscapeString(s) }

// escapePath percent-escapes each segment of p.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// serveListing answers the listing of the resolved directory. The page is
// written as the entries are read (a chunked body), so a directory of
// any size costs the same memory.
func (rq *request) serveListing(st node.UnixFSEntry) bool {
	ctx := rq.ctx
	h := &ctx.Response.Header
	h.Set("Content-Type", "text/html")
	h.Set("Etag", dirEtag(rq.res.Cid))
	if cc := rq.listingCacheControl(); cc != "" {
		h.Set("Cache-Control", cc)
	}
	if ctx.IsHead() {
		return false
	}
	pn, ok := rq.res.Node.(*merkledag.ProtoNode)
	if !ok {
		rq.fail(http.StatusInternalServerError, "not a directory")
		return false
	}
	dir, err := uio.NewDirectoryFromNode(rq.s.n.DAG, pn)
	if err != nil {
		rq.failResolve(err)
		return false
	}
	urlPath := string(ctx.Path())
	content := rq.content.String()
	page := listingPage{urlPath: urlPath, content: content, cid: rq.res.Cid, size: st.Size}
	switch {
	case rq.host.dnslink:
		page.dnslinkHost = string(ctx.Host())
	case rq.host.parent != "":
		page.gatewayURL = "//" + rq.host.parent
	}
	return rq.streamChunked(func(c context.Context, w io.Writer) error {
		bw := bufio.NewWriterSize(w, 32<<10)
		if err := writeListing(c, bw, dir, page); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// listingPage is what the page shows besides the entries.
type listingPage struct {
	urlPath string // the request's path (links are made from it)
	content string // the content path
	cid     cid.Cid
	size    uint64
	// gatewayURL prefixes the /ipfs/ paths the page links to: "" on a
	// path gateway, "//<parent host>" on a subdomain.
	gatewayURL string
	// dnslinkHost is the host of a DNSLink site, whose root is the
	// content root; its CIDs link to cid.ipfs.tech (it has no /ipfs/).
	dnslinkHost string
}

// hashLink opens the link of an entry's CID: its /ipfs/ path with the
// entry's name as ?filename= (path-escaped, then query-escaped, as Kubo
// writes it), or its page on cid.ipfs.tech for a DNSLink site.
func (p listingPage) hashLink(c cid.Cid, name string) string {
	if p.dnslinkHost != "" {
		return `<a class="ipfs-hash" translate="no" href="https://cid.ipfs.tech/#` + c.String() + `" target="_blank" rel="noreferrer noopener">`
	}
	href := p.gatewayURL + "/ipfs/" + c.String() + "?filename=" + url.QueryEscape(url.PathEscape(name))
	return `<a class="ipfs-hash" translate="no" href="` + htmlEscape(href) + `">`
}

// breadcrumbs links each segment of the content path after the
// namespace to its own page: under gatewayURL, or below the DNSLink
// host's root.
func (p listingPage) breadcrumbs() string {
	segs := strings.Split(strings.Trim(p.content, "/"), "/")
	var b strings.Builder
	b.WriteString("/" + htmlEscape(segs[0]))
	href := p.gatewayURL + "/" + url.PathEscape(segs[0])
	for i, s := range segs[1:] {
		switch {
		case p.dnslinkHost != "" && i == 0:
			href = "//" + p.dnslinkHost + "/"
		case p.dnslinkHost != "" && i == 1:
			href += url.PathEscape(s)
		default:
			href += "/" + url.PathEscape(s)
		}
		fmt.Fprintf(&b, `/<a href="%s">%s</a>`, htmlEscape(href), htmlEscape(s))
	}
	return b.String()
}

func writeListing(ctx context.Context, w io.Writer, dir uio.Directory, p listingPage) error {
	bw := &errWriter{w: w}
	title := htmlEscape(p.content)
	fmt.Fprintf(bw, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>
body{font-family:system-ui,sans-serif;margin:1em auto;max-width:60em;padding:0 1em;color:#222}
header{display:flex;justify-content:space-between;flex-wrap:wrap;border-bottom:1px solid #ccc;padding-bottom:.5em}
table{width:100%%;border-collapse:collapse;margin-top:1em}
td{padding:.3em .5em;border-bottom:1px solid #eee;word-break:break-all}
.ipfs-hash{font-family:monospace;color:#666}
.size{text-align:right;white-space:nowrap}
a{color:#06c;text-decoration:none}
</style>
</head>
<body>
<header>
<div><strong>Index of</strong> %s</div>
<div class="ipfs-hash" translate="no">%s</div>
<div class="size">%s</div>
</header>
<table>
`, title, p.breadcrumbs(), p.cid, humanize.Bytes(p.size))
	segs := strings.Split(strings.Trim(p.content, "/"), "/")
	if len(segs) > 2 {
		back := p.urlPath
		if strings.HasSuffix(back, "/") {
			back += ".."
		} else {
			back += "/.."
		}
		fmt.Fprintf(bw, "<tr><td>&nbsp;</td><td><a href=\"%s\">..</a></td><td></td><td></td></tr>\n", htmlEscape(escapePath(back)))
	}
	err := dir.ForEachLink(ctx, func(l *ipld.Link) error {
		href := escapePath(pathpkg.Join(p.urlPath, l.Name))
		fmt.Fprintf(bw, "<tr><td>%s</td><td><a href=\"%s\">%s</a></td><td>%s%s</a></td><td class=\"size\">%s</td></tr>\n",
			kindOf(l.Cid), htmlEscape(href), htmlEscape(l.Name), p.hashLink(l.Cid, l.Name), shortHash(l.Cid.String()), humanize.Bytes(l.Size))
		return bw.err
	})
	if err != nil {
		return err
	}
	io.WriteString(bw, "</table>\n</body>\n</html>\n")
	return bw.err
}

// kindOf is a hint of an entry's kind from its CID alone: raw leaves are
// files; dag-pb nodes may be either and are not read.
func kindOf(c cid.Cid) string {
	if c.Type() == cid.Raw {
		return "&#128196;"
	}
	return "&nbsp;"
}

// shortHash is a CID shortened for display, as Kubo's listing shows it.
func shortHash(h string) string {
	if len(h) <= 15 {
		return h
	}
	return h[:4] + "\u2026" + h[len(h)-4:]
}

// errWriter keeps the first write error and drops later writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
