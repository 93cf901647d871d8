// trustless.go: the trustless gateway's answers: a raw block
// (application/vnd.ipld.raw) and a CAR stream (application/vnd.ipld.car)
// written by the node's CAR export as it walks the DAG.

package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ipfs/go-cid"
)

// serveRaw answers the resolved node's block as it is stored, with
// Range support like a file.
func (rq *request) serveRaw() bool {
	blk, err := rq.s.n.Block().Get(rq.rctx, rq.res.Cid)
	if err != nil {
		rq.failResolve(err)
		return false
	}
	rq.headers(noTime)
	h := &rq.ctx.Response.Header
	name := string(rq.ctx.QueryArgs().Peek("filename"))
	if name == "" {
		name = rq.res.Cid.String() + ".bin"
	}
	setDisposition(h, "attachment", name)
	h.Set("X-Content-Type-Options", "nosniff")
	data := blk.RawData()
	return rq.serveContent(bytesReader(data), int64(len(data)), fmtRaw)
}

// carParams are the CAR options of a request: from Accept's parameters,
// overridden by the car-* query parameters, as the trustless gateway
// spec reads them.
type carParams struct {
	scope, order, dups string
}

var (
	errCarScope = errors.New("unsupported application/vnd.ipld.car scope parameter")
	errCarOrder = errors.New("unsupported application/vnd.ipld.car order parameter")
	errCarDups  = errors.New("unsupported application/vnd.ipld.car dups parameter")
)

func (rq *request) carParams() (carParams, error) {
	q := rq.ctx.QueryArgs()
	p := carParams{scope: "all", order: rq.params["order"], dups: rq.params["dups"]}
	version := rq.params["version"]
	if v := string(q.Peek("car-version")); v != "" {
		version = v
	}
	if v := string(q.Peek("car-order")); v != "" {
		p.order = v
	}
	if v := string(q.Peek("car-dups")); v != "" {
		p.dups = v
	}
	if q.Has("dag-scope") {
		p.scope = string(q.Peek("dag-scope"))
		switch p.scope {
		case "all", "entity", "block":
		default:
			return p, errCarScope
		}
	}
	if version != "" && version != "1" {
		return p, errors.New("unsupported application/vnd.ipld.car version: only version=1 is supported")
	}
	switch p.order {
	case "", "dfs", "unk":
		if p.order == "" {
			p.order = "dfs"
		}
	default:
		return p, errCarOrder
	}
	switch p.dups {
	case "", "n":
		p.dups = "n"
	case "y":
	default:
		return p, errCarDups
	}
	return p, nil
}

// serveCAR answers a CAR of the DAG under /ipfs/<cid> (dag-scope=all, no
// duplicates, depth-first), streamed as the node walks it.
func (rq *request) serveCAR() bool {
	p, err := rq.carParams()
	if err != nil {
		rq.fail(http.StatusBadRequest, err.Error())
		return false
	}
	segs := strings.Split(strings.Trim(rq.content.String(), "/"), "/")
	if rq.content.Mutable() || len(segs) != 2 || p.scope != "all" || p.dups != "n" || rq.ctx.QueryArgs().Has("entity-bytes") {
		rq.fail(http.StatusNotImplemented, "this gateway serves CARs of a whole DAG by CID (dag-scope=all, dups=n) only, for now")
		return false
	}
	root := rq.res.Cid
	h := &rq.ctx.Response.Header
	h.Set("X-Ipfs-Roots", root.String())
	name := string(rq.ctx.QueryArgs().Peek("filename"))
	if name == "" {
		name = root.String() + ".car"
	}
	setDisposition(h, "attachment", name)
	if cc := rq.cacheControl(); cc != "" {
		h.Set("Cache-Control", cc)
	}
	etag := carEtag(root, p)
	h.Set("Etag", etag)
	if etagMatch(string(rq.ctx.Request.Header.Peek("If-None-Match")), etag) {
		rq.ctx.SetStatusCode(http.StatusNotModified)
		return false
	}
	h.Set("Accept-Ranges", "none")
	h.Set("Content-Type", fmt.Sprintf("%s; version=1; order=%s; dups=%s", fmtCar, p.order, p.dups))
	h.Set("X-Content-Type-Options", "nosniff")
	if rq.ctx.IsHead() {
		return false
	}
	d := rq.s.n.Dag()
	body := newPipeBody(rq.sctx, func(ctx context.Context, w io.Writer) error {
		return d.ExportCAR(ctx, root, w, false)
	})
	rq.ctx.Response.SetBodyStream(body, -1)
	rq.body = body
	return true
}

// carEtag is a weak ETag of a CAR: its root and the options that change
// its bytes.
func carEtag(root cid.Cid, p carParams) string {
	s := ""
	if p.scope != "all" {
		s += "." + p.scope
	}
	if p.order != "dfs" {
		s += "." + p.order
	}
	if p.dups == "y" {
		s += ".dups"
	}
	return `W/"` + root.String() + ".car" + s + `"`
}
