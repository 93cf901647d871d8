// canonical.go: redirects to a content path's canonical form: the
// ?uri= of a browser's ipfs:// and ipns:// protocol handler, and an IPNS
// key written as a peer ID (base58 multihash) rather than as a CIDv1.

package gateway

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
	"github.com/valyala/fasthttp"
)

// protocolHandler answers GET /ipfs/?uri=ipfs://<cid>/<path> (or ipns)
// with a permanent redirect to the content path, as registerProtocolHandler
// needs; it reports whether it answered.
func protocolHandler(ctx *fasthttp.RequestCtx, p string) bool {
	if p != "/ipfs/" && p != "/ipns/" {
		return false
	}
	raw := ctx.QueryArgs().Peek("uri")
	if len(raw) == 0 {
		return false
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		plainError(ctx, http.StatusBadRequest, "failed to parse uri query parameter: "+err.Error())
		return true
	}
	if u.Scheme != "ipfs" && u.Scheme != "ipns" {
		plainError(ctx, http.StatusBadRequest, "uri query parameter scheme must be ipfs or ipns")
		return true
	}
	to := path.Join("/", u.Scheme, u.Host, u.Path)
	if strings.HasSuffix(u.Path, "/") && !strings.HasSuffix(to, "/") {
		to += "/"
	}
	if u.RawQuery != "" {
		to += "?" + u.RawQuery
	}
	ctx.Response.Header.Set("Location", to)
	ctx.SetStatusCode(http.StatusMovedPermanently)
	return true
}

// canonicalIPNS answers /ipns/<peer ID>/... with a redirect (302) to the
// key's CIDv1 in base36, the form that fits a DNS label; it reports
// whether it answered.
func canonicalIPNS(ctx *fasthttp.RequestCtx, p string) bool {
	rest, ok := strings.CutPrefix(p, "/ipns/")
	if !ok {
		return false
	}
	name, tail, _ := strings.Cut(rest, "/")
	if c, err := cid.Decode(name); err == nil && c.Version() == 1 {
		return false // a CIDv1 already (its base is left as written)
	}
	id, err := peer.Decode(name)
	if err != nil {
		return false // a DNSLink name
	}
	key, err := peer.ToCid(id).StringOfBase(mbase.Base36)
	if err != nil {
		return false
	}
	to := "/ipns/" + key
	if strings.Contains(rest, "/") {
		to += "/" + tail
	}
	if q := ctx.URI().QueryString(); len(q) > 0 {
		to += "?" + string(q)
	}
	ctx.Response.Header.Set("Location", to)
	ctx.SetStatusCode(http.StatusFound)
	return true
}
