// leafhash.go: the balanced file layout with leaves built and hashed on
// every core.
//
// boxo's balanced.Layout cuts a chunk, builds its leaf and hashes it, one
// chunk at a time. balancedLayout keeps that layout, node for node, but a
// reader goroutine cuts the chunks in file order, GOMAXPROCS workers build
// and hash the leaves, and the layout takes them back in file order and
// builds the inner nodes with boxo's own helpers (FSNodeOverDag), so every
// block and CID is byte-identical to balanced.Layout's. At most
// leafWindow chunks are in flight, so memory stays bounded whatever the
// file size. With one CPU (or nocopy, whose leaves need the file's
// offsets) it is balanced.Layout itself.

package node

import (
	"io"
	"runtime"
	"sync"

	chunker "github.com/ipfs/boxo/chunker"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/ipld/unixfs/importer/balanced"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	ipld "github.com/ipfs/go-ipld-format"
)

// balancedLayout builds the balanced DAG of the chunks of spl, which db
// was made from. db.Done and db.Next are not used on the parallel path:
// the chunks are read from spl directly.
func balancedLayout(db *helpers.DagBuilderHelper, spl chunker.Splitter, nocopy bool) (ipld.Node, error) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || nocopy {
		return balanced.Layout(db)
	}
	lv := startLeaves(db, spl, workers)
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
	if db.HasFileAttributes() {
		if err := db.SetFileAttributes(root); err != nil {
			return nil, err
		}
	}
	return root, db.Add(root)
}

// layoutLeaves grows the tree one level at a time: the tree so far
// becomes the first child of a new root, which is filled to depth.
func layoutLeaves(db *helpers.DagBuilderHelper, lv *leaves) (ipld.Node, error) {
	root, size, err := lv.next()
	if err != nil {
		return nil, err
	}
	for depth := 1; !lv.done(); depth++ {
		up := db.NewFSNodeOverDag(ft.TFile)
		if err := up.AddChild(root, size, db); err != nil {
			return nil, err
		}
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
		var child ipld.Node
		var size uint64
		var err error
		if depth == 1 {
			child, size, err = lv.next()
		} else {
			child, size, err = fillLeaves(db, lv, nil, depth-1)
		}
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

// leaf is a built and hashed leaf, or the error that ended the chunks.
type leaf struct {
	nd   ipld.Node
	size uint64
	err  error
}

type leafJob struct {
	data []byte
	out  chan leaf
}

// leaves yields the leaves of a file in order while workers build them.
type leaves struct {
	order  chan chan leaf // one slot per chunk, in file order
	peeked chan leaf
	ended  bool
	quit   chan struct{}
	wg     sync.WaitGroup
}

// leafWindow is how many chunks may be cut ahead of the layout per worker.
const leafWindow = 2

func startLeaves(db *helpers.DagBuilderHelper, spl chunker.Splitter, workers int) *leaves {
	lv := &leaves{order: make(chan chan leaf, leafWindow*workers), quit: make(chan struct{})}
	jobs := make(chan leafJob)
	lv.wg.Add(1 + workers)
	go func() {
		defer lv.wg.Done()
		defer close(jobs)
		defer close(lv.order)
		for {
			data, err := spl.NextBytes()
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
			case jobs <- leafJob{data: data, out: out}:
			case <-lv.quit:
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer lv.wg.Done()
			for j := range jobs {
				nd, err := db.NewLeafNode(j.data, ft.TFile)
				if err == nil {
					nd.Cid() // hash here, not in the layout
				}
				j.out <- leaf{nd: nd, size: uint64(len(j.data)), err: err}
			}
		}()
	}
	return lv
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
func (lv *leaves) next() (ipld.Node, uint64, error) {
	if lv.done() {
		return nil, 0, io.ErrUnexpectedEOF
	}
	l := <-lv.peeked
	lv.peeked = nil
	return l.nd, l.size, l.err
}

// stop ends the reader and the workers and waits for them, so that
// nothing reads spl after the layout returns.
func (lv *leaves) stop() {
	close(lv.quit)
	lv.wg.Wait()
}
