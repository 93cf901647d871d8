// verify.go: checking that pinned DAGs and stored blocks are whole.

package node

import (
	"context"
	"fmt"

	"cairn/storage"

	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
)

// Verify walks the DAG below root, re-hashing every block; bad is
// called for each block that is missing or does not match its CID (its
// children are not visited). It returns only context errors.
func (d *Dag) Verify(ctx context.Context, root cid.Cid, bad func(c cid.Cid, err error)) error {
	n := d.n
	ws := newWalkSet()
	stack := []cid.Cid{root}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, ok := storage.IdentityData(c); !ok {
			// View checks the hash of what it reads (storage.ErrBlockDamaged).
			err := n.Blocks.View(ctx, c, func([]byte) error { return nil })
			if err != nil {
				if ipld.IsNotFound(err) {
					err = fmt.Errorf("merkledag: not found")
				}
				bad(c, err)
				continue
			}
		}
		links, err := n.UnixFS().Links(ctx, c)
		if err != nil {
			bad(c, err)
			continue
		}
		if len(links) == 0 || !ws.visit(c) {
			continue
		}
		for i := len(links) - 1; i >= 0; i-- {
			stack = append(stack, links[i].Cid)
		}
	}
	return nil
}

// Verify re-hashes every stored block, reading them in short
// transactions; bad is called for each corrupt one, progress with the
// count checked so far.
func (bb *Block) Verify(ctx context.Context, bad func(c cid.Cid, err error), progress func(int)) error {
	n := bb.n
	count := 0
	return n.Blocks.ForEachKey(ctx, func(h mh.Multihash) error {
		c := cid.NewCidV1(cid.Raw, h)
		err := n.Blocks.View(ctx, c, func([]byte) error { return nil })
		if err != nil && !ipld.IsNotFound(err) {
			bad(c, err)
		}
		count++
		if progress != nil {
			progress(count)
		}
		return nil
	})
}
