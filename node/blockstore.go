// blockstore.go: the node's block store: storage's blocks, falling back
// to filestore and urlstore references (filestore.go) for reads.

package node

import (
	"bytes"
	"context"
	"errors"

	"cairn/storage"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// Blockstore is the node's block store: the store's blocks, then filestore
// references for blocks the store lacks. Has, puts, deletes and key
// listings are the store's only.
type Blockstore struct {
	*storage.Blockstore
	n *Node
}

// missing reports whether err is the not-found error for c itself.
func missing(err error, c cid.Cid) bool {
	var nf ipld.ErrNotFound
	return errors.As(err, &nf) && nf.Cid.Defined() && bytes.Equal(nf.Cid.Hash(), c.Hash())
}

// logReadErr logs a failed read of a stored block (an I/O error, a
// damaged block: the error names it), which every reader (cat, bitswap,
// GC) also answers; a missing block is no fault.
func logReadErr(err error) error {
	if errors.Is(err, storage.ErrBlockDamaged) || errors.Is(err, storage.ErrReadBlock) {
		log.Errorf("%v", err)
	}
	return err
}

// View is storage's View, falling back to a filestore reference.
func (b *Blockstore) View(ctx context.Context, c cid.Cid, fn func([]byte) error) error {
	err := b.Blockstore.View(ctx, c, fn)
	if err == nil || !missing(err, c) {
		return logReadErr(err)
	}
	data, ok, ferr := b.n.filestoreGet(ctx, c)
	if !ok {
		return err
	}
	if ferr != nil {
		return ferr
	}
	return fn(data)
}

// Get is storage's Get, falling back to a filestore reference.
func (b *Blockstore) Get(ctx context.Context, c cid.Cid) (blocks.Block, error) {
	blk, err := b.Blockstore.Get(ctx, c)
	if err == nil || !missing(err, c) {
		return blk, logReadErr(err)
	}
	data, ok, ferr := b.n.filestoreGet(ctx, c)
	if !ok {
		return nil, err
	}
	if ferr != nil {
		return nil, ferr
	}
	return blocks.NewBlockWithCid(data, c)
}

// GetSize is storage's GetSize, falling back to a reference's size.
func (b *Blockstore) GetSize(ctx context.Context, c cid.Cid) (int, error) {
	size, err := b.Blockstore.GetSize(ctx, c)
	if err == nil || !missing(err, c) {
		return size, err
	}
	if fsize, ferr := b.n.Storage().FileManager().GetSize(ctx, c); ferr == nil {
		return fsize, nil
	}
	return size, err
}
