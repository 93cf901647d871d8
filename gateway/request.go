// request.go: one GET or HEAD of /ipfs/ or /ipns/: the content path, the
// response format asked for (?format= or Accept), resolving the path, the
// conditional checks, and the choice of answer (unixfs.go, trustless.go).

package gateway

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cairn/node"

	"github.com/ipfs/boxo/path"
	"github.com/ipfs/boxo/path/resolver"
	"github.com/ipfs/go-cid"
	"github.com/ipld/go-ipld-prime/datamodel"
	"github.com/ipld/go-ipld-prime/schema"
	"github.com/valyala/fasthttp"
)

// Response formats, by media type.
const (
	fmtRaw        = "application/vnd.ipld.raw"
	fmtCar        = "application/vnd.ipld.car"
	fmtTar        = "application/x-tar"
	fmtJSON       = "application/json"
	fmtCBOR       = "application/cbor"
	fmtDagJSON    = "application/vnd.ipld.dag-json"
	fmtDagCBOR    = "application/vnd.ipld.dag-cbor"
	fmtIpnsRecord = "application/vnd.ipfs.ipns-record"
)

// formatParams maps ?format= values to media types.
var formatParams = map[string]string{
	"raw": fmtRaw, "car": fmtCar, "tar": fmtTar, "json": fmtJSON, "cbor": fmtCBOR,
	"dag-json": fmtDagJSON, "dag-cbor": fmtDagCBOR, "ipns-record": fmtIpnsRecord,
}

// immutableCache is the Cache-Control of /ipfs/ content.
const immutableCache = "public, max-age=29030400, immutable"

// request is the state of one request.
type request struct {
	s   *Server
	ctx *fasthttp.RequestCtx
	// sctx bounds the whole request (Gateway.MaxRequestDuration) and
	// streams its body; rctx, below it, bounds the work before the first
	// byte (Gateway.RetrievalTimeout). Both are offline under NoFetch.
	sctx, rctx context.Context

	path    string    // the content path the URL stands for (its Host considered)
	host    hostRoute // what the Host made of the request
	content path.Path // path, parsed
	format  string    // media type asked for; "" for the deserialized default
	params  map[string]string
	ttl     time.Duration // of an /ipns/ name; 0: unknown

	res  node.Resolved
	root cid.Cid // the root CID of the resolved path (of an /ipns/ name's target)
	// body is set when the answer streams after the handler returns.
	body streamer
}

// streamer is a body that ends its request when it is done.
type streamer interface{ setDone(func()) }

// serve answers the request; true when the answer's body streams on
// (rq.body) and ends the request itself.
func (rq *request) serve() bool {
	ctx := rq.ctx
	p, err := path.NewPath(rq.path)
	if err != nil {
		rq.fail(http.StatusBadRequest, err.Error())
		return false
	}
	rq.content = p
	rq.format, rq.params, err = responseFormat(ctx)
	if err != nil {
		rq.fail(http.StatusBadRequest, "error while processing the Accept header: "+err.Error())
		return false
	}
	ctx.Response.Header.Set("Ipfs-Uri", ipfsURI(p))
	deserialized := rq.s.cfg.DeserializedResponses.WithDefault(true)
	if rq.host.gw != nil {
		deserialized = rq.host.gw.deserialized
	}
	if !deserialized && !rq.trustless() {
		rq.fail(http.StatusNotAcceptable, "only trustless requests are accepted on this gateway: https://specs.ipfs.tech/http-gateways/trustless-gateway/")
		return false
	}
	rq.contentLocation()
	switch rq.format {
	case "", fmtJSON, fmtCBOR, fmtRaw, fmtCar, fmtDagJSON, fmtDagCBOR:
	case fmtTar:
	case fmtIpnsRecord:
		return rq.serveIpnsRecord()
	default:
		rq.fail(http.StatusBadRequest, "unsupported response format requested")
		return false
	}
	if rq.onlyIfCached() {
		return false
	}
	if rq.format == fmtCar {
		// The CAR walks the path itself, noting the blocks it reads.
		return rq.serveCAR()
	}
	if err := rq.resolve(); err != nil {
		if rq.format == "" && rq.host.origin && rq.root.Defined() && statusOf(err) == http.StatusNotFound {
			if done, streams := rq.redirects(); done {
				return streams
			}
		}
		rq.failResolve(err)
		return false
	}
	switch rq.format {
	case fmtTar:
		if rq.notModified() {
			return false
		}
		return rq.serveTar()
	case fmtRaw:
		if rq.notModified() {
			return false
		}
		return rq.serveRaw()
	}
	if rq.notModified() {
		return false
	}
	if _, isData := codecType[rq.res.Cid.Type()]; isData || rq.format == fmtDagJSON || rq.format == fmtDagCBOR {
		return rq.serveCodec()
	}
	return rq.serveUnixFS()
}

// ipfsURI is the content path as a native URI, with the root CID in
// version 1 (the Ipfs-Uri header Kubo 0.43 sends in place of X-Ipfs-Path).
func ipfsURI(p path.Path) string {
	segs := p.Segments()
	root := segs[1]
	if !p.Mutable() {
		if c, err := cid.Decode(root); err == nil {
			root = cid.NewCidV1(c.Type(), c.Hash()).String()
		}
	}
	u := p.Namespace() + "://" + root
	if len(segs) > 2 {
		u += "/" + strings.Join(segs[2:], "/")
	}
	if strings.HasSuffix(p.String(), "/") && !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// onlyIfCached answers 412 to Cache-Control: only-if-cached when the
// content cannot be resolved from the store alone.
func (rq *request) onlyIfCached() bool {
	if !strings.Contains(string(rq.ctx.Request.Header.Peek("Cache-Control")), "only-if-cached") {
		return false
	}
	ctx := node.OfflineContext(rq.rctx)
	ip, _, err := rq.s.n.Names().ResolveTTL(ctx, rq.content.String())
	if err == nil {
		_, err = rq.s.n.Dag().Resolve(ctx, ip.String())
		if ip.RootCid().Type() != cid.DagProtobuf && ip.RootCid().Type() != cid.Raw {
			_, err = rq.s.n.Block().Get(ctx, ip.RootCid())
		}
	}
	if err == nil {
		return false
	}
	if rq.ctx.IsHead() {
		rq.ctx.SetStatusCode(http.StatusPreconditionFailed)
		return true
	}
	rq.fail(http.StatusPreconditionFailed, fmt.Sprintf("%q %s", rq.content.String(), errNotCached))
	return true
}

// trustless reports a request the trustless gateway answers: a raw block
// or CAR of /ipfs/<cid> (a CAR may have a path).
func (rq *request) trustless() bool {
	segs := strings.Split(strings.Trim(rq.content.String(), "/"), "/")
	if rq.content.Mutable() {
		return false
	}
	if rq.format != fmtCar && len(segs) != 2 {
		return false
	}
	if _, err := cid.Decode(segs[1]); err != nil {
		return false
	}
	return rq.format == fmtRaw || rq.format == fmtCar
}

// responseFormat is the media type asked for: ?format= wins over Accept;
// Accept's first IPLD, IPFS, tar, JSON or CBOR type counts, with its
// parameters (kept when ?format= names the same type).
func responseFormat(ctx *fasthttp.RequestCtx) (string, map[string]string, error) {
	var fromParam string
	if f := string(ctx.QueryArgs().Peek("format")); f != "" {
		fromParam = formatParams[f]
	}
	var accept string
	var params map[string]string
	for _, v := range strings.Split(string(ctx.Request.Header.Peek("Accept")), ",") {
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "application/vnd.ipld") || strings.HasPrefix(v, "application/vnd.ipfs") ||
			strings.HasPrefix(v, fmtTar) || strings.HasPrefix(v, fmtJSON) || strings.HasPrefix(v, fmtCBOR) {
			mt, ps, err := mime.ParseMediaType(v)
			if err != nil {
				return "", nil, err
			}
			accept, params = mt, ps
			break
		}
	}
	if fromParam != "" {
		if accept == fromParam {
			return fromParam, params, nil
		}
		return fromParam, nil, nil
	}
	return accept, params, nil
}

// contentLocation names the answer's ?format= URL when the format came
// from Accept, so caches keep the variants apart.
func (rq *request) contentLocation() {
	if rq.format == "" {
		return
	}
	var name string
	for k, v := range formatParams {
		if v == rq.format {
			name = k
		}
	}
	if name == "" || string(rq.ctx.QueryArgs().Peek("format")) == name {
		return
	}
	q := url.Values{}
	rq.ctx.QueryArgs().VisitAll(func(k, v []byte) { q.Add(string(k), string(v)) })
	q.Set("format", name)
	for k, v := range rq.params {
		if !q.Has(name + "-" + k) {
			q.Set(name+"-"+k, v)
		}
	}
	rq.ctx.Response.Header.Set("Content-Location", string(rq.ctx.Path())+"?"+q.Encode())
}

// resolve walks the content path to its last node. /ipns/ names are
// resolved through the node's namesys first.
func (rq *request) resolve() error {
	ip, ttl, err := rq.s.n.Names().ResolveTTL(rq.rctx, rq.content.String())
	if err != nil {
		return err
	}
	rq.ttl = ttl
	rq.root = ip.RootCid()
	var res node.Resolved
	switch ip.RootCid().Type() {
	case cid.DagProtobuf, cid.Raw:
		// UnixFS directories, noting every node on the way.
		res, err = rq.s.n.Dag().Resolve(rq.rctx, ip.String())
	default:
		// Paths through IPLD data (dag-cbor, dag-json) follow links.
		res, err = rq.resolveIPLD(ip)
	}
	if err != nil {
		return err
	}
	rq.res = res
	roots := make([]string, 0, len(res.Roots)+1)
	for _, c := range res.Roots {
		roots = append(roots, c.String())
	}
	roots = append(roots, res.Cid.String())
	rq.ctx.Response.Header.Set("X-Ipfs-Roots", strings.Join(roots, ","))
	return nil
}

// resolveIPLD resolves a path that starts at a block of another codec
// than dag-pb or raw: each segment follows a link of the data. A path
// that ends inside a block (not at a link) is refused, as Kubo refuses
// it.
func (rq *request) resolveIPLD(ip path.ImmutablePath) (node.Resolved, error) {
	c, rest, err := rq.s.n.Dag().ResolvePath(rq.rctx, ip.String())
	if err != nil {
		return node.Resolved{}, err
	}
	if len(rest) > 0 {
		remainder := path.SegmentsToString(rest...)
		at := strings.TrimSuffix(ip.String(), remainder)
		return node.Resolved{}, &statusError{code: http.StatusNotImplemented, err: fmt.Errorf(
			"%q of %q could not be returned: reading IPLD Kinds other than Links (CBOR Tag 42) is not implemented: try reading %q instead", remainder, ip.String(), at)}
	}
	res := node.Resolved{Cid: c}
	if !c.Equals(ip.RootCid()) {
		res.Roots = []cid.Cid{ip.RootCid()}
	}
	if c.Type() == cid.DagProtobuf || c.Type() == cid.Raw {
		// A link into UnixFS: the deserialized answer needs the node.
		nd, err := rq.s.n.DAG.Get(rq.rctx, c)
		if err != nil {
			return node.Resolved{}, err
		}
		res.Node = nd
	}
	return res, nil
}

// statusError is an error answered with its own status code.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// etag is the ETag of the resolved node in the asked format.
func (rq *request) etag() string { return etagOf(rq.res.Cid, rq.format) }

// etagOf is the ETag of c answered as format: "<cid>" for UnixFS,
// "<cid>.<short format>" for other formats and for the data codecs
// (answered as their own type), weak (W/) for a tar, whose bytes may
// differ between two answers of one tree; none for CARs and records.
func etagOf(c cid.Cid, format string) string {
	if format == "" {
		format = codecType[c.Type()]
	}
	switch format {
	case "":
		return `"` + c.String() + `"`
	case fmtCar, fmtIpnsRecord:
		return ""
	}
	short := format[strings.LastIndexAny(format, "/.")+1:]
	e := `"` + c.String() + "." + short + `"`
	if format == fmtTar {
		e = "W/" + e
	}
	return e
}

// cacheControl is the Cache-Control of content: immutable for /ipfs/,
// the name's TTL for /ipns/.
func (rq *request) cacheControl() string {
	if rq.content.Mutable() {
		if rq.ttl > 0 {
			return fmt.Sprintf("public, max-age=%d", int(rq.ttl.Seconds()))
		}
		return ""
	}
	return immutableCache
}

// notModified answers 304 when If-None-Match names one of the resolved
// node's ETags (content, or its directory listing).
func (rq *request) notModified() bool {
	inm := string(rq.ctx.Request.Header.Peek("If-None-Match"))
	if inm == "" {
		return false
	}
	for _, c := range []struct{ etag, cache string }{
		{rq.etag(), rq.cacheControl()},
		{dirEtag(rq.res.Cid), rq.listingCacheControl()},
		{dagEtag(rq.res.Cid), ""},
	} {
		if c.etag != "" && etagMatch(inm, c.etag) {
			h := &rq.ctx.Response.Header
			h.Set("Etag", c.etag)
			if c.cache != "" {
				h.Set("Cache-Control", c.cache)
			}
			rq.ctx.SetStatusCode(http.StatusNotModified)
			return true
		}
	}
	return false
}

// etagMatch is the weak comparison of If-None-Match's list with etag
// ("*" matches anything).
func etagMatch(header, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// fail answers an error: text, or a small HTML page for a browser (Accept
// naming text/html) unless Gateway.DisableHTMLErrors.
func (rq *request) fail(code int, msg string) {
	if strings.Contains(string(rq.ctx.Request.Header.Peek("Accept")), "text/html") && !rq.s.cfg.DisableHTMLErrors.WithDefault(false) {
		htmlError(rq.ctx, code, msg)
		return
	}
	plainError(rq.ctx, code, msg)
}

// failResolve answers an error met while resolving or reading content,
// with Kubo's status codes: 400 for a bad CID, 404 for a missing path or
// block, 504 for a retrieval that timed out, else 500.
func (rq *request) failResolve(err error) {
	msg := "failed to resolve " + quotePath(rq.content.String()) + ": " + err.Error()
	if isNotFound(err) {
		// As Kubo's retrieval diagnostics say it.
		msg += ": retrieval: no providers found for the CID (phase: path resolution)"
	}
	rq.fail(statusOf(err), msg)
}

func statusOf(err error) int {
	var se *statusError
	switch {
	case errors.As(err, &se):
		return se.code
	case errors.Is(err, &cid.ErrInvalidCid{}):
		return http.StatusBadRequest
	case errors.Is(err, node.ErrNoLink), isNotFound(err), errors.As(err, new(*resolver.ErrNoLink)),
		errors.As(err, new(datamodel.ErrNotExists)), errors.As(err, new(schema.ErrNoSuchField)):
		return http.StatusNotFound
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// quotePath is a path as Kubo prints it in errors: Go-quoted, without the
// quotes.
func quotePath(p string) string {
	q := fmt.Sprintf("%+q", p)
	return q[1 : len(q)-1]
}
