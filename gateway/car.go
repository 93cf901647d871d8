// car.go: CAR answers as the trustless gateway spec lays them out: the
// blocks that resolve the path (HAMT shards and data blocks whose fields
// the path follows to a link included), then the terminal
// element's blocks by dag-scope: block (itself), entity (a file's blocks,
// or those of an entity-bytes range; a directory and its HAMT shards; a
// data block alone) or all (the DAG below it), depth first, each block
// once unless dups=y.

package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"cairn/node"
	"cairn/node/unixfs"

	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/ipld/go-ipld-prime/datamodel"
	cidlink "github.com/ipld/go-ipld-prime/linking/cid"
	"github.com/multiformats/go-multihash"
	"github.com/multiformats/go-varint"
)

// entityBytes is an entity-bytes range: from and to count from the end
// when negative; without to, the range runs to the end.
type entityBytes struct {
	from, to int64
	hasTo    bool
}

func parseEntityBytes(s string) (entityBytes, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return entityBytes{}, errors.New("invalid entity-bytes, missing ':'")
	}
	var eb entityBytes
	var err error
	if eb.from, err = strconv.ParseInt(a, 10, 64); err != nil {
		return eb, err
	}
	if b != "*" {
		if eb.to, err = strconv.ParseInt(b, 10, 64); err != nil {
			return eb, err
		}
		eb.hasTo = true
		if eb.from >= 0 && eb.to >= 0 && eb.from > eb.to {
			return eb, errors.New("cannot have an entity-bytes range where 'from' is after 'to'")
		}
		if eb.from < 0 && eb.to < 0 && eb.from > eb.to {
			return eb, errors.New("cannot have an entity-bytes range where 'from' is after 'to'")
		}
	}
	return eb, nil
}

// span is the range [lo, hi) of a file of size bytes; empty when it
// selects nothing.
func (eb entityBytes) span(size int64) (lo, hi int64) {
	lo, hi = eb.from, size
	if lo < 0 {
		lo = max(size+lo, 0)
	}
	if eb.hasTo {
		hi = eb.to + 1
		if eb.to < 0 {
			hi = size + eb.to + 1
		}
		hi = min(hi, size)
	}
	return lo, hi
}

// emptyIdentity is the CID of no bytes (bafkqaaa): the root of the CAR
// that proves a path does not exist.
var emptyIdentity = cid.NewCidV1(cid.Raw, multihash.Multihash{multihash.IDENTITY, 0})

// serveCAR answers the CAR of the request's path, as Kubo 0.43.1's
// gateway does: an /ipns/ name is resolved first (the answer cacheable
// for its TTL); the path is walked before the answer starts, so that a
// block that cannot be had is an error status rather than a cut CAR; the
// CAR's root is the path's last node, and a path naming an entry that
// does not exist is answered 200 with the blocks that show it, rooted at
// the empty identity CID.
func (rq *request) serveCAR() bool {
	p, err := rq.carParams()
	if err != nil {
		rq.fail(http.StatusBadRequest, err.Error())
		return false
	}
	ip, ttl, err := rq.s.n.Names().ResolveTTL(rq.rctx, rq.content.String())
	if err != nil {
		rq.failResolve(err)
		return false
	}
	rq.ttl = ttl
	root := ip.RootCid()
	rq.root = root
	h := &rq.ctx.Response.Header
	name := root.String()
	if segs := rq.content.Segments(); len(segs) > 2 {
		if last := strings.Join(segs[2:], "/"); last != "" {
			name += "_" + last[strings.LastIndex(last, "/")+1:]
		}
	}
	rq.attachment(name + ".car")
	if cc := rq.cacheControl(); cc != "" {
		h.Set("Cache-Control", cc)
	}
	etag := carEtag(root, ip.String(), p)
	h.Set("Etag", etag)
	if etagMatch(string(rq.ctx.Request.Header.Peek("If-None-Match")), etag) {
		rq.ctx.SetStatusCode(http.StatusNotModified)
		return false
	}
	w := &carWalk{n: rq.s.n, p: p, seen: node.NewCidSet()}
	term, err := w.resolve(rq.rctx, root, ip.Segments()[2:])
	carRoot := emptyIdentity
	var noLink *node.NoLinkError
	switch {
	case errors.As(err, &noLink):
		term = nil // the proof: the blocks read so far, nothing below
		w.segRoots = w.segRoots[:1]
	case err != nil:
		rq.failResolve(err)
		return false
	default:
		carRoot = term.Cid()
	}
	roots := make([]string, len(w.segRoots))
	for i, c := range w.segRoots {
		roots[i] = c.String()
	}
	h.Set("X-Ipfs-Roots", strings.Join(roots, ","))
	h.Set("Accept-Ranges", "none")
	h.Set("Content-Type", fmt.Sprintf("%s; version=1; order=%s; dups=%s", fmtCar, p.order, p.dups))
	h.Set("X-Content-Type-Options", "nosniff")
	if rq.ctx.IsHead() {
		return false
	}
	return rq.streamChunked(func(ctx context.Context, out io.Writer) error {
		hdr, err := node.CARHeader([]cid.Cid{carRoot})
		if err != nil {
			return err
		}
		w.w = bufio.NewWriterSize(out, 64<<10)
		if _, err := w.w.Write(hdr); err != nil {
			return err
		}
		for _, b := range w.path {
			if err := w.put(b.c, b.data); err != nil {
				return err
			}
		}
		w.path = nil
		if term != nil {
			if err := w.terminal(ctx, term); err != nil {
				return err
			}
		}
		return w.w.Flush()
	})
}

type pathBlock struct {
	c    cid.Cid
	data []byte
}

// carWalk writes one CAR.
type carWalk struct {
	n    *node.Node
	p    carParams
	w    *bufio.Writer
	seen *node.CidSet
	path []pathBlock // the blocks resolving the path, in the order read
	// segRoots are the nodes the path's segments reached, the root
	// first (X-Ipfs-Roots).
	segRoots []cid.Cid
	pre      [varint.MaxLenUvarint63]byte
}

// recorder is a DAG service that notes every node read through it.
type recorder struct {
	ipld.DAGService
	w *carWalk
}

func (r recorder) Get(ctx context.Context, c cid.Cid) (ipld.Node, error) {
	nd, err := r.DAGService.Get(ctx, c)
	if err == nil {
		r.w.path = append(r.w.path, pathBlock{nd.Cid(), nd.RawData()})
	}
	return nd, err
}

func (r recorder) GetMany(ctx context.Context, ks []cid.Cid) <-chan *ipld.NodeOption {
	out := make(chan *ipld.NodeOption, len(ks))
	go func() {
		defer close(out)
		for _, k := range ks {
			nd, err := r.Get(ctx, k)
			out <- &ipld.NodeOption{Node: nd, Err: err}
		}
	}()
	return out
}

// resolve walks segs from root through UnixFS directories (HAMT shards
// included) and through the data of other codecs (dag-cbor, dag-json),
// whose segments name fields until one reaches a link; it notes the
// blocks read and returns the terminal node.
func (w *carWalk) resolve(ctx context.Context, root cid.Cid, segs []string) (ipld.Node, error) {
	rec := recorder{DAGService: w.n.DAG, w: w}
	nd, err := rec.Get(ctx, root)
	if err != nil {
		return nil, err
	}
	w.segRoots = append(w.segRoots, root)
	for i := 0; i < len(segs); i++ {
		seg := segs[i]
		if seg == "" {
			continue
		}
		var next ipld.Node
		if pn, ok := nd.(*merkledag.ProtoNode); ok {
			dir, err := uio.NewDirectoryFromNode(rec, pn)
			if err != nil {
				return nil, &node.NoLinkError{Name: seg, Under: nd.Cid()}
			}
			next, err = dir.Find(ctx, seg)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) || errors.Is(err, merkledag.ErrLinkNotFound) {
					return nil, &node.NoLinkError{Name: seg, Under: nd.Cid()}
				}
				return nil, err
			}
		} else {
			l, used, err := dataLink(nd, segs[i:])
			if errors.Is(err, errInsideBlock) {
				// The block is the path's last node, once for each
				// segment left (as Kubo lists it).
				for range segs[i:] {
					w.segRoots = append(w.segRoots, nd.Cid())
				}
				break
			}
			if err != nil {
				return nil, err
			}
			for range used - 1 {
				w.segRoots = append(w.segRoots, nd.Cid()) // the fields before the link
			}
			i += used - 1
			if next, err = rec.Get(ctx, l); err != nil {
				return nil, err
			}
		}
		if last := w.path[len(w.path)-1]; !last.c.Equals(next.Cid()) {
			w.path = append(w.path, pathBlock{next.Cid(), next.RawData()})
		}
		w.segRoots = append(w.segRoots, next.Cid())
		nd = next
	}
	// The terminal block is written by the scope's walk.
	if n := len(w.path); n > 0 && w.path[n-1].c.Equals(nd.Cid()) {
		w.path = w.path[:n-1]
	}
	return nd, nil
}

// dataLink follows segs through the fields of a data block (dag-cbor,
// dag-json) up to the first link, and returns it with the number of
// segments used. A field the block lacks is a NoLinkError; a path that
// ends inside the block is errInsideBlock.
func dataLink(nd ipld.Node, segs []string) (cid.Cid, int, error) {
	dm, err := node.DecodeBlock(nd.Cid(), nd.RawData())
	if err != nil {
		return cid.Undef, 0, &statusError{code: http.StatusNotImplemented, err: fmt.Errorf("CAR paths through codec 0x%x are not served by this gateway: %w", nd.Cid().Type(), err)}
	}
	for i, seg := range segs {
		dm, err = dm.LookupBySegment(datamodel.ParsePathSegment(seg))
		if err != nil {
			return cid.Undef, 0, &node.NoLinkError{Name: seg, Under: nd.Cid()}
		}
		if dm.Kind() == datamodel.Kind_Link {
			l, err := dm.AsLink()
			if err != nil {
				return cid.Undef, 0, err
			}
			cl, ok := l.(cidlink.Link)
			if !ok {
				return cid.Undef, 0, fmt.Errorf("link %s of %s is not a CID", l, nd.Cid())
			}
			return cl.Cid, i + 1, nil
		}
	}
	return cid.Undef, 0, errInsideBlock
}

// errInsideBlock is dataLink's word for a path that ends inside the
// block: the CAR's last node is the block itself.
var errInsideBlock = errors.New("the path ends inside the block")

// put writes one block, once unless dups=y.
func (w *carWalk) put(c cid.Cid, data []byte) error {
	if !w.seen.Visit(c) && w.p.dups != "y" {
		return nil
	}
	return w.putNew(c, data)
}

// putNew writes a block; identity CIDs are never written (their bytes
// are the CID).
func (w *carWalk) putNew(c cid.Cid, data []byte) error {
	if c.Prefix().MhType == multihash.IDENTITY {
		return nil
	}
	cb := c.Bytes()
	k := varint.PutUvarint(w.pre[:], uint64(len(cb)+len(data)))
	if _, err := w.w.Write(w.pre[:k]); err != nil {
		return err
	}
	if _, err := w.w.Write(cb); err != nil {
		return err
	}
	_, err := w.w.Write(data)
	return err
}

// terminal writes the terminal element by the request's scope.
func (w *carWalk) terminal(ctx context.Context, nd ipld.Node) error {
	switch w.p.scope {
	case "block":
		return w.put(nd.Cid(), nd.RawData())
	case "all":
		if w.p.dups != "y" {
			if err := w.put(nd.Cid(), nd.RawData()); err != nil {
				return err
			}
			links, err := node.BlockLinks(nd.Cid(), nd.RawData())
			if err != nil {
				return err
			}
			for _, l := range links {
				err := w.n.Dag().WalkUnique(ctx, l, node.WalkOptions{Seen: w.seen}, func(c cid.Cid, data []byte) error {
					return w.putNew(c, data)
				})
				if err != nil {
					return err
				}
			}
			return nil
		}
		return w.all(ctx, nd.Cid(), nd.RawData())
	}
	// entity
	switch nd.Cid().Type() {
	case cid.Raw:
		return w.put(nd.Cid(), nd.RawData())
	case cid.DagProtobuf:
		f, err := unixfs.Decode(nd.RawData())
		if err != nil {
			return err
		}
		switch f.Type {
		case int64(ft.TFile), int64(ft.TRaw):
			lo, hi := int64(0), int64(f.Size())
			if w.p.bytes != nil {
				lo, hi = w.p.bytes.span(int64(f.Size()))
			}
			return w.file(ctx, nd.Cid(), nd.RawData(), 0, lo, hi)
		case int64(ft.THAMTShard):
			return w.shard(ctx, nd.Cid(), nd.RawData())
		}
	}
	return w.put(nd.Cid(), nd.RawData())
}

// all writes the DAG below c depth first, every visit (dups=y).
func (w *carWalk) all(ctx context.Context, c cid.Cid, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.put(c, data); err != nil {
		return err
	}
	links, err := node.BlockLinks(c, data)
	if err != nil {
		return err
	}
	for _, l := range links {
		blk, err := w.n.Block().Get(ctx, l)
		if err != nil {
			return err
		}
		if err := w.all(ctx, l, blk.RawData()); err != nil {
			return err
		}
	}
	return nil
}

// file writes the blocks of the file node c (content starting at base)
// that hold bytes of [lo, hi); the node itself always.
func (w *carWalk) file(ctx context.Context, c cid.Cid, data []byte, base, lo, hi int64) error {
	if err := w.put(c, data); err != nil {
		return err
	}
	if c.Type() != cid.DagProtobuf {
		return nil
	}
	f, err := unixfs.Decode(data)
	if err != nil {
		return err
	}
	pos := base + int64(len(f.Data))
	for i, l := range f.Links {
		if i >= len(f.Blocksizes) {
			break
		}
		sz := int64(f.Blocksizes[i])
		if pos < hi && pos+sz > lo {
			blk, err := w.n.Block().Get(ctx, l.Cid)
			if err != nil {
				return err
			}
			if err := w.file(ctx, l.Cid, blk.RawData(), pos, lo, hi); err != nil {
				return err
			}
		}
		pos += sz
	}
	return nil
}

// shard writes a HAMT directory's shard blocks (not its entries).
func (w *carWalk) shard(ctx context.Context, c cid.Cid, data []byte) error {
	if err := w.put(c, data); err != nil {
		return err
	}
	pn, err := merkledag.DecodeProtobuf(data)
	if err != nil {
		return err
	}
	fs, err := ft.FSNodeFromBytes(pn.Data())
	if err != nil {
		return err
	}
	pad := len(fmt.Sprintf("%X", fs.Fanout()-1))
	for _, l := range pn.Links() {
		if len(l.Name) != pad {
			continue // an entry, not a sub-shard
		}
		blk, err := w.n.Block().Get(ctx, l.Cid)
		if err != nil {
			return err
		}
		if err := w.shard(ctx, l.Cid, blk.RawData()); err != nil {
			return err
		}
	}
	return nil
}
