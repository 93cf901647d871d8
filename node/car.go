// car.go: DAG walks that visit each distinct block once (dag stat, dag
// export) and CAR files: export as a CARv1 stream written straight from
// the store's memory map, import of CARv1/CARv2 through a write session
// (a refused CAR leaves nothing stored and nothing pinned).
//
// Block order of an export is Kubo's: depth first, children in the order
// their links appear in the block, each block at its first sight (a
// block's identity is its full CID, so a CIDv0 and a CIDv1 of the same
// bytes are two blocks, as in go-car).

package node

import (
	"bufio"
	"bytes"
	"cairn/node/unixfs"
	"context"
	"fmt"
	"hash/maphash"
	"io"

	"github.com/ipfs/boxo/verifcid"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	gocar "github.com/ipld/go-car/v2"
	prime "github.com/ipld/go-ipld-prime"
	"github.com/ipld/go-ipld-prime/codec/dagcbor"
	"github.com/ipld/go-ipld-prime/datamodel"
	"github.com/ipld/go-ipld-prime/fluent/qp"
	cidlink "github.com/ipld/go-ipld-prime/linking/cid"
	basicnode "github.com/ipld/go-ipld-prime/node/basicnode"
	"github.com/multiformats/go-varint"
)

// CidSet is an exact set of CIDs kept as 128-bit keyed hashes of their
// bytes (about 40 bytes an entry instead of ~100 for CID strings; with
// random seeds a false "seen" is out of reach).
type CidSet struct {
	m      map[[2]uint64]struct{}
	s1, s2 maphash.Seed
}

// NewCidSet returns an empty set.
func NewCidSet() *CidSet {
	return &CidSet{m: map[[2]uint64]struct{}{}, s1: maphash.MakeSeed(), s2: maphash.MakeSeed()}
}

func (s *CidSet) key(c cid.Cid) [2]uint64 {
	k := c.KeyString()
	return [2]uint64{maphash.String(s.s1, k), maphash.String(s.s2, k)}
}

// Visit adds c and reports whether it was new.
func (s *CidSet) Visit(c cid.Cid) bool {
	k := s.key(c)
	if _, ok := s.m[k]; ok {
		return false
	}
	s.m[k] = struct{}{}
	return true
}

// Has reports whether c is in the set.
func (s *CidSet) Has(c cid.Cid) bool { _, ok := s.m[s.key(c)]; return ok }

// Len is the number of CIDs in the set.
func (s *CidSet) Len() int { return len(s.m) }

// BlockLinks returns the links of one block in the order they appear:
// none for raw, the dag-pb link list, and for other codecs every link
// found walking the decoded data (maps in key order, lists in order).
func BlockLinks(c cid.Cid, data []byte) ([]cid.Cid, error) {
	switch c.Type() {
	case cid.Raw:
		return nil, nil
	case cid.DagProtobuf:
		return unixfs.LinkCids(data)
	}
	nd, err := DecodeBlock(c, data)
	if err != nil {
		return nil, err
	}
	return primeLinks(nd)
}

// primeLinks collects the links of a data-model node depth first, without
// recursion (decoded data may nest deeply).
func primeLinks(root prime.Node) ([]cid.Cid, error) {
	var out []cid.Cid
	stack := []prime.Node{root}
	for len(stack) > 0 {
		nd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch nd.Kind() {
		case datamodel.Kind_Link:
			l, err := nd.AsLink()
			if err != nil {
				return nil, err
			}
			cl, ok := l.(cidlink.Link)
			if !ok {
				return nil, fmt.Errorf("unsupported link type %T", l)
			}
			out = append(out, cl.Cid)
		case datamodel.Kind_Map:
			var kids []prime.Node
			it := nd.MapIterator()
			for !it.Done() {
				_, v, err := it.Next()
				if err != nil {
					return nil, err
				}
				kids = append(kids, v)
			}
			for i := len(kids) - 1; i >= 0; i-- {
				stack = append(stack, kids[i])
			}
		case datamodel.Kind_List:
			var kids []prime.Node
			it := nd.ListIterator()
			for !it.Done() {
				_, v, err := it.Next()
				if err != nil {
					return nil, err
				}
				kids = append(kids, v)
			}
			for i := len(kids) - 1; i >= 0; i-- {
				stack = append(stack, kids[i])
			}
		}
	}
	return out, nil
}

// WalkOptions tune WalkUnique.
type WalkOptions struct {
	// Seen, if set, is shared across walks (blocks in it are skipped).
	Seen *CidSet
	// SkipMissing skips blocks that are not stored (and so their
	// subtrees) instead of failing.
	SkipMissing bool
}

// WalkUnique visits every distinct block reachable from root once, depth
// first in link order. fn gets the block's bytes straight from the store
// (valid only during the call, inside a short read transaction). A
// missing block is fetched from peers as Block.Get does, and fails the walk
// with an ipld.ErrNotFound when it cannot be had; with SkipMissing it is
// skipped (with its subtree) without asking peers.
func (d *Dag) WalkUnique(ctx context.Context, root cid.Cid, o WalkOptions, fn func(c cid.Cid, data []byte) error) error {
	n := d.n
	seen := o.Seen
	if seen == nil {
		seen = NewCidSet()
	}
	// Missing blocks come from peers unless they are to be skipped.
	view := n.view
	if o.SkipMissing {
		view = n.Blocks.View
	}
	// A frame is the link list of one block being walked; the stack holds
	// the lists along the current path, not copies of them.
	type frame struct {
		links []cid.Cid
		i     int
	}
	stack := []frame{{links: []cid.Cid{root}}}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		top := &stack[len(stack)-1]
		if top.i == len(top.links) {
			stack = stack[:len(stack)-1]
			continue
		}
		c := top.links[top.i]
		top.i++
		if seen.Has(c) {
			continue
		}
		if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
			return err
		}
		var links []cid.Cid
		err := view(ctx, c, func(b []byte) error {
			if err := fn(c, b); err != nil {
				return err
			}
			var err error
			links, err = BlockLinks(c, b)
			if err != nil {
				return fmt.Errorf("block %s: %w", c, err)
			}
			return nil
		})
		if err != nil {
			if o.SkipMissing && ipld.IsNotFound(err) {
				continue
			}
			return err
		}
		seen.Visit(c)
		if len(links) > 0 {
			stack = append(stack, frame{links: links})
		}
	}
	return nil
}

// CARHeader encodes a CARv1 header naming roots (dag-cbor
// {"roots": [...], "version": 1}, length-prefixed).
func CARHeader(roots []cid.Cid) ([]byte, error) {
	nd, err := qp.BuildMap(basicnode.Prototype.Any, 2, func(ma datamodel.MapAssembler) {
		qp.MapEntry(ma, "roots", qp.List(int64(len(roots)), func(la datamodel.ListAssembler) {
			for _, r := range roots {
				qp.ListEntry(la, qp.Link(cidlink.Link{Cid: r}))
			}
		}))
		qp.MapEntry(ma, "version", qp.Int(1))
	})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := dagcbor.Encode(nd, &buf); err != nil {
		return nil, err
	}
	return append(varint.ToUvarint(uint64(buf.Len())), buf.Bytes()...), nil
}

// ExportCAR writes the DAG under root as a CARv1 stream. The root block
// must be stored (checked before anything is written). With localOnly,
// missing blocks below the root are skipped (a partial CAR).
func (d *Dag) ExportCAR(ctx context.Context, root cid.Cid, w io.Writer, localOnly bool) error {
	n := d.n
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, root); err != nil {
		return err
	}
	if err := n.view(ctx, root, func([]byte) error { return nil }); err != nil {
		return err
	}
	hdr, err := CARHeader([]cid.Cid{root})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	var pre [varint.MaxLenUvarint63]byte
	err = d.WalkUnique(ctx, root, WalkOptions{SkipMissing: localOnly}, func(c cid.Cid, data []byte) error {
		cb := c.Bytes()
		k := varint.PutUvarint(pre[:], uint64(len(cb)+len(data)))
		if _, err := bw.Write(pre[:k]); err != nil {
			return err
		}
		if _, err := bw.Write(cb); err != nil {
			return err
		}
		_, err := bw.Write(data)
		return err
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// ImportStats counts what a CAR import read.
type ImportStats struct {
	Blocks, Bytes uint64
}

// RootPin is the outcome of pinning one CAR root.
type RootPin struct {
	Cid cid.Cid
	Err error
}

// CarImporter imports CAR files into one write session. Read each file,
// then Finish (or Abort after a failure: Finish is not called).
type CarImporter struct {
	n        *Node
	s        *WriteSession
	roots    []cid.Cid
	rootSeen *CidSet
	Stats    ImportStats
	// AllowBigBlock accepts blocks over 2 MiB.
	AllowBigBlock bool
	done          bool
}

// NewCarImporter opens an import.
func (d *Dag) NewCarImporter() *CarImporter {
	n := d.n
	return &CarImporter{n: n, s: n.Storage().BeginWrite(), rootSeen: NewCidSet()}
}

// MaxBlockSize is the block size limit of the network (2 MiB).
const MaxBlockSize = 2 << 20

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n uint64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += uint64(k)
	return k, err
}

// Read imports every block of one CAR (v1 or v2) from r. Every block
// must hash to its CID and decode with its codec. Errors carry Kubo's
// "import failed ..." context.
func (im *CarImporter) Read(ctx context.Context, r io.Reader) error {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	// A CARv2 announces where its payload ends: a stream that stops early,
	// even at a block boundary, is truncated.
	var v2end uint64
	if head, _ := br.Peek(gocar.PragmaSize + gocar.HeaderSize); len(head) == gocar.PragmaSize+gocar.HeaderSize &&
		bytes.Equal(head[:gocar.PragmaSize], gocar.Pragma) {
		var h gocar.Header
		if _, err := h.ReadFrom(bytes.NewReader(head[gocar.PragmaSize:])); err == nil {
			v2end = h.DataOffset + h.DataSize
		}
	}
	// Hide io.Seeker: the stream is read forward only.
	car, err := gocar.NewBlockReader(struct{ io.Reader }{br})
	if err != nil {
		return err
	}
	for _, c := range car.Roots {
		if im.rootSeen.Visit(c) {
			im.roots = append(im.roots, c)
		}
	}
	var previous blocks.Block
	fail := func(cur blocks.Block, err error) error {
		switch {
		case cur != nil:
			return fmt.Errorf("import failed at block %q: %w", cur.Cid(), err)
		case previous != nil:
			return fmt.Errorf("import failed after block %q: %w", previous.Cid(), err)
		}
		return fmt.Errorf("import failed: %w", err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		blk, err := car.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(nil, err)
		}
		data := blk.RawData()
		if len(data) > MaxBlockSize && !im.AllowBigBlock {
			return fail(blk, ErrBigBlock)
		}
		c := blk.Cid()
		if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
			return fail(blk, err)
		}
		if c.Type() != cid.Raw {
			if _, err := DecodeBlock(c, data); err != nil {
				return fail(blk, err)
			}
		}
		if err := im.s.PutAsync(ctx, blk); err != nil {
			return fail(blk, err)
		}
		im.Stats.Blocks++
		im.Stats.Bytes += uint64(len(data))
		previous = blk
	}
	if car.Version == 2 && cr.n-uint64(br.Buffered()) < v2end {
		return fail(nil, io.ErrUnexpectedEOF)
	}
	return nil
}

// Roots are the roots named by the CAR headers read so far, in first-seen
// order.
func (im *CarImporter) Roots() []cid.Cid { return im.roots }

// Finish makes the blocks durable and, with pin, pins each root
// recursively (a root whose DAG is incomplete gets its error, as in Kubo;
// the import itself stands). Pinning reads local blocks only: an online
// node never waits on the network for a root the CAR lacks (Kubo answers
// those at once too).
func (im *CarImporter) Finish(ctx context.Context, pin bool) ([]RootPin, error) {
	im.done = true
	defer im.s.End()
	if err := im.s.Sync(); err != nil {
		_ = im.s.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
	if !pin {
		return nil, nil
	}
	out := make([]RootPin, 0, len(im.roots))
	local := OfflineContext(ctx)
	for _, c := range im.roots {
		has, err := im.n.Blocks.Has(ctx, c)
		switch {
		case err != nil:
		case !has:
			// Kubo's text: its blockstore's, for the root it reads first.
			err = ipld.ErrNotFound{Cid: c}
		default:
			err = im.n.Pins().Add(local, c, true, "", nil)
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out = append(out, RootPin{Cid: c, Err: err})
	}
	return out, nil
}

// Abort removes what the import stored and closes it.
func (im *CarImporter) Abort(ctx context.Context) {
	if im.done {
		return
	}
	im.done = true
	_ = im.s.Rollback(context.WithoutCancel(ctx))
	_ = im.s.End()
}
