// unixfs.go: the deserialized answer for UnixFS content: a file (whole,
// one range or several), a symlink (its target), a directory (redirect to
// the trailing slash, its index.html, or a listing: listing.go).

package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	pathpkg "path"
	"regexp"
	"strings"
	"time"

	"cairn/node"

	"github.com/ipfs/go-cid"
	"github.com/valyala/fasthttp"
)

// sniffLen is how much of a file decides its type when its name does not.
const sniffLen = 512

// serveUnixFS answers the resolved node as UnixFS.
func (rq *request) serveUnixFS() bool {
	switch rq.res.Cid.Type() {
	case cid.Raw, cid.DagProtobuf:
	default:
		rq.fail(http.StatusNotImplemented, fmt.Sprintf("codec 0x%x is not served deserialized by this gateway yet", rq.res.Cid.Type()))
		return false
	}
	st, err := rq.s.n.UnixFS().Stat(rq.rctx, rq.res.Node)
	if err != nil {
		rq.failResolve(err)
		return false
	}
	switch st.Kind {
	case node.EntryDir:
		return rq.serveDir(st)
	case node.EntrySymlink:
		rq.headers(st.ModTime)
		rq.disposition()
		rq.ctx.Response.Header.Set("Content-Type", "inode/symlink")
		rq.ctx.Response.Header.Set("Accept-Ranges", "bytes")
		rq.ctx.SetBodyString(st.Target)
		return false
	}
	return rq.serveFile(rq.res.Cid, int64(st.Size), st.ModTime, rq.fileName())
}

// headers sets the validators and caching of content.
func (rq *request) headers(mtime time.Time) {
	h := &rq.ctx.Response.Header
	if e := rq.etag(); e != "" {
		h.Set("Etag", e)
	}
	if cc := rq.cacheControl(); cc != "" {
		h.Set("Cache-Control", cc)
	}
	if !mtime.IsZero() && mtime.Unix() != 0 {
		h.Set("Last-Modified", mtime.UTC().Format(http.TimeFormat))
	}
}

// fileName is the name a file's type comes from: ?filename=, else the
// last segment of a path below the root CID.
func (rq *request) fileName() string {
	if f := string(rq.ctx.QueryArgs().Peek("filename")); f != "" {
		return f
	}
	s := rq.content.String()
	if strings.Count(pathpkg.Clean(s), "/") <= 2 {
		return ""
	}
	return pathpkg.Base(s)
}

var nonASCII = regexp.MustCompile("[[:^ascii:]]")

// disposition sets Content-Disposition for ?filename= (attachment with
// download=true), with an ASCII fallback name and the UTF-8 one.
func (rq *request) disposition() {
	name := string(rq.ctx.QueryArgs().Peek("filename"))
	if name == "" {
		return
	}
	kind := "inline"
	if string(rq.ctx.QueryArgs().Peek("download")) == "true" {
		kind = "attachment"
	}
	setDisposition(&rq.ctx.Response.Header, kind, name)
}

// setDisposition sets Content-Disposition with an ASCII fallback name and
// the UTF-8 one.
func setDisposition(h *fasthttp.ResponseHeader, kind, name string) {
	h.Set("Content-Disposition", fmt.Sprintf(`%s; filename="%s"; filename*=UTF-8''%s`,
		kind, url.PathEscape(nonASCII.ReplaceAllLiteralString(name, "_")), url.PathEscape(name)))
}

// attachment sets Content-Disposition: attachment, named by ?filename=
// or else name.
func (rq *request) attachment(name string) {
	if f := string(rq.ctx.QueryArgs().Peek("filename")); f != "" {
		name = f
	}
	setDisposition(&rq.ctx.Response.Header, "attachment", name)
}

// noTime: no Last-Modified.
var noTime time.Time

// serveFile answers the UnixFS file c of size bytes: its type from name,
// else sniffed from its first bytes.
func (rq *request) serveFile(c cid.Cid, size int64, mtime time.Time, name string) bool {
	if string(rq.ctx.Request.Header.Peek("Range")) != "" && rq.s.maxFile > 0 && size > rq.s.maxFile {
		rq.fail(http.StatusNotImplemented, fmt.Sprintf("range requests not supported for files larger than %d bytes: switch to verifiable block requests (application/vnd.ipld.raw)", rq.s.maxFile))
		return false
	}
	ty := mime.TypeByExtension(pathpkg.Ext(name))
	if ty == "" {
		var head bytes.Buffer
		if err := rq.s.n.UnixFS().WriteFile(rq.rctx, c, 0, sniffLen, &head); err != nil {
			rq.failResolve(err)
			return false
		}
		ty = sniff(head.Bytes())
	}
	if strings.HasPrefix(ty, "text/html;") {
		ty = "text/html"
	}
	rq.headers(mtime)
	rq.disposition()
	return rq.serveContent(unixfsReader(rq.s.n.UnixFS(), c), size, ty)
}

// serveContent answers size bytes of type ty read by read: whole, or for
// a Range one part (206) or several (206, multipart/byteranges). The
// bytes stream after the handler returns.
func (rq *request) serveContent(read readAt, size int64, ty string) bool {
	ctx := rq.ctx
	ranges, err := parseRange(string(ctx.Request.Header.Peek("Range")), size)
	if err != nil {
		if errors.Is(err, errNoOverlap) {
			ctx.Response.Header.Set("Content-Range", fmt.Sprintf("bytes */%d", size))
			rq.fail(http.StatusRequestedRangeNotSatisfiable, err.Error())
			return false
		}
		rq.fail(http.StatusBadRequest, "invalid range request: "+err.Error())
		return false
	}
	h := &ctx.Response.Header
	h.Set("Accept-Ranges", "bytes")
	body := &fileBody{ctx: rq.sctx, read: read}
	var length int64
	switch {
	case len(ranges) == 0:
		h.Set("Content-Type", ty)
		body.parts = []part{{off: 0, n: size}}
		length = size
	case len(ranges) == 1:
		r := ranges[0]
		h.Set("Content-Type", ty)
		h.Set("Content-Range", r.contentRange(size))
		ctx.SetStatusCode(http.StatusPartialContent)
		body.parts = []part{{off: r.start, n: r.length}}
		length = r.length
	default:
		boundary := newBoundary()
		h.Set("Content-Type", "multipart/byteranges; boundary="+boundary)
		ctx.SetStatusCode(http.StatusPartialContent)
		for i, r := range ranges {
			var pre strings.Builder
			if i > 0 {
				pre.WriteString("\r\n")
			}
			fmt.Fprintf(&pre, "--%s\r\nContent-Range: %s\r\nContent-Type: %s\r\n\r\n", boundary, r.contentRange(size), ty)
			body.parts = append(body.parts, part{prefix: pre.String(), off: r.start, n: r.length})
			length += int64(pre.Len()) + r.length
		}
		body.trailer = "\r\n--" + boundary + "--\r\n"
		length += int64(len(body.trailer))
	}
	if ctx.IsHead() || length == 0 {
		h.SetContentLength(int(length))
		ctx.Response.SkipBody = ctx.IsHead()
		return false
	}
	body.length = length
	ctx.Response.SetBodyStream(body, int(length))
	rq.body = body
	return true
}

// serveDir answers a directory: a path without its trailing slash is
// redirected (301) unless ?go-get=1; then index.html if there is one,
// else a listing.
func (rq *request) serveDir(st node.UnixFSEntry) bool {
	if string(rq.ctx.QueryArgs().Peek("go-get")) != "1" && rq.redirectToSlash() {
		return false
	}
	idx, err := rq.s.n.Dag().Resolve(rq.rctx, "/ipfs/"+rq.res.Cid.String()+"/index.html")
	switch {
	case err == nil:
		ist, err := rq.s.n.UnixFS().Stat(rq.rctx, idx.Node)
		if err != nil {
			rq.failResolve(err)
			return false
		}
		if ist.Kind != node.EntryFile {
			rq.fail(http.StatusUnprocessableEntity, "index.html could not be read: not a file")
			return false
		}
		// The ETag stays the directory's, as in Kubo.
		return rq.serveFile(idx.Cid, int64(ist.Size), ist.ModTime, "index.html")
	case errors.Is(err, node.ErrNoLink):
	default:
		rq.failResolve(err)
		return false
	}
	return rq.serveListing(st)
}

// redirectToSlash answers 301 to the path with a trailing slash (the
// query kept) when it has none, as Go's http.Redirect answers.
func (rq *request) redirectToSlash() bool {
	ctx := rq.ctx
	orig := string(ctx.URI().PathOriginal())
	if strings.HasSuffix(orig, "/") {
		return false
	}
	loc := orig + "/"
	if q := string(ctx.URI().QueryString()); q != "" {
		loc += "?" + url.PathEscape(q)
	}
	ctx.Response.Header.Set("Location", loc)
	ctx.Response.Header.Set("Content-Type", "text/html; charset=utf-8")
	ctx.SetStatusCode(http.StatusMovedPermanently)
	if !ctx.IsHead() {
		ctx.SetBodyString(`<a href="` + htmlEscape(loc) + `">Moved Permanently</a>.` + "\n\n")
	}
	return true
}

// listingCacheControl is the Cache-Control of a generated listing: a
// week for /ipfs/, the name's TTL for /ipns/.
func (rq *request) listingCacheControl() string {
	if rq.ttl > 0 {
		return fmt.Sprintf("public, max-age=%d, stale-while-revalidate=2678400", int(rq.ttl.Seconds()))
	}
	if !rq.content.Mutable() {
		return "public, max-age=604800, stale-while-revalidate=2678400"
	}
	return ""
}

// sniff is the type of content starting with head: Go's sniffing, and
// JSON text (a document, or the start of one, that parses) as
// application/json; empty content is text/plain.
func sniff(head []byte) string {
	if len(head) == 0 {
		return "text/plain"
	}
	ty := http.DetectContentType(head)
	if !strings.HasPrefix(ty, "text/plain") {
		return ty
	}
	t := bytes.TrimSpace(head)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return ty
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	for {
		_, err := dec.Token()
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return "application/json"
		}
		if err != nil {
			return ty
		}
	}
}
