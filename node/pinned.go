// pinned.go: why a block may not be removed (block rm), worded as Kubo's
// pinner words it.

package node

import (
	"context"
	"strings"

	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
)

// PinnedReason reports whether c is pinned and how: "pinned: recursive",
// "pinned: direct", or "pinned via <root>" when c is inside the DAG of a
// recursive pin. Pins match by the whole CID, as Kubo's do. The indirect
// check walks the recursively pinned DAGs (each block once) and stops at
// the first hit; a block missing from a pinned DAG is an error.
func (n *Node) PinnedReason(ctx context.Context, c cid.Cid) (string, bool, error) {
	d := n.Store.Datastore()
	if ok, err := d.Has(ctx, ds.NewKey(pinRecursivePrefix+c.String())); err != nil || ok {
		return "pinned: recursive", ok, err
	}
	if ok, err := d.Has(ctx, ds.NewKey(pinDirectPrefix+c.String())); err != nil || ok {
		return "pinned: direct", ok, err
	}
	res, err := d.Query(ctx, dsq.Query{Prefix: pinRecursivePrefix, KeysOnly: true})
	if err != nil {
		return "", false, err
	}
	entries, err := res.Rest()
	if err != nil {
		return "", false, err
	}
	seen := cid.NewSet()
	for _, e := range entries {
		root, err := cid.Decode(strings.TrimPrefix(e.Key, pinRecursivePrefix))
		if err != nil {
			return "", false, err
		}
		found, err := n.dagContains(ctx, root, c, seen)
		if err != nil {
			return "", false, err
		}
		if found {
			return "pinned via " + root.String(), true, nil
		}
	}
	return "", false, nil
}

// dagContains walks the DAG below root (skipping blocks in seen, which it
// extends) and reports whether it reaches target.
func (n *Node) dagContains(ctx context.Context, root, target cid.Cid, seen *cid.Set) (bool, error) {
	stack := []cid.Cid{root}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !seen.Visit(c) {
			continue
		}
		if c.Equals(target) {
			return true, nil
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		links, err := n.Links(ctx, c)
		if err != nil {
			return false, err
		}
		for i := len(links) - 1; i >= 0; i-- {
			stack = append(stack, links[i].Cid)
		}
	}
	return false, nil
}
