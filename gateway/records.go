// records.go: the other whole-object answers: a signed IPNS record
// (?format=ipns-record) and a tar of a UnixFS file or directory
// (?format=tar), streamed as the DAG is read.

package gateway

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ipfs/boxo/ipns"
)

// serveIpnsRecord answers the signed record of /ipns/<key>, cacheable
// for its TTL (but not past its validity).
func (rq *request) serveIpnsRecord() bool {
	if !rq.content.Mutable() {
		rq.fail(http.StatusBadRequest, rq.content.String()+" is not an IPNS link")
		return false
	}
	key := strings.TrimPrefix(strings.TrimSuffix(rq.content.String(), "/"), "/ipns/")
	if strings.Contains(key, "/") {
		rq.fail(http.StatusBadRequest, "cannot find ipns key for subpath")
		return false
	}
	name, err := ipns.NameFromString(key)
	if err != nil {
		rq.fail(http.StatusBadRequest, err.Error())
		return false
	}
	raw, err := rq.s.n.Names().Record(rq.rctx, name)
	if err != nil {
		rq.fail(http.StatusInternalServerError, err.Error())
		return false
	}
	rec, err := ipns.UnmarshalRecord(raw)
	if err != nil {
		rq.fail(http.StatusInternalServerError, err.Error())
		return false
	}
	h := &rq.ctx.Response.Header
	sum := fnv.New64a()
	sum.Write(raw)
	etag := fmt.Sprintf(`"%x"`, sum.Sum64())
	h.Set("Etag", etag)
	if etagMatch(string(rq.ctx.Request.Header.Peek("If-None-Match")), etag) {
		rq.ctx.SetStatusCode(http.StatusNotModified)
		return false
	}
	if ttl, err := rec.TTL(); err == nil {
		if eol, err := rec.Validity(); err == nil {
			ttl = min(ttl, time.Until(eol))
		}
		h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(max(ttl, 0).Seconds())))
	} else {
		h.Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
	}
	rq.attachment(key + ".ipns-record")
	h.Set("Content-Type", fmtIpnsRecord)
	h.Set("X-Content-Type-Options", "nosniff")
	rq.ctx.SetBody(raw)
	return false
}

// serveTar answers the resolved UnixFS node as a tar stream whose top
// entry is named by its CID.
func (rq *request) serveTar() bool {
	c := rq.res.Cid
	if rq.res.Node == nil {
		rq.fail(http.StatusBadRequest, "tar of a non-UnixFS node is not supported")
		return false
	}
	if _, err := rq.s.n.UnixFS().Stat(rq.rctx, rq.res.Node); err != nil {
		rq.failResolve(err)
		return false
	}
	rq.headers(noTime)
	h := &rq.ctx.Response.Header
	rq.attachment(c.String() + ".tar")
	h.Set("Content-Type", fmtTar)
	h.Set("X-Content-Type-Options", "nosniff")
	if rq.ctx.IsHead() {
		return false
	}
	u, nd := rq.s.n.UnixFS(), rq.res.Node
	return rq.streamChunked(func(ctx context.Context, w io.Writer) error {
		tw := tar.NewWriter(w)
		if err := u.WriteTar(ctx, tw, nd, c.String(), tar.FormatPAX); err != nil {
			return err
		}
		return tw.Close()
	})
}

// errNotCached is the answer to Cache-Control: only-if-cached for
// content the store lacks.
var errNotCached = errors.New("not in local datastore")
