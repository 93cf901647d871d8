// fetch.go: reads that reach the network: the blockstore and exchange
// bitswap and the block service see, offline-marked requests, and the
// fetch of a missing block with the prefetch of the DAG below it.

package node

import (
	"cairn/node/p2p"
	"cairn/node/unixfs"
	"context"
	"errors"
	"fmt"

	"cairn/storage"

	"github.com/ipfs/boxo/bitswap"
	"github.com/ipfs/boxo/blockservice"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// netBlockstore is the blockstore bitswap and the block service see:
// reads come straight from the store, writes (blocks fetched from peers)
// go through a write session so GC and the StorageMax cap see them.
type netBlockstore struct {
	*Blockstore
	n *Node
}

func (b *netBlockstore) Put(ctx context.Context, blk blocks.Block) error {
	return b.n.Block().Put(ctx, false, blk)
}

func (b *netBlockstore) PutMany(ctx context.Context, blks []blocks.Block) error {
	return b.n.Block().Put(ctx, false, blks...)
}

// netExchange is bitswap, except for requests marked offline.
type netExchange struct{ *bitswap.Bitswap }

func (x netExchange) GetBlock(ctx context.Context, c cid.Cid) (blocks.Block, error) {
	if isOffline(ctx) {
		return nil, errOfflineNotFound(ipld.ErrNotFound{Cid: c})
	}
	return x.Bitswap.GetBlock(ctx, c)
}

func (x netExchange) GetBlocks(ctx context.Context, ks []cid.Cid) (<-chan blocks.Block, error) {
	if isOffline(ctx) {
		ch := make(chan blocks.Block)
		close(ch)
		return ch, nil
	}
	return x.Bitswap.GetBlocks(ctx, ks)
}

// offlineExchange is the exchange of a node without network, as Kubo's
// offline exchange: a block the store lacks is "block was not found
// locally (offline)".
type offlineExchange struct{}

func (offlineExchange) GetBlock(_ context.Context, c cid.Cid) (blocks.Block, error) {
	return nil, errOfflineNotFound(ipld.ErrNotFound{Cid: c})
}

func (offlineExchange) GetBlocks(context.Context, []cid.Cid) (<-chan blocks.Block, error) {
	ch := make(chan blocks.Block)
	close(ch)
	return ch, nil
}

func (offlineExchange) NotifyNewBlocks(context.Context, ...blocks.Block) error { return nil }
func (offlineExchange) Close() error                                           { return nil }

// localBlockService is the block service of a node without network.
func (n *Node) localBlockService() blockservice.BlockService {
	return blockservice.New(n.Blocks, offlineExchange{})
}

type offlineKey struct{}

// OfflineContext marks ctx so reads do not fetch missing blocks from the
// network (a request with --offline on a running daemon).
func OfflineContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, offlineKey{}, true)
}

func isOffline(ctx context.Context) bool { return ctx.Value(offlineKey{}) != nil }

// errOfflineNotFound is Kubo's error (its offline exchange's) for a block
// a request marked offline does not have.
func errOfflineNotFound(err error) error {
	return fmt.Errorf("block was not found locally (offline): %w", err)
}

// view is n.Blocks.View that, on an online node, fetches a missing block
// from the network first (and prefetches the children of a dag-pb node
// so a reader walking a file does not wait one round trip per block).
func (n *Node) view(ctx context.Context, c cid.Cid, fn func([]byte) error) error {
	err := n.Blocks.View(ctx, c, fn)
	on := n.online
	if errors.Is(err, storage.ErrBlockDamaged) {
		if on == nil || isOffline(ctx) {
			return err
		}
		if rerr := n.refetch(ctx, on, c); rerr != nil {
			return fmt.Errorf("%w (fetching it again from peers: %v)", err, rerr)
		}
		return n.Blocks.View(ctx, c, fn)
	}
	if err != nil && (on == nil || isOffline(ctx)) && ipld.IsNotFound(err) {
		return errOfflineNotFound(err)
	}
	if err == nil || on == nil || !ipld.IsNotFound(err) {
		return err
	}
	blk, ferr := on.bserv.GetBlock(ctx, c)
	if ferr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ferr
	}
	if c.Type() == cid.DagProtobuf {
		if f, perr := unixfs.Decode(blk.RawData()); perr == nil && len(f.Links) > 0 {
			ks := make([]cid.Cid, len(f.Links))
			for i, l := range f.Links {
				ks[i] = l.Cid
			}
			go n.prefetch(ctx, on.net, ks)
		}
	}
	return n.Blocks.View(ctx, c, fn)
}

// refetch replaces the damaged stored copy of c with one fetched from
// peers (bitswap checks its hash), so that the store is whole again.
func (n *Node) refetch(ctx context.Context, on *online, c cid.Cid) error {
	blk, err := netExchange{on.net.Bitswap}.GetBlock(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if err := n.Blocks.DeleteBlock(ctx, c); err != nil {
		return err
	}
	if err := n.Block().Put(ctx, false, blk); err != nil {
		return err
	}
	log.Infof("block %s fetched again from peers in place of its damaged copy", c)
	return nil
}

// maxPrefetchQueue bounds the CIDs a prefetch keeps ahead of a reader.
const maxPrefetchQueue = 1 << 16

// prefetch fetches the DAG below ks (breadth first, in link order, so
// roughly in the order a reader walks it), PrefetchWindow blocks per
// request with two requests in flight, until ctx ends. Blocks that arrive
// together are stored together (one commit), not one commit each as the
// block service would.
func (n *Node) prefetch(ctx context.Context, nt *p2p.Net, ks []cid.Cid) {
	type window struct {
		ch      <-chan blocks.Block
		missing []cid.Cid
	}
	var inflight []window
	for (len(ks) > 0 || len(inflight) > 0) && ctx.Err() == nil && nt.Ctx().Err() == nil {
		for len(inflight) < 2 && len(ks) > 0 {
			k := min(nt.Limits.PrefetchWindow, len(ks))
			var missing []cid.Cid
			for _, c := range ks[:k] {
				has, err := n.Blocks.Has(ctx, c)
				if err != nil {
					return
				}
				if !has {
					missing = append(missing, c)
				}
			}
			ks = ks[k:]
			if len(missing) == 0 {
				continue
			}
			ch, err := nt.Bitswap.GetBlocks(ctx, missing)
			if err != nil {
				return
			}
			inflight = append(inflight, window{ch, missing})
		}
		if len(inflight) == 0 {
			continue
		}
		w := inflight[0]
		inflight = inflight[1:]
		children, ok := n.storeArriving(ctx, nt, w.ch)
		if !ok {
			return
		}
		var next []cid.Cid
		for _, c := range w.missing {
			next = append(next, children[c]...)
		}
		if len(next) > 0 && len(ks)+len(next) <= maxPrefetchQueue {
			ks = append(next, ks...)
		}
	}
}

// storeArriving stores the blocks of ch as they come, in batches, and
// returns the links of the dag-pb ones.
func (n *Node) storeArriving(ctx context.Context, nt *p2p.Net, ch <-chan blocks.Block) (map[cid.Cid][]cid.Cid, bool) {
	children := map[cid.Cid][]cid.Cid{}
	for blk := range ch {
		batch := []blocks.Block{blk}
	drain:
		for len(batch) < 64 {
			select {
			case b, ok := <-ch:
				if !ok {
					break drain
				}
				batch = append(batch, b)
			default:
				break drain
			}
		}
		if err := n.Block().Put(ctx, false, batch...); err != nil {
			return nil, false
		}
		_ = nt.Bitswap.NotifyNewBlocks(ctx, batch...)
		for _, b := range batch {
			if b.Cid().Type() != cid.DagProtobuf {
				continue
			}
			if f, err := unixfs.Decode(b.RawData()); err == nil {
				for _, l := range f.Links {
					children[b.Cid()] = append(children[b.Cid()], l.Cid)
				}
			}
		}
	}
	return children, true
}

// blockSize is n.Blocks.GetSize that fetches a missing block first on an
// online node.
func (n *Node) blockSize(ctx context.Context, c cid.Cid) (int, error) {
	size, err := n.Blocks.GetSize(ctx, c)
	if err == nil || !ipld.IsNotFound(err) {
		return size, err
	}
	if n.Net == nil {
		return size, errOfflineNotFound(err)
	}
	err = n.view(ctx, c, func(b []byte) error { size = len(b); return nil })
	return size, err
}
