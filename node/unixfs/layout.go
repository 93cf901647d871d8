// layout.go: the balanced and trickle file layouts with leaves built and
// hashed on every core.
//
// boxo's layouts cut a chunk, build its leaf and hash it, one chunk at a
// time, and build each dag-pb leaf with two copies of the chunk. Here a
// reader goroutine cuts the chunks in file order, each into a buffer of its
// own with room for the leaf's headers (a fixed-size chunker's chunk is
// read straight into it), GOMAXPROCS workers build the leaves in place
// (leafEncoder) and hash them, and the layout takes them back in file
// order and builds the inner nodes with boxo's own helpers (FSNodeOverDag),
// so every block and CID is byte-identical to balanced.Layout's and
// trickle.Layout's (TestBalancedLayout_MatchesBoxo, TestTrickleLayout_
// MatchesBoxo). At most LeafOptions.window chunks are cut ahead of the
// layout, so memory stays bounded whatever the file size; a leaf's buffer
// is reused once the DAG service no longer holds its bytes: at once when
// it drops the leaf (only-hash), after the store's transaction that wrote
// it when stored.
// With nocopy, whose leaves need the file's offsets, the layouts are
// boxo's.

package unixfs

import (
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/ipld/unixfs/importer/balanced"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	"github.com/ipfs/boxo/ipld/unixfs/importer/trickle"
	pb "github.com/ipfs/boxo/ipld/unixfs/pb"
	ipld "github.com/ipfs/go-ipld-format"
)

// LeafOptions say how a file's leaves are cut, built and reused.
type LeafOptions struct {
	// Raw is the DAG builder's raw-leaves setting.
	Raw bool
	// ChunkSize is the fixed-size chunker's size (its chunks are read
	// straight into leaf buffers); 0 for another chunker, whose chunks are
	// copied into them.
	ChunkSize int
	// Window is how many chunks may be cut ahead of the layout (at least
	// 2; see LeafWindow).
	Window int
	// Handback is the DAG service that gives leaf buffers back to be
	// reused (nil: none do).
	Handback Handbacker
	// NoCopy uses boxo's layouts (filestore leaves).
	NoCopy bool
}

// FixedChunkSize is the chunk size of a fixed-size chunker spec (boxo's
// "default" and "size-N"), 0 for the others.
func FixedChunkSize(spec string) int {
	if spec == "" || spec == "default" {
		return int(chunker.DefaultBlockSize)
	}
	if s, ok := strings.CutPrefix(spec, "size-"); ok {
		if n, err := strconv.Atoi(s); err == nil && n > 0 && n <= chunker.ChunkSizeLimit {
			return n
		}
	}
	return 0
}

// LeafWindow is how many chunks an import cuts ahead of its layout: two
// per worker, so that no worker waits for the reader, but no more than a
// 64th of the memory budget (memoryMiB; 0: no budget) holds, and at least
// two.
func LeafWindow(workers, chunkSize, memoryMiB int) int {
	if chunkSize <= 0 {
		chunkSize = int(chunker.DefaultBlockSize)
	}
	w := 2 * workers
	if memoryMiB > 0 {
		w = min(w, (memoryMiB<<20)/64/(chunkSize+leafHead+leafTail))
	}
	return max(w, 2)
}

// BalancedLayout builds the balanced DAG of the chunks of spl, which db
// was made from. db.Done and db.Next are not used: the chunks are read
// from spl directly.
func BalancedLayout(db *helpers.DagBuilderHelper, spl chunker.Splitter, o LeafOptions) (ipld.Node, error) {
	if o.NoCopy {
		return balanced.Layout(db)
	}
	lv := startLeaves(db, spl, ft.TFile, o)
	defer lv.stop()
	var root ipld.Node
	var err error
	if lv.done() {
		root, err = db.NewLeafNode(nil, ft.TFile)
	} else {
		root, err = layoutLeaves(db, lv)
	}
	if err != nil {
		return nil, err
	}
	return finishRoot(db, root)
}

// finishRoot stores the file attributes in root, as boxo's layouts do,
// and adds it. A root that is a leaf was built by leafEncoder with its
// CID's prefix as builder; it gets the import's (an inlining builder must
// not inline the root once the attributes make it longer).
func finishRoot(db *helpers.DagBuilderHelper, root ipld.Node) (ipld.Node, error) {
	if db.HasFileAttributes() {
		if pn, ok := root.(*merkledag.ProtoNode); ok {
			if err := pn.SetCidBuilder(db.GetCidBuilder()); err != nil {
				return nil, err
			}
		}
		if err := db.SetFileAttributes(root); err != nil {
			return nil, err
		}
	}
	return root, db.Add(root)
}

// layoutLeaves grows the tree one level at a time: the tree so far
// becomes the first child of a new root, which is filled to depth.
func layoutLeaves(db *helpers.DagBuilderHelper, lv *leaves) (ipld.Node, error) {
	l := lv.next()
	if l.err != nil {
		return nil, l.err
	}
	root, size := l.nd, l.size
	for depth := 1; !lv.done(); depth++ {
		up := db.NewFSNodeOverDag(ft.TFile)
		lv.expect(l)
		if err := up.AddChild(root, size, db); err != nil {
			return nil, err
		}
		l = leaf{}
		var err error
		if root, size, err = fillLeaves(db, lv, up, depth); err != nil {
			return nil, err
		}
	}
	return root, nil
}

// fillLeaves adds children to nd (a new node when nil) until it has
// Maxlinks or the leaves run out: leaves at depth 1, full subtrees of
// depth-1 below that.
func fillLeaves(db *helpers.DagBuilderHelper, lv *leaves, nd *helpers.FSNodeOverDag, depth int) (ipld.Node, uint64, error) {
	if nd == nil {
		nd = db.NewFSNodeOverDag(ft.TFile)
	}
	for nd.NumChildren() < db.Maxlinks() && !lv.done() {
		if depth == 1 {
			if err := lv.addTo(nd, db); err != nil {
				return nil, 0, err
			}
			continue
		}
		child, size, err := fillLeaves(db, lv, nil, depth-1)
		if err != nil {
			return nil, 0, err
		}
		if err := nd.AddChild(child, size, db); err != nil {
			return nil, 0, err
		}
	}
	size := nd.FileSize()
	filled, err := nd.Commit()
	return filled, size, err
}

// TrickleLayout is trickle.Layout over leaves built on every core: its
// leaves carry the UnixFS Raw type, as boxo's FillNodeLayer makes them.
func TrickleLayout(db *helpers.DagBuilderHelper, spl chunker.Splitter, o LeafOptions) (ipld.Node, error) {
	if o.NoCopy {
		return trickle.Layout(db)
	}
	lv := startLeaves(db, spl, ft.TRaw, o)
	defer lv.stop()
	root, _, err := fillTrickle(db, lv, db.NewFSNodeOverDag(ft.TFile), -1)
	if err != nil {
		return nil, err
	}
	return finishRoot(db, root)
}

// trickleRepeat is boxo's depthRepeat: subtrees of each depth per level.
const trickleRepeat = 4

// fillTrickle is boxo's fillTrickleRec: a layer of leaves, then
// trickleRepeat subtrees of each depth below maxDepth (-1: unbounded).
func fillTrickle(db *helpers.DagBuilderHelper, lv *leaves, nd *helpers.FSNodeOverDag, maxDepth int) (ipld.Node, uint64, error) {
	for nd.NumChildren() < db.Maxlinks() && !lv.done() {
		if err := lv.addTo(nd, db); err != nil {
			return nil, 0, err
		}
	}
	for depth := 1; maxDepth == -1 || depth < maxDepth; depth++ {
		if lv.done() {
			break
		}
		for r := 0; r < trickleRepeat && !lv.done(); r++ {
			child, size, err := fillTrickle(db, lv, db.NewFSNodeOverDag(ft.TFile), depth)
			if err != nil {
				return nil, 0, err
			}
			if err := nd.AddChild(child, size, db); err != nil {
				return nil, 0, err
			}
		}
	}
	filled, err := nd.Commit()
	if err != nil {
		return nil, 0, err
	}
	return filled, nd.FileSize(), nil
}

// leaf is a built and hashed leaf in the buffer it was built in, or the
// error that ended the chunks.
type leaf struct {
	nd   ipld.Node
	size uint64
	buf  []byte
	err  error
}

type leafJob struct {
	buf []byte
	n   int
	out chan leaf
}

// leaves yields the leaves of a file in order while workers build them.
type leaves struct {
	order    chan chan leaf // one slot per chunk, in file order
	peeked   chan leaf
	ended    bool
	quit     chan struct{}
	wg       sync.WaitGroup
	handback Handbacker
	free     chan []byte // buffers to reuse
	cutEnd   bool        // the reader saw the end of the input
}

func startLeaves(db *helpers.DagBuilderHelper, spl chunker.Splitter, typ pb.Data_DataType, o LeafOptions) *leaves {
	workers := runtime.GOMAXPROCS(0)
	window := max(o.Window, 2)
	// Buffers come back from the store after their commit: room for
	// those of a queue of the store's (storage.DefaultMaxPendingBytes)
	// besides the window; more are left to the collector.
	lv := &leaves{order: make(chan chan leaf, window), quit: make(chan struct{}), handback: o.Handback,
		free: make(chan []byte, window+workers+2+handbackSlack)}
	enc := newLeafEncoder(o.Raw, typ, db.GetCidBuilder())
	jobs := make(chan leafJob)
	lv.wg.Add(1 + workers)
	go func() {
		defer lv.wg.Done()
		defer close(jobs)
		defer close(lv.order)
		for {
			buf, n, err := lv.cut(spl, o.ChunkSize)
			if err == io.EOF {
				return
			}
			out := make(chan leaf, 1)
			select {
			case lv.order <- out:
			case <-lv.quit:
				return
			}
			if err != nil {
				out <- leaf{err: err}
				return
			}
			select {
			case jobs <- leafJob{buf: buf, n: n, out: out}:
			case <-lv.quit:
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer lv.wg.Done()
			for j := range jobs {
				nd, err := enc.encode(j.buf, j.n)
				j.out <- leaf{nd: nd, size: uint64(j.n), buf: j.buf, err: err}
			}
		}()
	}
	return lv
}

// cut reads the next chunk into a leaf buffer: straight from spl's reader
// for a fixed size (with boxo's sizeSplitterv2's ends: a short chunk is the
// last one, an empty read is io.EOF, any other error is returned even
// after some bytes), else from spl.
func (lv *leaves) cut(spl chunker.Splitter, size int) ([]byte, int, error) {
	if size > 0 {
		if lv.cutEnd {
			return nil, 0, io.EOF
		}
		buf := lv.buffer(size)
		n, err := io.ReadFull(spl.Reader(), buf[leafHead:leafHead+size])
		switch err {
		case nil:
			return buf, n, nil
		case io.ErrUnexpectedEOF:
			lv.cutEnd = true // no read after the end, as boxo's
			if n <= size/4 {
				// A small file or a file's short last chunk: its leaf
				// gets a buffer of its own size, so that the blocks
				// waiting for the store's commit (a directory of many
				// small files) do not each hold a whole chunk's buffer.
				own := make([]byte, leafHead+n+leafTail)
				copy(own[leafHead:], buf[leafHead:leafHead+n])
				putChunkBuf(buf)
				return own, n, nil
			}
			return buf, n, nil
		}
		return nil, 0, err
	}
	data, err := spl.NextBytes()
	if err != nil {
		return nil, 0, err
	}
	buf := lv.buffer(len(data))
	return buf, copy(buf[leafHead:], data), nil
}

// buffer returns a free buffer with room for an n-byte chunk.
func (lv *leaves) buffer(n int) []byte {
	select {
	case b := <-lv.free:
		if cap(b) >= leafHead+n+leafTail {
			return b[:cap(b)]
		}
	default:
	}
	if p, ok := chunkBufs.Get().(*[]byte); ok && cap(*p) >= leafHead+n+leafTail {
		return (*p)[:cap(*p)]
	}
	return make([]byte, leafHead+n+leafTail)
}

// chunkBufs keeps chunk buffers between files: each small file of a
// directory reads into one and gives it back once its bytes are copied
// out, instead of allocating a chunk's worth of garbage.
var chunkBufs sync.Pool

func putChunkBuf(b []byte) { chunkBufs.Put(&b) }

// Handbacker is a DAG service that hands leaf buffers back (batchDAG,
// hashOnlyDAG): the next Add of nd calls free once the service no longer
// holds nd's bytes, maybe later and on another goroutine.
type Handbacker interface {
	Expect(nd ipld.Node, free func())
}

// handbackSlack is how many buffers handed back beyond the window are
// kept for reuse: a store queue's worth of default-size leaves.
const handbackSlack = 8

// expect is told that l is about to be added to the DAG service: its
// buffer is reused once the service gives it back.
func (lv *leaves) expect(l leaf) {
	if lv.handback == nil || l.buf == nil {
		return
	}
	buf, free := l.buf, lv.free
	lv.handback.Expect(l.nd, func() {
		select {
		case free <- buf:
		default:
		}
	})
}

// addTo adds the next leaf to nd.
func (lv *leaves) addTo(nd *helpers.FSNodeOverDag, db *helpers.DagBuilderHelper) error {
	l := lv.next()
	if l.err != nil {
		return l.err
	}
	lv.expect(l)
	return nd.AddChild(l.nd, l.size, db)
}

// done reports whether every leaf was taken; an error still to be
// returned by next is not the end.
func (lv *leaves) done() bool {
	if lv.peeked == nil && !lv.ended {
		var ok bool
		if lv.peeked, ok = <-lv.order; !ok {
			lv.ended = true
		}
	}
	return lv.peeked == nil
}

// next returns the next leaf in file order.
func (lv *leaves) next() leaf {
	if lv.done() {
		return leaf{err: io.ErrUnexpectedEOF}
	}
	l := <-lv.peeked
	lv.peeked = nil
	return l
}

// stop ends the reader and the workers and waits for them, so that
// nothing reads spl after the layout returns.
func (lv *leaves) stop() {
	close(lv.quit)
	lv.wg.Wait()
	for {
		select {
		case b := <-lv.free:
			putChunkBuf(b)
		default:
			return
		}
	}
}
