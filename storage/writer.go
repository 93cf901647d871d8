// writer.go: the single writer goroutine that batches puts into few
// transactions (group commit).

package storage

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

type opKind uint8

const (
	opPut opKind = iota
	opDel
)

type mutation struct {
	bucket []byte
	kind   opKind
	key    []byte
	val    []byte
}

// request is one unit handed to the writer: its mutations are applied in
// one transaction, together with other requests queued at the same time.
type request struct {
	muts  []mutation
	size  int
	done  chan error // nil for async requests
	batch *Batch     // async requests only
	// then runs once the transaction that held the request has ended
	// (async requests only; may be nil).
	then func()
}

type writer struct {
	// blockBytes mirrors "blocks.size" after each commit, for cheap reads.
	blockBytes atomic.Uint64
	// usedBytes is the bytes of the file's pages in use after the last
	// commit (Stat.UsedBytes).
	usedBytes atomic.Uint64
	// written counts the bytes of the commits since open; writtenTotal
	// the same over the file's life (meta "written" holds it as of the
	// commit before the last).
	written      atomic.Uint64
	writtenTotal atomic.Uint64
	persisted    uint64 // the "written" of the last commit (writer goroutine only)
	db           *bolt.DB
	maxTx        int
	reqs         chan *request
	pending      *byteSem
	wg           sync.WaitGroup

	mu     sync.RWMutex
	closed bool
}

func newWriter(db *bolt.DB, o Options) *writer {
	w := &writer{
		db:      db,
		maxTx:   o.MaxBatchBytes,
		reqs:    make(chan *request, 256),
		pending: newByteSem(o.MaxPendingBytes),
	}
	w.wg.Add(1)
	go w.loop()
	return w
}

// submit queues r. It fails after close, or when ctx ends while the
// queue is full (a writer slow in a commit must not hold a request whose
// client has gone).
func (w *writer) submit(ctx context.Context, r *request) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	select {
	case w.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do applies muts durably and waits for the commit.
func (w *writer) do(muts []mutation) error {
	r := &request{muts: muts, done: make(chan error, 1)}
	if err := w.submit(context.Background(), r); err != nil {
		return err
	}
	return <-r.done
}

func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.reqs)
	}
	w.mu.Unlock()
	w.wg.Wait()
	// Record the last commits' writes too (a commit of a few pages).
	if w.persisted != w.writtenTotal.Load() {
		_ = w.db.Update(func(tx *bolt.Tx) error { return w.putWritten(tx.Bucket(bucketMeta)) })
	}
}

// putWritten records the writes counted so far in "meta".
func (w *writer) putWritten(meta *bolt.Bucket) error {
	total := w.writtenTotal.Load()
	if err := meta.Put(keyWritten, u64(total)); err != nil {
		return err
	}
	w.persisted = total
	return nil
}

func (w *writer) loop() {
	defer w.wg.Done()
	for r := range w.reqs {
		group := []*request{r}
		size := r.size
	drain:
		for size < w.maxTx && len(group) < 4096 {
			select {
			case r2, ok := <-w.reqs:
				if !ok {
					break drain
				}
				group = append(group, r2)
				size += r2.size
			default:
				break drain
			}
		}
		err := w.commit(group)
		for _, r := range group {
			if r.done != nil {
				r.done <- err
			}
			if r.then != nil {
				r.then() // before finish: done by the time Sync returns
			}
			if r.batch != nil {
				r.batch.finish(r.size, err)
				w.pending.release(r.size)
			}
		}
	}
}

func (w *writer) commit(group []*request) error {
	var total uint64
	before := pageAlloc(w.db)
	err := w.apply(group, &total)
	if err == nil {
		// Every page a commit allocates is written, then one meta page.
		if alloc := pageAlloc(w.db) - before; alloc > 0 {
			n := uint64(alloc) + uint64(w.db.Info().PageSize)
			w.written.Add(n)
			w.writtenTotal.Add(n)
		}
	}
	if err == nil && total != ^uint64(0) {
		w.blockBytes.Store(total)
	}
	if err == nil {
		var size int64
		if w.db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }) == nil {
			w.usedBytes.Store(uint64(size - freeBytes(w.db)))
		}
	}
	return err
}

func (w *writer) apply(group []*request, out *uint64) error {
	*out = ^uint64(0)
	empty := true
	for _, r := range group {
		if len(r.muts) > 0 {
			empty = false
			break
		}
	}
	if empty {
		return nil
	}
	return w.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if err := w.putWritten(meta); err != nil {
			return err
		}
		n := getU64(meta.Get(keyBlocksN))
		total := getU64(meta.Get(keyBlocksSize))
		blocksTouched := false
		idx, data := tx.Bucket(bucketIndex), tx.Bucket(bucketBlocks)
		data.FillPercent = 1.0
		for _, r := range group {
			for _, m := range r.muts {
				if string(m.bucket) == string(bucketBlocks) {
					ref := idx.Get(m.key)
					switch m.kind {
					case opPut:
						if ref != nil {
							continue // content-addressed: same key, same bytes
						}
						seq, err := data.NextSequence()
						if err != nil {
							return err
						}
						k := u64(seq)
						if err := putData(data, k, m.val); err != nil {
							return err
						}
						if err := idx.Put(m.key, k); err != nil {
							return err
						}
						n++
						total += uint64(len(m.val))
					case opDel:
						if ref == nil {
							continue
						}
						ref = append([]byte(nil), ref...)
						total -= uint64(len(getData(data, ref)))
						n--
						if err := delData(data, ref); err != nil {
							return err
						}
						if err := idx.Delete(m.key); err != nil {
							return err
						}
					}
					blocksTouched = true
					continue
				}
				b := tx.Bucket(m.bucket)
				switch m.kind {
				case opPut:
					if err := b.Put(m.key, m.val); err != nil {
						return err
					}
				case opDel:
					if b.Get(m.key) == nil {
						continue
					}
					if err := b.Delete(m.key); err != nil {
						return err
					}
				}
			}
		}
		if blocksTouched {
			*out = total
			if err := meta.Put(keyBlocksN, u64(n)); err != nil {
				return err
			}
			if err := meta.Put(keyBlocksSize, u64(total)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Batch groups asynchronous puts whose durability a caller waits for once,
// with Sync. Errors of its puts are reported by Sync. A Batch is safe for
// concurrent use.
type Batch struct {
	s    *Store
	mu   sync.Mutex
	cond *sync.Cond
	out  int // requests submitted and not yet committed
	err  error
}

// NewBatch starts a batch of asynchronous writes.
func (s *Store) NewBatch() *Batch {
	b := &Batch{s: s}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *Batch) submit(ctx context.Context, muts []mutation, size int, then func()) error {
	if b.s.w == nil {
		return errors.New("storage: store is read-only")
	}
	b.s.w.pending.acquire(size)
	b.mu.Lock()
	b.out++
	b.mu.Unlock()
	err := b.s.w.submit(ctx, &request{muts: muts, size: size, batch: b, then: then})
	if err != nil {
		b.s.w.pending.release(size)
		b.finish(size, err)
	}
	return err
}

func (b *Batch) finish(_ int, err error) {
	b.mu.Lock()
	b.out--
	if err != nil && b.err == nil {
		b.err = err
	}
	if b.out == 0 {
		b.cond.Broadcast()
	}
	b.mu.Unlock()
}

// Sync waits until every write submitted to the batch so far has committed
// and returns the first error any of them met.
func (b *Batch) Sync() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.out > 0 {
		b.cond.Wait()
	}
	return b.err
}

// byteSem is a counting semaphore over bytes. A single request larger than
// the capacity is admitted alone.
type byteSem struct {
	mu   sync.Mutex
	cond *sync.Cond
	cap  int
	used int
}

func newByteSem(n int) *byteSem {
	s := &byteSem{cap: n}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *byteSem) acquire(n int) {
	s.mu.Lock()
	for s.used > 0 && s.used+n > s.cap {
		s.cond.Wait()
	}
	s.used += n
	s.mu.Unlock()
}

// pageAlloc is the bytes of pages the DB's transactions have allocated.
func pageAlloc(db *bolt.DB) int64 {
	st := db.Stats()
	return st.TxStats.GetPageAlloc()
}

func (s *byteSem) release(n int) {
	s.mu.Lock()
	s.used -= n
	s.cond.Broadcast()
	s.mu.Unlock()
}

// Block bytes live in "blocks" under increasing sequence numbers, each in
// a nested bucket of its own (key "d"). bbolt keeps at least two entries
// per leaf, so big values sharing a leaf get rewritten whenever a
// neighbour changes; a nested bucket gives each big block pages of its own
// (small ones stay inline in the parent's leaf), so an add writes each
// block once and a delete rewrites no other block.
var dataKey = []byte("d")

func putData(data *bolt.Bucket, seq, val []byte) error {
	b, err := data.CreateBucket(seq)
	if err != nil {
		return err
	}
	b.FillPercent = 1.0
	return b.Put(dataKey, val)
}

func getData(data *bolt.Bucket, seq []byte) []byte {
	b := data.Bucket(seq)
	if b == nil {
		return nil
	}
	return b.Get(dataKey)
}

func delData(data *bolt.Bucket, seq []byte) error { return data.DeleteBucket(seq) }
