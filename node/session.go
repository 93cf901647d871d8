// session.go: write sessions. Every command that writes blocks does so in
// a session, which (1) tells a running GC which blocks are new, so that it
// never collects them, and (2) enforces Datastore.StorageMax as a hard cap.

package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"

	"cairn/node/config"
	"cairn/storage"

	humanize "github.com/dustin/go-humanize"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
)

// WriteSession groups the writes of one command.
type WriteSession struct {
	n  *Node
	mu sync.Mutex
	// keys holds the multihashes this session stored or found stored,
	// each marked when the session stored it and it was not there before
	// (keyLog: packed, about 36 bytes a block, since an add of a big file
	// of small blocks holds one per block until it ends).
	keys  keyLog
	nkept int // keys marked created
	batch *storage.Batch
	done  bool
}

// sessions is the node's registry of open write sessions.
type sessions struct {
	mu  sync.Mutex
	set map[*WriteSession]struct{}
	// capMu makes "check the cap, then queue the block" atomic, and
	// serialises "over the cap: collect garbage" decisions.
	capMu sync.Mutex
}

// BeginWrite opens a write session; End must follow.
func (ss *Storage) BeginWrite() *WriteSession {
	n := ss.n
	s := &WriteSession{n: n, batch: n.Store.NewBatch()}
	ss.sess.mu.Lock()
	if ss.sess.set == nil {
		ss.sess.set = map[*WriteSession]struct{}{}
	}
	ss.sess.set[s] = struct{}{}
	ss.sess.mu.Unlock()
	return s
}

// End closes the session once its writes are durable. After End the
// session's blocks are protected only by pins.
func (s *WriteSession) End() error {
	err := s.batch.Sync()
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	s.n.Storage().sess.mu.Lock()
	delete(s.n.Storage().sess.set, s)
	s.n.Storage().sess.mu.Unlock()
	return err
}

// Sync waits until every block put in the session so far is durable.
func (s *WriteSession) Sync() error { return s.batch.Sync() }

// Max returns the cap in bytes (0: none).
func (s *Storage) Max() uint64 {
	n := s.n
	v, err := config.ParseStorageMax(n.Config().Datastore.StorageMax)
	if err != nil {
		return 0
	}
	return v
}

// Usage is what StorageMax bounds: the bytes of the store's segment files
// (removed blocks' records included until they are given back) and of
// its index file's pages in use, plus the bytes queued for writing.
// Holding it under the cap keeps the store on disk within the cap plus
// one step by which the index file grows (storage.GrowStep).
func (s *Storage) Usage() (uint64, error) {
	n := s.n
	// Queued blocks take about 2% more once in pages; 1/32 covers that.
	p := n.Store.PendingBytes()
	return max(n.Store.UsedBytes(), n.Store.BlockBytes()) + p + p/32, nil
}

// admit checks that size more bytes fit under the cap. Over the cap it
// first runs a garbage collection, then fails naming the cap and the
// usage. It returns with the cap lock held (release it once the block is
// queued), so that concurrent writers cannot overshoot together.
func (s *WriteSession) admit(ctx context.Context, size int) (release func(), err error) {
	max := s.n.Storage().Max()
	if max == 0 {
		return func() {}, nil
	}
	mu := &s.n.Storage().sess.capMu
	mu.Lock()
	used, err := s.n.Storage().Usage()
	if err == nil && used+uint64(size) > max {
		// The collection keeps this session's blocks (it is open).
		if _, gerr := s.n.Storage().CollectGarbage(ctx, nil); gerr != nil && !errors.Is(gerr, ErrGCRunning) {
			mu.Unlock()
			return nil, gerr
		}
		used, err = s.n.Storage().Usage()
		if err == nil && used+uint64(size) > max {
			// Still over: give back the space of every removed block,
			// even where that rewrites more than it frees.
			if _, rerr := s.n.Store.Reclaim(ctx, storage.ReclaimOptions{MinGarbage: 1e-9}); rerr != nil {
				mu.Unlock()
				return nil, rerr
			}
			used, err = s.n.Storage().Usage()
		}
	}
	if err != nil {
		mu.Unlock()
		return nil, err
	}
	if used+uint64(size) > max {
		mu.Unlock()
		return nil, fmt.Errorf("%w: Datastore.StorageMax is %s and the repo holds %s (after garbage collection); %s more do not fit",
			ErrStorageFull, humanize.Bytes(max), humanize.Bytes(used), humanize.Bytes(uint64(size)))
	}
	return mu.Unlock, nil
}

// The key joins the session first and is marked second, so a collection
// starting in between sees it one way or the other.
func (s *WriteSession) record(key []byte) (at int) {
	s.mu.Lock()
	at = s.keys.add(key)
	s.mu.Unlock()
	s.n.Storage().gc.mark(key)
	return at
}

// PutAsync queues blk in the session (durable at Sync or End).
func (s *WriteSession) PutAsync(ctx context.Context, blk blocks.Block) error {
	return s.PutAsyncThen(ctx, blk, nil)
}

// PutAsyncThen is PutAsync that calls then (when not nil) once the store
// no longer holds blk's bytes (storage.Blockstore.PutAsyncThen): at once
// when the block is not queued (identity, already stored, errors).
func (s *WriteSession) PutAsyncThen(ctx context.Context, blk blocks.Block, then func()) (err error) {
	queued := false
	if then != nil {
		defer func() {
			if !queued {
				then()
			}
		}()
	}
	key := blk.Cid().Hash()
	if _, ok := storage.IdentityData(blk.Cid()); ok {
		return nil
	}
	// Mark before looking: a sweep either deleted the block before the
	// mark (then it is absent and stored again here) or keeps it.
	at := s.record(key)
	has, err := s.n.Blocks.Has(ctx, blk.Cid())
	if err != nil || has {
		return err
	}
	s.mu.Lock()
	s.keys.markCreated(at)
	s.nkept++
	s.mu.Unlock()
	release, err := s.admit(ctx, len(blk.RawData()))
	if err != nil {
		return err
	}
	defer release()
	queued = true // PutAsyncThen calls then, whatever it returns
	return s.n.Blocks.PutAsyncContext(ctx, s.batch, blk, then)
}

// Put stores blocks and waits until they are durable.
func (s *WriteSession) Put(ctx context.Context, blks ...blocks.Block) error {
	for _, b := range blks {
		if err := s.PutAsync(ctx, b); err != nil {
			return err
		}
	}
	return s.batch.Sync()
}

// Rollback deletes the blocks this session stored that no other open
// session also stored, after a failed write ("nothing partial"). They were
// absent before the session, so no earlier pin needs them.
func (s *WriteSession) Rollback(ctx context.Context) error {
	failed := s.batch.Sync()
	s.mu.Lock()
	var keys []string
	if s.nkept > 0 {
		keys = make([]string, 0, s.nkept)
		s.keys.each(func(k []byte, created bool) {
			if created {
				keys = append(keys, string(k))
			}
		})
	}
	s.keys.clearCreated()
	s.nkept = 0
	s.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	others := map[string]bool{}
	s.n.Storage().sess.mu.Lock()
	for o := range s.n.Storage().sess.set {
		if o == s {
			continue
		}
		o.mu.Lock()
		o.keys.each(func(k []byte, _ bool) { others[string(k)] = true })
		o.mu.Unlock()
	}
	s.n.Storage().sess.mu.Unlock()
	var del []cid.Cid
	for _, k := range keys {
		if !others[k] {
			del = append(del, cid.NewCidV1(cid.Raw, []byte(k)))
		}
	}
	if err := s.n.deleteBlocks(ctx, del); err != nil {
		return err
	}
	if errors.Is(failed, syscall.ENOSPC) {
		// The disk is full: Reclaim could not copy live blocks out to
		// give the removed ones' space back, holes can.
		if freed, err := s.n.Store.PunchRemoved(); err != nil {
			log.Errorf("disk full: giving back the space of the removed blocks: %v", err)
		} else {
			log.Warnf("disk full: %d bytes of the removed blocks given back", freed)
		}
	}
	return nil
}

// Put stores blocks in one write session, durably, and pins each
// recursively when pin is set (without reading the blocks they link to,
// as Kubo's block put --pin and dag put --pin do). On failure the blocks
// it stored are removed again.
func (bb *Block) Put(ctx context.Context, pin bool, blks ...blocks.Block) (err error) {
	n := bb.n
	s := n.Storage().BeginWrite()
	defer func() {
		if err != nil {
			_ = s.Rollback(context.WithoutCancel(ctx))
		}
		if eerr := s.End(); err == nil {
			err = eerr
		}
	}()
	if err := s.Put(ctx, blks...); err != nil {
		return err
	}
	if pin {
		for _, b := range blks {
			if err := n.Pins().AddRecursive(ctx, b.Cid()); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyLog is a packed list of keys: per key a flag byte (1: created), a
// length byte and the key's bytes.
type keyLog struct{ b []byte }

// add appends key and returns where its entry starts.
func (l *keyLog) add(key []byte) int {
	at := len(l.b)
	if len(key) > 255 {
		key = key[:255] // the store refuses such keys (storage/blockstore.go)
	}
	l.b = append(l.b, 0, byte(len(key)))
	l.b = append(l.b, key...)
	return at
}

func (l *keyLog) markCreated(at int) { l.b[at] = 1 }

func (l *keyLog) clearCreated() {
	for i := 0; i < len(l.b); i += 2 + int(l.b[i+1]) {
		l.b[i] = 0
	}
}

func (l *keyLog) each(fn func(key []byte, created bool)) {
	for i := 0; i < len(l.b); {
		n := int(l.b[i+1])
		fn(l.b[i+2:i+2+n], l.b[i] == 1)
		i += 2 + n
	}
}
