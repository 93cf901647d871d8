// writer.go: the single writer goroutine that batches puts into few
// transactions (group commit).

package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	ds "github.com/ipfs/go-datastore"
	bolt "go.etcd.io/bbolt"
)

type opKind uint8

const (
	opPut opKind = iota
	opDel
	// opMove rewrites a live block at the end of the active segment
	// (reclaim.go): val is its data, from its location from.
	opMove
	// opRoll begins a new active segment (reclaim.go), so that the
	// current one can be reclaimed.
	opRoll
)

type mutation struct {
	bucket []byte
	kind   opKind
	key    []byte
	val    []byte
	from   loc // opMove only
}

// request is one unit handed to the writer: its mutations are applied in
// one transaction, together with other requests queued at the same time.
type request struct {
	muts []mutation
	size int
	done chan error // nil for async requests
	// sizes, when not nil (len(muts)), receives the size of each block
	// an opDel removed, -1 where there was none.
	sizes []int
	// flush asks for a full commit, indexing what lag.go's memIndex holds.
	flush bool
	// giveBack asks for the index file's free pages to be given back
	// (giveback.go), alone, between commits; gaveBack is the result.
	giveBack bool
	// punch, with giveBack, asks for PunchRemoved (reclaim.go) instead.
	punch    bool
	gaveBack int64
	batch    *Batch // async requests only
	// after, when set, is the batch whose writes submitted so far this
	// request follows: it is applied only if none of them failed.
	after *Batch
	// then runs once the transaction that held the request has ended
	// (async requests only; may be nil).
	then func()
}

type writer struct {
	// fault is the error of the last commit, nil once one succeeds
	// (fault.go).
	fault atomic.Pointer[string]
	// blockBytes mirrors "blocks.size" after each commit, for cheap reads.
	blockBytes atomic.Uint64
	// usedBytes is the bytes of the file's pages in use after the last
	// commit (Stat.UsedBytes).
	usedBytes atomic.Uint64
	// indexUsed is the bytes of the index file's pages in use after the
	// last commit (Options.MaxIndexBytes).
	indexUsed atomic.Int64
	// written counts the bytes of the commits since open; writtenTotal
	// the same over the file's life (meta "written" holds it as of the
	// commit before the last).
	written      atomic.Uint64
	writtenTotal atomic.Uint64
	persisted    uint64 // the "written" of the last commit (writer goroutine only)
	// submitted counts the requests queued since Open.
	submitted atomic.Uint64
	// segBytes is the sum of the segment files' committed ends.
	segBytes  atomic.Uint64
	db        *bolt.DB
	res       *reserve
	sf        *segFiles
	app       *appender
	mem       memIndex
	ds        dsOverlay // datastore writes not yet in "data" (dslog.go)
	lagBytes  int64
	lagBlocks int
	maxTx     int
	// merging: a merge of index runs is in progress (runs.go); the loop
	// then takes a merge step whenever it has been idle for mergeIdle.
	merging atomic.Bool
	// compacting and planSparse drive compactRuns' commits.
	compacting, planSparse bool
	// idleFrom is when the loop may take its first idle merge step:
	// mergeAfterOpen after Open, so that a merge the last run left does
	// not compete with the daemon's start.
	idleFrom  time.Time
	mergeDone func()
	idleStep  bool
	reqs      chan *request
	pending   *byteSem
	wg        sync.WaitGroup

	mu     sync.RWMutex
	closed bool
}

func newWriter(db *bolt.DB, res *reserve, sf *segFiles, app *appender, o Options) *writer {
	w := &writer{
		db:        db,
		res:       res,
		sf:        sf,
		app:       app,
		mem:       memIndex{m: map[string]loc{}},
		lagBytes:  o.IndexLagBytes,
		lagBlocks: o.IndexLagBlocks,
		maxTx:     o.MaxBatchBytes,
		idleFrom:  time.Now().Add(mergeAfterOpen),
		mergeDone: o.MergeDone,
		reqs:      make(chan *request, 256),
		pending:   newByteSem(o.MaxPendingBytes),
	}
	_ = db.View(func(tx *bolt.Tx) error {
		if x, err := loadIndex(tx); err == nil {
			w.merging.Store(x.build != nil) // left by the last run
		}
		return nil
	})
	res.make()
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
		w.submitted.Add(1)
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
	// The last commit records the writes counted so far and writes
	// bbolt's freelist, so that the next Open reads it from its page
	// instead of walking every page of the index (see "Restart" in
	// doc.go). The first commit after that open drops it again.
	w.db.NoFreelistSync = false
	_ = w.commit(nil)
	w.app.close()
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

// mergeIdle is how long the writer waits for a request before it takes
// a merge step of its own: longer than the gap between the requests of
// a client that writes one block at a time, so that they never wait for
// one.
const mergeIdle = 100 * time.Millisecond

// mergeAfterOpen is how long after Open the writer waits before its
// first idle merge step (a variable for tests).
var mergeAfterOpen = 10 * time.Second

func (w *writer) loop() {
	defer w.wg.Done()
	for {
		var r *request
		var ok bool
		if w.merging.Load() {
			t := time.NewTimer(max(mergeIdle, time.Until(w.idleFrom)))
			select {
			case r, ok = <-w.reqs:
				t.Stop()
			case <-t.C:
				w.idleStep = true
				_ = w.commit(nil) // retried at the next idle moment
				w.idleStep = false
				continue
			}
		} else {
			r, ok = <-w.reqs
		}
		if !ok {
			return
		}
		if r.giveBack {
			w.serveGiveBack(r)
			continue
		}
		group := []*request{r}
		size := r.size
		var after *request // a giveBack request drained with the group
	drain:
		for size < w.maxTx && len(group) < 4096 {
			select {
			case r2, ok := <-w.reqs:
				if !ok {
					break drain
				}
				if r2.giveBack {
					after = r2
					break drain
				}
				group = append(group, r2)
				size += r2.size
			default:
				break drain
			}
		}
		group = w.dropAfterFailed(group)
		var err error
		switch {
		case len(group) == 0: // all answered
		default:
			err = w.commitGroup(group)
			if err != nil && noSpace(err) && removesOnly(group) && w.res.release() {
				// Deletes on a full disk: the reserve's room takes
				// their index pages, a few at a time (reserve.go).
				err = w.commitInSteps(group)
			}
			w.noteCommit(group, err)
		}
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
		if after != nil {
			w.serveGiveBack(after)
		}
	}
}

// commitGroup commits group: its records alone when lag.go may
// acknowledge them so, else in a full commit.
func (w *writer) commitGroup(group []*request) error {
	if w.lagEligible(group) {
		return w.commitLagged(group)
	}
	return w.commit(group)
}

// dropAfterFailed answers and drops the requests that follow a batch one
// of whose writes failed (an earlier group's: within a group, one
// transaction holds them all).
func (w *writer) dropAfterFailed(group []*request) []*request {
	kept := group[:0]
	for _, r := range group {
		if r.after != nil {
			r.after.mu.Lock()
			err := r.after.err
			r.after.mu.Unlock()
			if err != nil {
				r.done <- fmt.Errorf("storage: not written: an earlier write failed: %w", err)
				continue
			}
		}
		kept = append(kept, r)
	}
	return kept
}

// commit applies group in one transaction, with the memIndex's entries;
// a nil group commits those (and the writes counter) alone.
func (w *writer) commit(group []*request) error {
	if room := commitRoom.Load(); room != nil {
		if err := (*room)(group); err != nil {
			return err
		}
	}
	var total uint64
	before := pageAlloc(w.db)
	var res applyResult
	res.merging = w.merging.Load()
	// Only the writer goroutine adds to the overlay, so one empty here
	// stays empty through this commit, which then neither locks nor
	// touches it (clearing even an empty map is a write to it).
	folding := !w.ds.empty()
	if folding {
		// Readers must not see a key between the bucket and the
		// overlay: they wait for this commit (dsOverlay).
		w.ds.mu.Lock()
		defer w.ds.mu.Unlock()
	}
	err := w.apply(group, &total, &res)
	if err == nil {
		if folding {
			w.ds.clear()
		}
		w.memIndexed()
		if w.merging.Swap(res.merging) && !res.merging && w.mergeDone != nil {
			w.mergeDone()
		}
	} else {
		w.memFailed()
	}
	if err == nil && res.plan != nil {
		err = w.app.commit(res.plan)
		for range res.plan.started {
			w.segBytes.Add(uint64(segHeader))
		}
		w.segBytes.Add(uint64(res.plan.bytes))
	}
	if err == nil && len(res.emptied) > 0 {
		w.segBytes.Add(^(res.emptiedBytes - 1))
		err = w.sf.remove(res.emptied)
	}
	if err == nil {
		// Every page a commit allocates is written, then one meta page,
		// and the records appended to the segments.
		if alloc := pageAlloc(w.db) - before; alloc > 0 || res.plan != nil {
			n := uint64(alloc) + uint64(w.db.Info().PageSize)
			if res.plan != nil {
				n += uint64(res.plan.bytes)
			}
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
			used := size - freeBytes(w.db)
			w.usedBytes.Store(uint64(used) + w.segBytes.Load())
			w.indexUsed.Store(used)
		}
	}
	return err
}

// applyResult is what a commit did beyond the index: the records it
// appended and the segments it emptied (to unlink once it committed).
type applyResult struct {
	merging      bool // a merge of index runs is in progress
	plan         *appendPlan
	emptied      []uint32
	emptiedBytes uint64
}

// txSegs caches the "segs" entries a transaction reads and changes.
type txSegs struct {
	b    *bolt.Bucket
	m    map[uint32]*segInfo
	dirt map[uint32]bool
}

func (ts *txSegs) get(id uint32) *segInfo {
	if si, ok := ts.m[id]; ok {
		return si
	}
	si := &segInfo{}
	if v := ts.b.Get(segKey(id)); v != nil {
		*si, _ = decodeSegInfo(v)
	}
	ts.m[id] = si
	return si
}

func (ts *txSegs) change(id uint32) *segInfo {
	ts.dirt[id] = true
	return ts.get(id)
}

func (w *writer) apply(group []*request, out *uint64, res *applyResult) error {
	*out = ^uint64(0)
	empty := w.mem.n == 0 && w.ds.empty() && group != nil
	for _, r := range group {
		if len(r.muts) > 0 || r.flush {
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
		idx, err := loadIndex(tx)
		if err != nil {
			return err
		}
		idx.idle, idx.compact, idx.sparse = w.idleStep, w.compacting, w.planSparse
		defer func() { res.merging = idx.build != nil }()
		segs := &txSegs{b: tx.Bucket(bucketSegs), m: map[uint32]*segInfo{}, dirt: map[uint32]bool{}}
		if err := w.foldMem(tx, idx, segs); err != nil {
			return err
		}
		if w.mem.n > 0 {
			n += w.mem.n
			total += w.mem.bytes
			blocksTouched = true
		}
		// Records to append, by key, in the order they came: a put of a
		// key already put in this transaction is the same bytes; a delete
		// of it cancels the put.
		var recs []*pendingRec
		queued := map[string]int{}
		roll := false
		for _, r := range group {
			for i, m := range r.muts {
				if m.kind == opRoll {
					roll = true
					continue
				}
				if string(m.bucket) == string(bucketSegs) && m.kind == opDel {
					// Look at the segment: removed below if it holds
					// no live block.
					segs.change(getU32(m.key))
					continue
				}
				if string(m.bucket) != string(bucketBlocks) {
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
					continue
				}
				switch m.kind {
				case opPut:
					if _, ok := queued[string(m.key)]; ok {
						continue
					}
					if idx.get(m.key) != nil {
						continue // content-addressed: same key, same bytes
					}
					queued[string(m.key)] = len(recs)
					recs = append(recs, &pendingRec{key: m.key, data: m.val})
					n++
					total += uint64(len(m.val))
					blocksTouched = true
				case opMove:
					if _, ok := queued[string(m.key)]; ok {
						continue
					}
					cur, ok := decodeLoc(idx.get(m.key))
					if !ok || !cur.samePlace(m.from) {
						continue // deleted or moved since it was read
					}
					si := segs.change(cur.seg)
					si.liveN--
					si.liveBytes -= uint64(recSize(m.key, nil)) + uint64(cur.n)
					queued[string(m.key)] = len(recs)
					recs = append(recs, &pendingRec{key: m.key, data: m.val, move: true})
				case opDel:
					size := -1
					if k, ok := queued[string(m.key)]; ok && recs[k] != nil {
						size = len(recs[k].data)
						recs[k] = nil
						delete(queued, string(m.key))
						n--
						total -= uint64(size)
						blocksTouched = true
					}
					old, err := idx.del(m.key)
					if err != nil {
						return err
					}
					if cur, ok := decodeLoc(old); ok {
						si := segs.change(cur.seg)
						si.liveN--
						si.liveBytes -= uint64(recSize(m.key, nil)) + uint64(cur.n)
						size = int(cur.n)
						n--
						total -= uint64(cur.n)
						blocksTouched = true
					}
					if r.sizes != nil {
						r.sizes[i] = size
					}
				}
			}
		}
		live := recs[:0]
		for _, rec := range recs {
			if rec != nil {
				live = append(live, rec)
			}
		}
		recs = live
		active := w.app.id
		if len(recs) > 0 || roll {
			next := getU32(meta.Get(keySegNext))
			plan, err := w.app.write(recs, roll, func() uint32 { next++; return next - 1 })
			if err != nil {
				return err
			}
			res.plan = plan
			if len(plan.started) > 0 {
				segs.change(active) // the full one: emptied segments go below
			}
			for _, id := range plan.started {
				segs.change(id).end = uint64(segHeader)
				active = id
			}
			for id, end := range plan.ends {
				segs.change(id).end = uint64(end)
			}
			for _, rec := range recs {
				put := idx.put
				if rec.move {
					put = idx.update
				}
				if err := put(rec.key, rec.at.encode()); err != nil {
					return err
				}
				si := segs.change(rec.at.seg)
				si.liveN++
				si.liveBytes += uint64(recSize(rec.key, rec.data))
			}
			if err := meta.Put(keySegNext, u32(next)); err != nil {
				return err
			}
			if err := meta.Put(keySegActive, u32(active)); err != nil {
				return err
			}
		}
		if err := idx.finish(); err != nil {
			return err
		}
		for id := range segs.dirt {
			si := segs.m[id]
			if si.liveN == 0 && id != active {
				// Nothing points into it: the file goes after the commit.
				if err := segs.b.Delete(segKey(id)); err != nil {
					return err
				}
				res.emptied = append(res.emptied, id)
				res.emptiedBytes += si.end
				continue
			}
			if err := segs.b.Put(segKey(id), si.encode()); err != nil {
				return err
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

// Datastore returns a datastore batch whose Commit writes after every
// write submitted to b so far, in the same transaction or a later one,
// and not at all if one of those failed: what it records (a pin) is
// durable only with what it refers to. Commit returns once it is
// durable, which b's earlier writes then are too.
func (b *Batch) Datastore() ds.Batch {
	return &dsBatch{d: b.s.Datastore(), after: b}
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
