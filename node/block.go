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

// GetBlock returns block c: from the store, else, on an online node and a
// context not marked offline, from peers (stored on arrival). A CID with
// a hash too weak or too short fails before any read.
func (n *Node) GetBlock(ctx context.Context, c cid.Cid) (blocks.Block, error) {
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

// BlockSize returns the size of block c, read as GetBlock reads.
func (n *Node) BlockSize(ctx context.Context, c cid.Cid) (int, error) {
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
		return 0, err
	}
	return n.blockSize(ctx, c)
}

// RemoveBlock deletes stored block c unless a pin holds it. The error
// says why it was not removed: the pin (e.g. "pinned: recursive"), a
// block that is not stored (unless force), or a store failure.
func (n *Node) RemoveBlock(ctx context.Context, c cid.Cid, force bool) error {
	reason, pinned, err := n.PinnedReason(ctx, c)
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
