// trustless.go: the trustless gateway's answers: a raw block
// (application/vnd.ipld.raw) and a CAR stream (application/vnd.ipld.car)
// written by the node's CAR export as it walks the DAG.

package gateway

import (
	"errors"
	"fmt"
	"hash/fnv"
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
	rq.attachment(rq.res.Cid.String() + ".bin")
	h.Set("X-Content-Type-Options", "nosniff")
	data := blk.RawData()
	return rq.serveContent(bytesReader(data), int64(len(data)), fmtRaw)
}

// carParams are the CAR options of a request: from Accept's parameters,
// overridden by the car-* query parameters, as the trustless gateway
// spec reads them.
type carParams struct {
	scope, order, dups string
	bytes              *entityBytes // entity-bytes; nil: the whole entity
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
	if q.Has("entity-bytes") {
		eb, err := parseEntityBytes(string(q.Peek("entity-bytes")))
		if err != nil {
			return p, fmt.Errorf("invalid application/vnd.ipld.car entity-bytes URL parameter: %w", err)
		}
		p.bytes = &eb
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

// carEtag is a weak ETag of a CAR: its root and the options that change
// its bytes.
func carEtag(root cid.Cid, content string, p carParams) string {
	s := ""
	if i := strings.Index(strings.TrimPrefix(content, "/ipfs/"), "/"); i >= 0 {
		h := fnv.New64a()
		h.Write([]byte(content))
		s += fmt.Sprintf(".%x", h.Sum64())
	}
	if p.scope != "all" {
		s += "." + p.scope
	}
	if p.order != "dfs" {
		s += "." + p.order
	}
	if p.dups == "y" {
		s += ".dups"
	}
	if b := p.bytes; b != nil && (b.from != 0 || b.hasTo) {
		s += fmt.Sprintf(".bytes-%d", b.from)
		if b.hasTo {
			s += fmt.Sprintf("-%d", b.to)
		}
	}
	return `W/"` + root.String() + ".car" + s + `"`
}
