// lag.go: acknowledging puts once their records are durable in the
// active segment, and indexing them in bbolt later, many at a time.

package storage

import (
	"context"
	"errors"
	"os"
	"sort"
	"sync"

	mh "github.com/multiformats/go-multihash"
	bolt "go.etcd.io/bbolt"
)

// DefaultIndexLagBytes is how many bytes of blocks may be durable in the
// active segment and not yet in the index (Options.IndexLagBytes).
const DefaultIndexLagBytes = 16 << 20

// DefaultIndexLagBlocks is how many blocks may be durable in the active
// segment and not yet in the index (Options.IndexLagBlocks).
const DefaultIndexLagBlocks = 512

// dsLagFactor: datastore records alone (no block lagging beside them)
// wait for up to this many times IndexLagBlocks before a full commit
// writes them into "data". Their keys are spread over the bucket (a DHT's
// provider records are /dht/providers/<key>/<peer>), so each record
// dirties a page of its own until many share one: with commits of 512,
// storing 65,536 provider records for peers took a fifth of a board's CPU
// for most of `make attack`'s provider flood; with 2,048 (and the flooding
// peers shunned, node/p2p/shun.go) the RPC kept within 2x of idle. The
// overlay then holds up to ~300 KiB of records.
const dsLagFactor = 4

// memIndex holds the blocks appended to the active segment since the
// last index commit. The writer goroutine is its only writer; readers
// look in it before the index. Its entries go into the index in the
// next commit of the writer's full path and leave it only after that
// commit, so a block is always in one of the two.
type memIndex struct {
	mu       sync.RWMutex
	m        map[string]loc
	n        uint64 // blocks
	bytes    uint64 // their sizes
	recBytes uint64 // their records' bytes
	// indexedTx is the bbolt transaction that indexed the entries still
	// here (0 when none did yet): a read transaction of that id or later
	// sees them in the index too.
	indexedTx int
}

func (mi *memIndex) get(key []byte) (loc, bool) {
	mi.mu.RLock()
	l, ok := mi.m[string(key)]
	mi.mu.RUnlock()
	return l, ok
}

// keys lists the entries' keys (copies).
func (mi *memIndex) keys() [][]byte {
	mi.mu.RLock()
	defer mi.mu.RUnlock()
	ks := make([][]byte, 0, len(mi.m))
	for k := range mi.m {
		ks = append(ks, []byte(k))
	}
	return ks
}

// counts returns what the entries add to the index as seen by read
// transaction txID (nothing once a commit that txID sees indexed them).
func (mi *memIndex) counts(txID int) (n, bytes, recBytes uint64) {
	mi.mu.RLock()
	defer mi.mu.RUnlock()
	if mi.indexedTx != 0 && txID >= mi.indexedTx {
		return 0, 0, 0
	}
	return mi.n, mi.bytes, mi.recBytes
}

// lagEligible reports whether group can be acknowledged once appended:
// only block puts, all fitting in the active segment.
func (w *writer) lagEligible(group []*request) bool {
	if w.lagBytes <= 0 {
		return false
	}
	size := int64(0)
	for _, r := range group {
		if r.flush || r.sizes != nil {
			return false
		}
		for _, m := range r.muts {
			if dsLagEligible(m) {
				size += dsRecSize(m)
				continue
			}
			if m.kind != opPut || string(m.bucket) != string(bucketBlocks) {
				return false
			}
			size += recSize(m.key, m.val)
		}
	}
	return w.app.end+size <= w.app.maxSeg
}

// commitLagged appends the group's new blocks and its datastore writes
// to the active segment, syncs it and records them in the memIndex and
// the datastore overlay; when those pass lagBytes, lagBlocks blocks and
// records while blocks lag, or dsLagFactor × lagBlocks records alone, it
// indexes everything with a full commit.
func (w *writer) commitLagged(group []*request) error {
	var recs, dsRecs []*pendingRec
	var dsMuts []mutation
	queued := map[string]bool{}
	for _, r := range group {
		for _, m := range r.muts {
			if string(m.bucket) == string(bucketData) {
				// In order: a later write of a key wins, at replay too.
				dsMuts = append(dsMuts, m)
				dsRecs = append(dsRecs, dsRecord(m))
				continue
			}
			if queued[string(m.key)] {
				continue
			}
			if _, ok := w.mem.m[string(m.key)]; ok { // the writer is mem's only writer
				continue
			}
			queued[string(m.key)] = true
			recs = append(recs, &pendingRec{key: m.key, data: m.val})
		}
	}
	// Content-addressed: a block already indexed is not stored again.
	if len(recs) > 0 {
		if err := w.db.View(func(tx *bolt.Tx) error {
			idx, err := loadIndex(tx)
			if err != nil {
				return err
			}
			kept := recs[:0]
			for _, rec := range recs {
				if idx.get(rec.key) == nil {
					kept = append(kept, rec)
				}
			}
			recs = kept
			return nil
		}); err != nil {
			return err
		}
	}
	if len(recs) == 0 && len(dsRecs) == 0 {
		return nil
	}
	plan, err := w.app.write(append(recs, dsRecs...), false, func() uint32 { panic("storage: lagged write began a segment") })
	if err != nil {
		return err
	}
	if err := w.app.commit(plan); err != nil {
		return err
	}
	var n, size, rec uint64
	w.mem.mu.Lock()
	for _, r := range recs {
		w.mem.m[string(r.key)] = r.at
		n++
		size += uint64(r.at.n)
		rec += uint64(recSize(r.key, r.data))
	}
	w.mem.n += n
	w.mem.bytes += size
	w.mem.recBytes += rec
	lagged, laggedN := w.mem.bytes, w.mem.n
	w.mem.mu.Unlock()
	if len(dsMuts) > 0 {
		w.ds.mu.Lock()
		for _, m := range dsMuts {
			w.ds.set(m)
		}
		w.ds.mu.Unlock()
	}
	lagged += w.ds.bytes
	dsN := uint64(len(w.ds.m))
	w.blockBytes.Add(size)
	w.segBytes.Add(uint64(plan.bytes))
	w.usedBytes.Add(uint64(plan.bytes))
	w.written.Add(uint64(plan.bytes))
	w.writtenTotal.Add(uint64(plan.bytes))
	// Blocks and the records beside them (an add and its pin) count
	// together; records alone wait longer (dsLagFactor).
	if lagged >= uint64(w.lagBytes) || laggedN > 0 && laggedN+dsN >= uint64(w.lagBlocks) || dsN >= dsLagFactor*uint64(w.lagBlocks) {
		// The writes are durable already; a failed index commit is
		// retried by the next one (and replayed at Open after a crash).
		_ = w.commit(nil)
	}
	return nil
}

// foldMem puts the memIndex's entries into the index within tx, with
// their counts, and notes tx as the one that indexed them.
func (w *writer) foldMem(tx *bolt.Tx, idx *index, segs *txSegs) error {
	if !w.ds.empty() {
		// The overlay's writes go in first: the group's own come after
		// them. The caller holds w.ds.mu.
		if err := w.foldDS(tx); err != nil {
			return err
		}
		segs.change(w.app.id).end = uint64(w.app.end)
	}
	if w.mem.n == 0 {
		return nil
	}
	keys := make([]string, 0, len(w.mem.m))
	for k := range w.mem.m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // bbolt puts in key order touch each page once
	for _, k := range keys {
		if err := idx.put([]byte(k), w.mem.m[k].encode()); err != nil {
			return err
		}
	}
	si := segs.change(w.app.id)
	si.liveN += w.mem.n
	si.liveBytes += w.mem.recBytes
	si.end = uint64(w.app.end)
	w.mem.mu.Lock()
	w.mem.indexedTx = tx.ID()
	w.mem.mu.Unlock()
	return nil
}

// foldDS writes the datastore overlay into the "data" bucket within tx,
// in key order.
func (w *writer) foldDS(tx *bolt.Tx) error {
	b := tx.Bucket(bucketData)
	keys := make([]string, 0, len(w.ds.m))
	for k := range w.ds.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := w.ds.m[k]
		var err error
		if e.del {
			err = b.Delete([]byte(k))
		} else {
			err = b.Put([]byte(k), e.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// memIndexed empties the memIndex after the commit that indexed it;
// memFailed forgets that commit when it failed.
func (w *writer) memIndexed() {
	w.mem.mu.Lock()
	if w.mem.indexedTx != 0 {
		clear(w.mem.m)
		w.mem.n, w.mem.bytes, w.mem.recBytes, w.mem.indexedTx = 0, 0, 0, 0
	}
	w.mem.mu.Unlock()
}

func (w *writer) memFailed() {
	w.mem.mu.Lock()
	w.mem.indexedTx = 0
	w.mem.mu.Unlock()
}

// flush indexes whatever the memIndex holds and waits for the commit.
func (w *writer) flush() error {
	r := &request{flush: true, done: make(chan error, 1)}
	if err := w.submit(context.Background(), r); err != nil {
		return err
	}
	return <-r.done
}

// replay indexes the records a crash left past the active segment's
// indexed end, and applies its datastore records in order: each block
// record whose bytes hash to its key and each datastore record whose
// checksum holds, up to the first that does not (a write the crash cut,
// never acknowledged). It returns the end of the last such record.
func replay(db *bolt.DB, sf *segFiles, active uint32, indexed, size int64) (int64, error) {
	if size <= indexed {
		return indexed, nil
	}
	f, err := os.Open(sf.name(active))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	type ent struct {
		key []byte
		l   loc
		rec uint64
	}
	var ents []ent
	var dsMuts []mutation
	end := indexed
	errStop := errors.New("stop")
	err = scanRecords(f, indexed, size, func(key, data []byte, off int64) error {
		if isDSRecord(key) {
			m, ok := parseDSRecord(key, data)
			if !ok {
				return errStop
			}
			dsMuts = append(dsMuts, m)
			end = off + int64(len(data))
			return nil
		}
		if dm, err := mh.Decode(key); err != nil || dm.Code == mh.IDENTITY {
			return errStop
		}
		if err := VerifyBlock(key, data); err != nil {
			return errStop
		}
		ents = append(ents, ent{append([]byte(nil), key...), loc{seg: active, off: uint32(off), n: uint32(len(data))}.summed(data), uint64(recSize(key, data))})
		end = off + int64(len(data))
		return nil
	})
	if err != nil && !errors.Is(err, errStop) && !errors.Is(err, ErrCorrupt) {
		return 0, err
	}
	if len(ents) == 0 && len(dsMuts) == 0 {
		return indexed, nil
	}
	err = db.Update(func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketData)
		for _, m := range dsMuts { // in order: the last write of a key wins
			var err error
			if m.kind == opDel {
				err = data.Delete(m.key)
			} else {
				err = data.Put(m.key, m.val)
			}
			if err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		idx, err := loadIndex(tx)
		if err != nil {
			return err
		}
		segs := &txSegs{b: tx.Bucket(bucketSegs), m: map[uint32]*segInfo{}, dirt: map[uint32]bool{}}
		si := segs.change(active)
		n, total := getU64(meta.Get(keyBlocksN)), getU64(meta.Get(keyBlocksSize))
		for _, e := range ents {
			if idx.get(e.key) != nil {
				continue
			}
			if err := idx.put(e.key, e.l.encode()); err != nil {
				return err
			}
			si.liveN++
			si.liveBytes += e.rec
			n++
			total += uint64(e.l.n)
		}
		si.end = uint64(end)
		if err := idx.finish(); err != nil {
			return err
		}
		if err := segs.b.Put(segKey(active), si.encode()); err != nil {
			return err
		}
		if err := meta.Put(keyBlocksN, u64(n)); err != nil {
			return err
		}
		return meta.Put(keyBlocksSize, u64(total))
	})
	return end, err
}
