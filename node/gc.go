// gc.go: garbage collection that neither stops the node nor needs memory
// for every CID.
//
// Mark: a Bloom filter (about 14 bits per stored block, rounded up to a
// power of two: at most 4 bytes a block, 4 MiB per million blocks) takes
// every block reachable from recursive pins (whole DAGs), direct pins
// (roots), and the MFS root; walks remember only inner nodes (walk.go). A
// false positive keeps a garbage block (0.1% of them); it never deletes a
// pinned one. Writes during the run: every block a write session stores
// (session.go) and every block a pin reads is marked as well, so nothing
// added or pinned during GC is collected.
//
// Sweep: keys are read 1024 at a time in short read transactions; the
// unmarked ones of each batch are chosen under the mark lock and become
// doomed until the write transaction that deletes them commits. A mark
// of a doomed block waits for that commit (at most one, and only for a
// block chosen as garbage), so the caller then finds it gone and stores
// or fetches it again: a mark and a delete of the same block never cross,
// and nothing else waits for a delete. Adds, cats and pins go on
// throughout; their writes share the store's commits with the deletes,
// and when others wrote while a batch was deleted, the sweep waits twice
// as long as that batch took before the next, so that it holds the
// writer at most a third of the time while adds go on (Reclaim's moves
// wait the same way).
// Filestore references (filestore.go) are swept after the blocks, each
// batch under the mark lock.
//
// Reclaim: then the store gives back the space of what was deleted
// (storage.Store.Reclaim: segments at least half garbage have their live
// blocks copied out and are removed, never rewriting more than they free).
// While the store's writes fail (storage.Store.Fault: a full disk), and
// where that copy fails for want of space, the removed blocks' space is
// given back first as holes in their segments (storage.Store.PunchRemoved);
// the store's reserve (storage's reserve.go) lets the sweep's deletes
// commit there.

package node

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"cairn/storage"

	"github.com/ipfs/bbloom"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

type gcState struct {
	mu     sync.Mutex
	active bool
	bloom  *bbloom.Bloom
	// doomed are the keys a sweep chose and has not yet deleted; gone
	// signals (on mu) when a batch of them has been.
	doomed  map[string]struct{}
	gone    *sync.Cond
	running atomic.Bool
	runs    atomic.Uint64
	freed   atomic.Uint64
}

// mark adds key to the live set of a running collection. When a sweep
// already chose key as garbage, it returns once the block is deleted.
func (g *gcState) mark(key []byte) {
	g.mu.Lock()
	if g.active {
		g.bloom.Add(key)
	}
	for g.gone != nil {
		if _, ok := g.doomed[string(key)]; !ok {
			break
		}
		g.gone.Wait()
	}
	g.mu.Unlock()
}

// GCResult sums up a collection.
type GCResult struct {
	Removed    int
	FreedBytes uint64
	// Reclaimed is what the store then gave back to the filesystem.
	Reclaimed storage.ReclaimResult
}

func newBloom(n uint64) (*bbloom.Bloom, error) {
	var k [16]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, err
	}
	return bbloom.NewWithKeys(binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:]), float64(n), 0.001)
}

// CollectGarbage removes every block not reachable from a pin or the MFS
// root. removed, if set, is called for each block removed (with the block
// as a raw CIDv1, as Kubo reports them); if it returns an error the sweep
// stops.
func (ss *Storage) CollectGarbage(ctx context.Context, removed func(c cid.Cid) error) (GCResult, error) {
	n := ss.n
	var res GCResult
	g := &ss.gc
	if !g.running.CompareAndSwap(false, true) {
		return res, ErrGCRunning
	}
	defer g.running.Store(false)

	st, err := n.Store.Stat()
	if err != nil {
		return res, err
	}
	bloom, err := newBloom(st.NumBlocks + st.NumBlocks/4 + 4096)
	if err != nil {
		return res, err
	}
	// Activate marking, then take the blocks of writes in progress.
	g.mu.Lock()
	g.bloom, g.active = bloom, true
	ss.sess.mu.Lock()
	for s := range ss.sess.set {
		s.mu.Lock()
		s.keys.each(func(k []byte, _ bool) { bloom.Add(k) })
		s.mu.Unlock()
	}
	ss.sess.mu.Unlock()
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.active, g.bloom = false, nil
		g.mu.Unlock()
	}()

	if err := n.markRoots(ctx); err != nil {
		return res, fmt.Errorf("gc: marking live blocks: %w (nothing was removed)", err)
	}
	count := func(key []byte, size int) error {
		res.Removed++
		res.FreedBytes += uint64(size)
		if removed != nil {
			return removed(cid.NewCidV1(cid.Raw, key))
		}
		return nil
	}
	err = n.sweep(ctx, count)
	if err == nil {
		err = n.sweepReferences(ctx, count)
	}
	if err == nil {
		var punched int64
		if n.Store.Fault() != "" {
			// Writes fail (a full disk): give the removed blocks' space
			// back in place first, as holes, so that Reclaim has room
			// to copy live blocks out.
			punched, err = n.Store.PunchRemoved()
		}
		if err == nil {
			res.Reclaimed, err = n.Store.Reclaim(ctx, storage.ReclaimOptions{})
		}
		if errors.Is(err, syscall.ENOSPC) {
			// Still no room to copy: holes are what gives space back.
			var more int64
			more, err = n.Store.PunchRemoved()
			punched += more
		}
		res.Reclaimed.Punched = punched
		if err != nil {
			err = fmt.Errorf("gc: giving space back: %w", err)
		}
	}
	g.runs.Add(1)
	g.freed.Add(res.FreedBytes)
	if err != nil {
		log.Errorf("gc: removed %d blocks (%d bytes), then: %v", res.Removed, res.FreedBytes, err)
	} else {
		log.Infof("gc: removed %d blocks, freed %d bytes; gave back %d segment files (%d bytes), rewriting %d bytes, and %d bytes as holes",
			res.Removed, res.FreedBytes, res.Reclaimed.Segments, res.Reclaimed.Freed, res.Reclaimed.Rewritten, res.Reclaimed.Punched)
	}
	return res, err
}

// GCStats are the collections since the node opened.
type GCStats struct {
	Runs       uint64 // finished collections (a failed sweep counts)
	FreedBytes uint64 // block bytes they removed
}

// GCStats returns the collections since the node opened.
func (s *Storage) GCStats() GCStats {
	return GCStats{Runs: s.gc.runs.Load(), FreedBytes: s.gc.freed.Load()}
}

// rootSet is a holder of what GC keeps: the pins, the MFS root and the
// roots held for remote pinning each name their roots through it, so
// that GC never reads another concept's keys.
type rootSet interface {
	// markLive calls walk for every root whose whole DAG is live, and
	// block for every root that is live alone (a direct pin). Errors
	// name the root.
	markLive(ctx context.Context, walk func(root cid.Cid) error, block func(root cid.Cid)) error
}

// rootSets are every holder of GC roots.
func (n *Node) rootSets() []rootSet {
	return []rootSet{n.Pins(), mfsRoots{n}, n.RemotePins()}
}

// markRoots marks every block reachable from a root, walking each DAG's
// inner nodes once however many roots share them.
func (n *Node) markRoots(ctx context.Context) error {
	g := &n.Storage().gc
	mark := func(c cid.Cid) error { g.mark(c.Hash()); return nil }
	ws := newWalkSet()
	walk := func(root cid.Cid) error { return n.Dag().Walk(ctx, root, ws, mark) }
	block := func(root cid.Cid) { g.mark(root.Hash()) }
	for _, set := range n.rootSets() {
		if err := set.markLive(ctx, walk, block); err != nil {
			return err
		}
	}
	return nil
}

// sweep deletes unmarked blocks in batches of up to 1024.
func (n *Node) sweep(ctx context.Context, fn func(key []byte, size int) error) error {
	g := &n.Storage().gc
	var chunk [][]byte
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		var dead [][]byte
		g.mu.Lock()
		if g.gone == nil {
			g.gone = sync.NewCond(&g.mu)
			g.doomed = map[string]struct{}{}
		}
		for _, k := range chunk {
			if !g.bloom.Has(k) {
				dead = append(dead, k)
				g.doomed[string(k)] = struct{}{}
			}
		}
		g.mu.Unlock()
		chunk = chunk[:0]
		if len(dead) == 0 {
			return nil
		}
		before, start := n.Store.Submitted(), time.Now()
		sizes, err := n.Blocks.DeleteMany(dead)
		took := time.Since(start)
		g.mu.Lock()
		for _, k := range dead {
			delete(g.doomed, string(k))
		}
		g.gone.Broadcast()
		g.mu.Unlock()
		if err != nil {
			return err
		}
		if n.Store.Submitted()-before > 1 {
			// Others wrote meanwhile (adds): leave the writer to them
			// for twice as long as this batch held it.
			select {
			case <-time.After(storage.YieldFor(took)):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		for i, k := range dead {
			if sizes[i] < 0 {
				continue // removed meanwhile by someone else
			}
			if err := fn(k, sizes[i]); err != nil {
				return err
			}
		}
		return nil
	}
	err := n.Blocks.ForEachKey(ctx, func(h mh.Multihash) error {
		chunk = append(chunk, h)
		if len(chunk) == 1024 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// deleteBlocks removes blocks outright (a failed write's own blocks).
func (n *Node) deleteBlocks(ctx context.Context, cs []cid.Cid) error {
	keys := make([][]byte, 0, len(cs))
	for _, c := range cs {
		keys = append(keys, c.Hash())
	}
	_, err := n.Blocks.DeleteMany(keys)
	return err
}
