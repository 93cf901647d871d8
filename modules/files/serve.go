// serve.go: serving one request: sanitize the path, stat it, set the
// validators and answer 304 when the request still matches them, redirect
// a directory named without its trailing slash (301), then answer the
// directory (an index file, the directory-index event, or 403) or the
// file (read whole or streamed).

package files

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"cairn/modules/events"
	"cairn/modules/httpapp"
	"cairn/modules/modapi"
)

// smallFile is the size up to which a file is read whole instead of
// streamed.
const smallFile = 64 << 10

// Options are serve()'s options.
type Options struct {
	// Path is a folder, a single file, or an /ipfs/ path ("/ipfs" alone
	// serves every CID: /ipfs/<cid>/...). Required.
	Path string
	// DirectoryIndex fires the directory-index event for directories
	// without an index file; off means 403 there.
	DirectoryIndex bool
	// IndexFiles are tried in order in a directory (index.html,
	// index.htm).
	IndexFiles []string
	// MimeMap maps extensions (case-sensitive, without the dot) to
	// Content-Types ahead of the built-in lookup (serve's mime_map).
	MimeMap map[string]string
	// Node is needed for /ipfs/ paths; Events (the HTTP server's)
	// carries directory-index.
	Node   modapi.NodeView
	Events *events.Bus
}

// Serve returns a handler that serves o.Path. On a wildcard route the
// wildcard argument names the file below Path; on an exact route Path
// itself is served.
func Serve(o Options) httpapp.Handler {
	if o.IndexFiles == nil {
		o.IndexFiles = []string{"index.html", "index.htm"}
	}
	var src source = dirSource{base: o.Path}
	if o.Path == "/ipfs" || strings.HasPrefix(o.Path, "/ipfs/") {
		src = ipfsSource{base: strings.TrimSuffix(o.Path, "/"), node: o.Node}
	}
	return func(ev *httpapp.Event) any { return serve(ev, o, src) }
}

// Sanitize turns a wildcard argument into an absolute clean path: each
// segment is percent-decoded again; a decoded segment holding "/" or NUL,
// or a ".." above the root, is an error; "." and empty segments are
// dropped; a trailing "/" is kept.
func Sanitize(arg string) (string, error) {
	var out []string
	for _, seg := range strings.Split(arg, "/") {
		d := httpapp.URLDecode(seg)
		if strings.ContainsAny(d, "/\x00") {
			return "", errBadPath
		}
		switch d {
		case "..":
			if len(out) == 0 {
				return "", errBadPath
			}
			out = out[:len(out)-1]
		case ".", "":
		default:
			out = append(out, d)
		}
	}
	p := "/" + strings.Join(out, "/")
	if len(out) > 0 && strings.HasSuffix(arg, "/") {
		p += "/"
	}
	return p, nil
}

var errBadPath = errors.New("invalid path")

// readCloser reads through a buffer in front of the original reader and
// closes the original.
type readCloser struct {
	io.Reader
	orig io.Reader
}

func (r readCloser) Close() error {
	if c, ok := r.orig.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func encodePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = httpapp.URLEncode(s)
	}
	return strings.Join(segs, "/")
}

func serve(ev *httpapp.Event, o Options, src source) any {
	req, resp := ev.Request, ev.Response
	var clean string
	var trailing bool
	prefix := req.Path
	if ev.Wildcard {
		var err error
		clean, err = Sanitize(ev.Arg)
		if err != nil {
			return &httpapp.Error{Code: 400, Text: "Invalid path"}
		}
		trailing = strings.HasSuffix(clean, "/")
		prefix = strings.TrimSuffix(req.Path[:len(req.Path)-len(ev.Arg)], "/")
	} else {
		clean, trailing = "/", strings.HasSuffix(req.Path, "/")
		prefix = strings.TrimSuffix(req.Path, "/")
	}
	rel := clean
	if len(rel) > 1 {
		rel = strings.TrimSuffix(rel, "/")
	}
	inf, err := src.stat(ev.Ctx, rel)
	if err != nil {
		return statError(err)
	}
	setValidators(resp, inf)
	if notModified(req, inf) {
		return 304
	}
	if inf.isDir {
		if !trailing {
			resp.Headers["location"] = prefix + encodePath(rel) + "/"
			if rel == "/" {
				resp.Headers["location"] = prefix + "/"
			}
			return 301
		}
		return serveDir(ev, o, src, rel)
	}
	return serveFile(ev, src, rel, inf, o.MimeMap)
}

func statError(err error) any {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 404
	case errors.Is(err, errForbidden):
		return 403
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &httpapp.Error{Code: 504, Text: "Timed out"}
	}
	return err
}

func setValidators(resp *httpapp.Response, inf info) {
	resp.Headers["etag"] = inf.etag
	if inf.lastModified != "" {
		resp.Headers["last_modified"] = inf.lastModified
	}
	if inf.immutable {
		resp.Headers["cache_control"] = "public, max-age=29030400, immutable"
	}
}

// notModified reports a conditional request the file still matches:
// byte-equal If-None-Match, or, without one, byte-equal If-Modified-Since.
func notModified(req *httpapp.Request, inf info) bool {
	if inm, ok := req.Headers["if_none_match"]; ok {
		return inm == inf.etag
	}
	ims, ok := req.Headers["if_modified_since"]
	return ok && inf.lastModified != "" && ims == inf.lastModified
}

func serveDir(ev *httpapp.Event, o Options, src source, rel string) any {
	for _, name := range o.IndexFiles {
		p := strings.TrimSuffix(rel, "/") + "/" + name
		inf, err := src.stat(ev.Ctx, p)
		if err == nil && !inf.isDir {
			setValidators(ev.Response, inf)
			return serveFile(ev, src, p, inf, o.MimeMap)
		}
	}
	if !o.DirectoryIndex {
		return 403
	}
	entries, err := src.list(ev.Ctx, rel)
	if err != nil {
		return 403
	}
	full := src.full(rel)
	if !strings.HasSuffix(full, "/") {
		full += "/"
	}
	page, ok := o.Events.Fire(ev.Ctx, modapi.EventDirectoryIndex, &modapi.DirectoryIndex{Path: ev.Request.Path, FullPath: full, Entries: entries}).(string)
	if !ok {
		return 403
	}
	ev.Response.Headers["content_type"] = "text/html; charset=utf-8"
	return page
}

func serveFile(ev *httpapp.Event, src source, rel string, inf info, mimeMap map[string]string) any {
	r, err := src.open(ev.Ctx, rel, inf)
	if err != nil {
		return statError(err)
	}
	// The type comes from the file's own name: on an exact route rel is
	// "/" and the name is the served path itself.
	ty := typeOf(src.full(rel), mimeMap)
	if inf.immutable {
		// Content from the node's storage often has no file name: sniff
		// it, and tell browsers not to second-guess the answer. An opaque
		// origin keeps uploaded pages' scripts away from the other apps.
		if ty == "" {
			br := bufio.NewReaderSize(r, 512)
			head, _ := br.Peek(512)
			ty = http.DetectContentType(head)
			r = readCloser{br, r}
		}
		ev.Response.Headers["x_content_type_options"] = "nosniff"
		ev.Response.Headers["content_security_policy"] = sandboxCSP
	}
	if ty != "" {
		ev.Response.Headers["content_type"] = ty
	}
	// For HEAD the server writes the headers only and closes r itself.
	ev.Response.SendStream(r, int(inf.size))
	return true
}

// sandboxCSP puts content from the node's storage in an opaque origin, so
// that an uploaded page's scripts cannot act as the other apps of the
// module ports (the status page's upload).
const sandboxCSP = "sandbox allow-scripts allow-forms allow-popups allow-modals"
