// pin.go: the pin records add writes. The pin commands and GC build on
// these keys.

package node

import (
	"context"

	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
)

// Datastore key prefixes of pins: /pins/recursive/<cid> and
// /pins/direct/<cid>, empty values.
const (
	pinRecursivePrefix = "/pins/recursive/"
	pinDirectPrefix    = "/pins/direct/"
)

// PinRecursive records a recursive pin of c (its DAG must be stored).
func (n *Node) PinRecursive(ctx context.Context, c cid.Cid) error {
	return n.Store.Datastore().Put(ctx, ds.NewKey(pinRecursivePrefix+c.String()), nil)
}

// PinDirect records a direct pin of c.
func (n *Node) PinDirect(ctx context.Context, c cid.Cid) error {
	return n.Store.Datastore().Put(ctx, ds.NewKey(pinDirectPrefix+c.String()), nil)
}

// IsPinnedRecursive reports whether c has a recursive pin.
func (n *Node) IsPinnedRecursive(ctx context.Context, c cid.Cid) (bool, error) {
	return n.Store.Datastore().Has(ctx, ds.NewKey(pinRecursivePrefix+c.String()))
}
