// block.go: single blocks through the node's one read path (the store,
// then peers when online and the request is not marked offline), and
// block removal with the pin check.

package node

import (
	"context"
	"errors"

	"github.com/ipfs/boxo/verifcid"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// Get returns block c: from the store, else, on an online node and a
// context not marked offline, from peers (stored on arrival). A CID with
// a hash too weak or too short fails before any read.
func (bb *Block) Get(ctx context.Context, c cid.Cid) (blocks.Block, error) {
	n := bb.n
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
		return nil, err
	}
	var data []byte
	err := n.view(ctx, c, func(b []byte) error {
		data = append([]byte(nil), b...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return blocks.NewBlockWithCid(data, c)
}

// Size returns the size of block c, read as Get reads.
func (b *Block) Size(ctx context.Context, c cid.Cid) (int, error) {
	n := b.n
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
		return 0, err
	}
	return n.blockSize(ctx, c)
}

// Remove deletes stored block c unless a pin holds it. The error
// says why it was not removed: the pin (e.g. "pinned: recursive"), a
// block that is not stored (unless force), or a store failure.
func (b *Block) Remove(ctx context.Context, c cid.Cid, force bool) error {
	n := b.n
	reason, pinned, err := n.Pins().Reason(ctx, c)
	if err != nil {
		return errors.New("pin check failed: " + err.Error())
	}
	if pinned {
		return errors.New(reason)
	}
	has, err := n.Blocks.Has(ctx, c)
	if err != nil {
		return err
	}
	if !has && !force {
		return ipld.ErrNotFound{Cid: c}
	}
	return n.Blocks.DeleteBlock(ctx, c)
}
