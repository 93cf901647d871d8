// blockstore.go: the boxo blockstore.Blockstore view of the "blocks" bucket.

package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"

	bstore "github.com/ipfs/boxo/blockstore"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
	bolt "go.etcd.io/bbolt"
)

// Blockstore is the block view of a Store. Get and friends return
// ipld.ErrNotFound for missing blocks, as boxo expects.
type Blockstore struct{ s *Store }

var (
	_ bstore.Blockstore = (*Blockstore)(nil)
	_ bstore.Viewer     = (*Blockstore)(nil)
)

// Blockstore returns the store's block view.
func (s *Store) Blockstore() *Blockstore { return &Blockstore{s: s} }

// IdentityData returns the inline bytes of an identity CID.
func IdentityData(c cid.Cid) ([]byte, bool) {
	dm, err := mh.Decode(c.Hash())
	if err != nil || dm.Code != mh.IDENTITY {
		return nil, false
	}
	return dm.Digest, true
}

// Has reports whether the block is stored (identity CIDs always are).
func (b *Blockstore) Has(_ context.Context, c cid.Cid) (bool, error) {
	if _, ok := IdentityData(c); ok {
		return true, nil
	}
	if b.s.w != nil {
		if _, ok := b.s.w.mem.get(c.Hash()); ok {
			return true, nil
		}
	}
	var ok bool
	err := b.s.db.View(func(tx *bolt.Tx) error {
		idx, err := loadIndex(tx)
		if err != nil {
			return err
		}
		ok = idx.get(c.Hash()) != nil
		return nil
	})
	return ok, err
}

// View calls fn with the block's bytes, read with pread into a pooled
// buffer. fn must not keep the slice.
func (b *Blockstore) View(_ context.Context, c cid.Cid, fn func([]byte) error) error {
	if d, ok := IdentityData(c); ok {
		return fn(d)
	}
	l, err := b.s.locate(c)
	if err != nil {
		return err
	}
	bp, _ := b.s.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer b.s.bufs.Put(bp)
	buf, err := b.s.readBlock(c, l, bp)
	if err != nil {
		return err
	}
	return fn(buf)
}

// Get returns a copy of the block.
func (b *Blockstore) Get(_ context.Context, c cid.Cid) (blocks.Block, error) {
	if !c.Defined() {
		return nil, ipld.ErrNotFound{Cid: c}
	}
	if d, ok := IdentityData(c); ok {
		return blocks.NewBlockWithCid(append([]byte(nil), d...), c)
	}
	l, err := b.s.locate(c)
	if err != nil {
		return nil, err
	}
	var data []byte
	data, err = b.s.readBlock(c, l, &data)
	if err != nil {
		return nil, err
	}
	return blocks.NewBlockWithCid(data, c)
}

// GetSize returns the stored size of the block.
func (b *Blockstore) GetSize(_ context.Context, c cid.Cid) (int, error) {
	if d, ok := IdentityData(c); ok {
		return len(d), nil
	}
	l, err := b.s.locate(c)
	if err != nil {
		return -1, err
	}
	return int(l.n), nil
}

// locate looks c's multihash up in the index.
func (s *Store) locate(c cid.Cid) (loc, error) {
	if s.w != nil {
		if l, ok := s.w.mem.get(c.Hash()); ok {
			return l, nil
		}
	}
	var l loc
	var ok bool
	err := s.db.View(func(tx *bolt.Tx) error {
		idx, err := loadIndex(tx)
		if err != nil {
			return err
		}
		l, ok = decodeLoc(idx.get(c.Hash()))
		return nil
	})
	if err == nil && !ok {
		err = ipld.ErrNotFound{Cid: c}
	}
	return l, err
}

// readBlock reads c's bytes at l into *buf (grown when short) and checks them
// (hashcheck.go). Bytes that fail the check where the index no longer
// points are no damage: the block was removed or moved after the lookup
// and its old record punched (PunchRemoved: zeros). It then answers not
// found, or reads the block where it went.
func (s *Store) readBlock(c cid.Cid, l loc, buf *[]byte) ([]byte, error) {
	for try := 0; ; try++ {
		if cap(*buf) < int(l.n) {
			*buf = make([]byte, l.n)
		}
		data := (*buf)[:l.n]
		if err := s.sf.readAt(l, data); err != nil {
			return nil, s.readErr(c, err)
		}
		err := checkRead(c, l, data)
		if err == nil {
			return data, nil
		}
		now, lerr := s.locate(c)
		switch {
		case lerr != nil:
			return nil, lerr
		case now.samePlace(l) || try == 2:
			return nil, err
		}
		l = now
	}
}

// readErr is what a failed read of c's bytes reports: not found when the
// block went while it was read, the I/O error otherwise.
func (s *Store) readErr(c cid.Cid, err error) error {
	if errors.Is(err, errGone) {
		return ipld.ErrNotFound{Cid: c}
	}
	return fmt.Errorf("%w %s: %w", ErrReadBlock, c, err)
}

func blockMutation(blk blocks.Block) (mutation, bool, error) {
	c := blk.Cid()
	if !c.Defined() {
		return mutation{}, false, errors.New("storage: undefined CID")
	}
	if _, ok := IdentityData(c); ok {
		return mutation{}, false, nil
	}
	if len(c.Hash()) == 0 {
		return mutation{}, false, fmt.Errorf("storage: CID %s has an empty multihash", c)
	}
	if len(c.Hash()) > 255 {
		return mutation{}, false, fmt.Errorf("storage: CID %s: multihash of %d bytes, longer than the 255 the store keeps", c, len(c.Hash()))
	}
	if uint64(len(blk.RawData())) > math.MaxUint32-1024 {
		return mutation{}, false, fmt.Errorf("storage: block %s of %d bytes is too large", c, len(blk.RawData()))
	}
	return mutation{bucket: bucketBlocks, kind: opPut, key: c.Hash(), val: blk.RawData()}, true, nil
}

// Put stores a block and returns once it is durable.
func (b *Blockstore) Put(ctx context.Context, blk blocks.Block) error {
	return b.PutMany(ctx, []blocks.Block{blk})
}

// PutMany stores blocks in one transaction and returns once it is durable.
func (b *Blockstore) PutMany(_ context.Context, blks []blocks.Block) error {
	if b.s.w == nil {
		return errors.New("storage: store is read-only")
	}
	muts := make([]mutation, 0, len(blks))
	for _, blk := range blks {
		m, ok, err := blockMutation(blk)
		if err != nil {
			return err
		}
		if ok {
			muts = append(muts, m)
		}
	}
	if len(muts) == 0 {
		return nil
	}
	if err := b.s.indexRoom(); err != nil {
		return err
	}
	return b.s.w.do(muts)
}

// PutAsync queues a block in batch bt and returns at once; bt.Sync reports
// when it is durable. It blocks only when too many bytes are queued.
func (b *Blockstore) PutAsync(bt *Batch, blk blocks.Block) error {
	return b.PutAsyncThen(bt, blk, nil)
}

// PutAsyncThen is PutAsync that calls then (when not nil) once the store
// holds no reference to blk's bytes any more: after the transaction that
// wrote the block has ended (bbolt copied the bytes into its pages and
// wrote them), or before it returns when the block is not queued
// (identity CIDs, errors), and in any case before bt.Sync returns. then
// runs on the store's writer goroutine and must not block; it lets a
// caller reuse the block's buffer.
func (b *Blockstore) PutAsyncThen(bt *Batch, blk blocks.Block, then func()) error {
	return b.PutAsyncContext(context.Background(), bt, blk, then)
}

// PutAsyncContext is PutAsyncThen that gives up, with ctx's error, when
// ctx ends while it waits for room in the writer's queue.
func (b *Blockstore) PutAsyncContext(ctx context.Context, bt *Batch, blk blocks.Block, then func()) error {
	m, ok, err := blockMutation(blk)
	if err == nil && ok {
		err = b.s.indexRoom()
	}
	if err != nil || !ok {
		if then != nil {
			then()
		}
		return err
	}
	if err := bt.submit(ctx, []mutation{m}, len(m.val)+len(m.key), then); err != nil {
		if then != nil {
			then()
		}
		return err
	}
	return nil
}

// DeleteBlock removes a block; removing a missing block is not an error.
func (b *Blockstore) DeleteBlock(_ context.Context, c cid.Cid) error {
	if _, ok := IdentityData(c); ok {
		return nil
	}
	if b.s.w == nil {
		return errors.New("storage: store is read-only")
	}
	return b.s.w.do([]mutation{{bucket: bucketBlocks, kind: opDel, key: c.Hash()}})
}

// AllKeysChan lists every stored block as a CIDv1 with the raw codec (the
// store keeps multihashes, not codecs, as Kubo's does). It reads in short
// transactions of at most 1024 keys so that it never stalls writers.
func (b *Blockstore) AllKeysChan(ctx context.Context) (<-chan cid.Cid, error) {
	out := make(chan cid.Cid, 64)
	go func() {
		defer close(out)
		_ = b.ForEachKey(ctx, func(h mh.Multihash) error {
			select {
			case out <- cid.NewCidV1(cid.Raw, h):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return out, nil
}

// ForEachKey calls fn for every stored multihash, in key order, outside of
// any transaction (keys are read in chunks of 1024). Blocks stored while
// it runs may or may not be seen. When the disk refuses the commit that
// indexes the blocks acknowledged last (full, read-only), those come
// after the others.
func (b *Blockstore) ForEachKey(ctx context.Context, fn func(mh.Multihash) error) error {
	var unindexed [][]byte
	if err := b.s.flush(); err != nil {
		unindexed = b.s.w.mem.keys()
	}
	if err := b.forEachIndexed(ctx, fn); err != nil {
		return err
	}
	for _, k := range unindexed {
		if err := fn(mh.Multihash(k)); err != nil {
			return err
		}
	}
	return nil
}

// forEachIndexed is ForEachKey over the index alone.
func (b *Blockstore) forEachIndexed(ctx context.Context, fn func(mh.Multihash) error) error {
	var after []byte
	for {
		var chunk [][]byte
		err := b.s.db.View(func(tx *bolt.Tx) error {
			idx, err := loadIndex(tx)
			if err != nil {
				return err
			}
			idx.forEach(after, func(k, _ []byte) bool {
				chunk = append(chunk, append([]byte(nil), k...))
				return len(chunk) < 1024
			})
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(mh.Multihash(k)); err != nil {
				return err
			}
		}
		if len(chunk) < 1024 {
			return nil
		}
		after = chunk[len(chunk)-1]
	}
}

// HashOnRead is part of boxo's blockstore options; this store checks the
// hash of every block it reads from its files (checkRead), so it is a
// no-op.
func (b *Blockstore) HashOnRead(bool) {}

// DeleteMany removes the blocks with these multihash keys in one
// transaction and returns the size of each one removed (-1 for keys
// that were not stored).
func (b *Blockstore) DeleteMany(keys [][]byte) ([]int, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if b.s.w == nil {
		return nil, errors.New("storage: store is read-only")
	}
	muts := make([]mutation, len(keys))
	for i, k := range keys {
		muts[i] = mutation{bucket: bucketBlocks, kind: opDel, key: k}
	}
	sizes := make([]int, len(keys))
	r := &request{muts: muts, sizes: sizes, done: make(chan error, 1)}
	if err := b.s.w.submit(context.Background(), r); err != nil {
		return nil, err
	}
	if err := <-r.done; err != nil {
		return nil, err
	}
	return sizes, nil
}

// indexRoom fails with ErrIndexFull once the index file's pages in use
// reach Options.MaxIndexBytes.
func (s *Store) indexRoom() error {
	max := s.opts.MaxIndexBytes
	if max <= 0 || s.w == nil {
		return nil
	}
	if used := s.w.indexUsed.Load(); used >= max {
		return fmt.Errorf("%w: its file uses %d MiB, the most a %d-bit build maps (%d MiB); "+
			"remove blocks (repo gc) or run the arm64 build on a 64-bit OS", ErrIndexFull,
			used>>20, bits.UintSize, max>>20)
	}
	return nil
}
