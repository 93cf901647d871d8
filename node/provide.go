// provide.go: what the node announces: Provide queues a CID on the
// network layer's provide queue, Reprovide announces the pinned roots, or
// every stored block with Provide.Strategy "all" (p2p/provide.go runs
// the queue, the schedule and the counters; p2p/sweep.go the sweep).

package node

import (
	"context"

	"cairn/node/config"
	"cairn/node/p2p"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

// Provide queues c for announcement to the DHT (dropped when the queue
// is full; the periodic reprovide catches up).
func (w *Network) Provide(c cid.Cid) {
	n := w.n
	if nt := n.Net; nt != nil {
		nt.Provide(c)
	}
}

// Reprovide announces every recursively pinned root now (bitswap
// reprovide), or every stored block with Provide.Strategy "all", and
// returns how many it announced.
func (w *Network) Reprovide(ctx context.Context) (int, error) {
	n := w.n
	nt := n.Net
	if nt == nil {
		return 0, ErrOffline
	}
	return nt.Reprovide(ctx, n.pinnedRoots)
}

// pinnedRoots lists the recursively pinned roots.
func (n *Node) pinnedRoots(ctx context.Context) ([]cid.Cid, error) {
	pins, err := n.Pins().List(ctx, PinRecursiveType)
	if err != nil {
		return nil, err
	}
	roots := make([]cid.Cid, 0, len(pins))
	for _, p := range pins {
		roots = append(roots, p.Cid)
	}
	return roots, nil
}

// provideAll is what the reprovide lists with Provide.Strategy "all"
// (nil for any other strategy: the pinned roots).
func (n *Node) provideAll(cfg *config.Config) *p2p.AllKeys {
	if cfg.Provide.Strategy.WithDefault("") != "all" {
		return nil
	}
	bs := n.Store.Blockstore()
	return &p2p.AllKeys{
		Count: func() (int, error) {
			st, err := n.Store.Stat()
			return int(st.NumBlocks), err
		},
		ForEach: func(ctx context.Context, fn func(mh.Multihash) error) error {
			return bs.ForEachKey(ctx, fn)
		},
	}
}
