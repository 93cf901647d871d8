// runs.go: the block index as sorted runs, so that indexing a block
// does not rewrite a random page of one big tree.

package storage

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/cespare/xxhash/v2"
	bolt "go.etcd.io/bbolt"
)

// The index maps a block's multihash to its loc. It is a set of runs:
// bbolt buckets nested in "runs", each described in "runinfo" (name →
// state byte, entry count u64). A key is in at most one readable run,
// so a lookup may search them in any order; it searches the biggest
// first. New entries go into the one open run; at runKeys entries it is
// sealed and the next entry starts a new one. Sealed runs of about the
// same size (the same tier: a factor of mergeFanIn apart) are merged
// mergeFanIn at a time into one run, written in key order, a step per
// index commit, so that every entry is rewritten about once per tier
// (log of the entry count) rather than a random 4 KiB page per block.
//
// Each sealed run has a Bloom filter in "runbloom" (about 10 bits per
// entry, read from the map, never copied to the heap), so that a lookup
// of a key the store lacks (every new block's) searches few runs.
//
// A merge's inputs stay readable until the commit that seals its output
// (the last step) drops them; deletes and moves meanwhile change every
// run that holds the key, the output included. "merge.after" in meta is
// the last key the merge has copied.
const (
	runOpen     byte = 0 // takes new entries
	runSealed   byte = 1
	runMerging  byte = 2 // an input of the merge in progress, still read
	runBuilding byte = 3 // the output of the merge in progress, not read
)

var (
	bucketRuns    = []byte("runs")
	bucketRunInfo = []byte("runinfo")
	bucketBloom   = []byte("runbloom")
	keyRunNext    = []byte("run.next")
	keyMergeAfter = []byte("merge.after")
)

// Tunables of the runs (variables for tests).
var (
	// runKeys is the entry count at which the open run is sealed.
	runKeys uint64 = 16384
	// mergeFanIn is how many runs of one tier a merge takes.
	mergeFanIn = 4
	// mergePerEntry is how many entries a merge copies per entry an
	// index commit adds (at least mergeMinStep, at most mergeMaxStep):
	// enough to finish a merge of the biggest tier before the smallest
	// tier fills twice. A commit that adds nothing takes no step, and
	// one that adds a block copies 8 entries, so a pin, a delete or a
	// one-block add does not wait for a merge; the writer takes steps
	// of mergeIdleStep when it has been idle for mergeIdle (writer.go),
	// small enough that an idle node's heap stays small.
	mergePerEntry = 8
	mergeMinStep  = 0
	mergeMaxStep  = 32768
	mergeIdleStep = 4096
)

type run struct {
	name  []byte
	b     *bolt.Bucket // opened on first use
	state byte
	n     uint64
	dirty bool
	// sealed: sealed in this transaction, its filter not built yet.
	sealed bool
}

func (r *run) readable() bool { return r.state != runBuilding }

// index is the index as one transaction sees it.
type index struct {
	tx     *bolt.Tx
	runsB  *bolt.Bucket
	infoB  *bolt.Bucket
	bloomB *bolt.Bucket
	legacy bool   // a schema-2 file opened read-only: one "index" bucket
	all    []*run // in name order
	read   []*run // the readable ones, most entries first
	open   *run
	build  *run
	added  int  // entries put in this transaction
	idle   bool // the writer is idle: take an idle merge step
	// compact: take full merge steps, and begin a merge of the sparse
	// runs when none is in progress and sparse is set (compactRuns).
	compact bool
	sparse  bool
}

func errMissingIndex() error {
	return fmt.Errorf("%w: missing bucket %q or %q", ErrCorrupt, bucketRuns, bucketRunInfo)
}

// loadIndex reads the runs' descriptions in tx.
func loadIndex(tx *bolt.Tx) (*index, error) {
	x := &index{tx: tx, runsB: tx.Bucket(bucketRuns), infoB: tx.Bucket(bucketRunInfo), bloomB: tx.Bucket(bucketBloom)}
	if x.runsB == nil || x.infoB == nil || x.bloomB == nil {
		if b := tx.Bucket(bucketIndex); b != nil && !tx.Writable() {
			r := &run{name: bucketIndex, b: b, state: runSealed}
			x.legacy, x.all, x.read = true, []*run{r}, []*run{r}
			return x, nil
		}
		return nil, errMissingIndex()
	}
	c := x.infoB.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) != 9 || v[0] > runBuilding {
			return nil, fmt.Errorf("%w: run %x: bad description %x", ErrCorrupt, k, v)
		}
		x.add(&run{name: k, state: v[0], n: getU64(v[1:])})
	}
	x.sortRead()
	return x, nil
}

func (x *index) bucket(r *run) *bolt.Bucket {
	if r.b == nil {
		r.b = x.runsB.Bucket(r.name)
	}
	return r.b
}

// get returns the loc record of key, nil when it is not indexed.
func (x *index) get(key []byte) []byte {
	var h uint64
	hashed := false
	for _, r := range x.read {
		if r.state != runOpen && x.bloomB != nil {
			if f := x.bloomB.Get(r.name); f != nil {
				if !hashed {
					h, hashed = xxhash.Sum64(key), true
				}
				if !bloomHas(f, h) {
					continue
				}
			}
		}
		if b := x.bucket(r); b != nil {
			if v := b.Get(key); v != nil {
				return v
			}
		}
	}
	return nil
}

// put indexes a key that is not indexed yet.
func (x *index) put(key, val []byte) error {
	if x.open == nil {
		if err := x.newRun(runOpen); err != nil {
			return err
		}
	}
	r := x.open
	if err := x.bucket(r).Put(key, val); err != nil {
		return err
	}
	r.n++
	r.dirty = true
	x.added++
	if r.n >= runKeys {
		r.state, r.sealed = runSealed, true
		x.open = nil
	}
	return nil
}

// update sets the loc of an indexed key, in every run that holds it.
func (x *index) update(key, val []byte) error {
	for _, r := range x.all {
		b := x.bucket(r)
		if b == nil || b.Get(key) == nil {
			continue
		}
		if err := b.Put(key, val); err != nil {
			return err
		}
	}
	return nil
}

// del removes key from every run that holds it and returns its loc
// record as the readable runs had it (nil when none did).
func (x *index) del(key []byte) ([]byte, error) {
	var old []byte
	for _, r := range x.all {
		b := x.bucket(r)
		if b == nil {
			continue
		}
		v := b.Get(key)
		if v == nil {
			continue
		}
		if r.readable() {
			old = append([]byte(nil), v...)
		}
		if err := b.Delete(key); err != nil {
			return nil, err
		}
		r.n--
		r.dirty = true
	}
	return old, nil
}

func (x *index) newRun(state byte) error {
	meta := x.tx.Bucket(bucketMeta)
	id := getU32(meta.Get(keyRunNext))
	if err := meta.Put(keyRunNext, u32(id+1)); err != nil {
		return err
	}
	name := u32(id)
	b, err := x.runsB.CreateBucket(name)
	if err != nil {
		return fmt.Errorf("storage: run %x: %w", name, err)
	}
	x.add(&run{name: name, b: b, state: state, dirty: true})
	return nil
}

func (x *index) add(r *run) {
	x.all = append(x.all, r)
	switch r.state {
	case runOpen:
		x.open = r
	case runBuilding:
		x.build = r
	}
	if r.readable() {
		x.read = append(x.read, r)
	}
}

// finish ends the transaction's changes to the index: it drops empty
// sealed runs, takes a merge step (or plans a merge) and writes the
// descriptions that changed. Every writing transaction that changed the
// index calls it before committing.
func (x *index) finish() error {
	if x.legacy {
		return nil
	}
	if x.build == nil {
		if x.sparse {
			x.planSparse()
		} else {
			x.planMerge()
		}
	}
	if x.build != nil && (x.added > 0 || x.idle || x.compact) {
		step := max(mergeMinStep, mergePerEntry*x.added)
		switch {
		case x.compact:
			step = mergeMaxStep
		case x.idle:
			step = mergeIdleStep
		}
		if err := x.mergeStep(min(step, mergeMaxStep)); err != nil {
			return err
		}
	}
	kept := x.all[:0]
	for _, r := range x.all {
		if r.sealed && r.n > 0 {
			if err := x.buildBloom(r); err != nil {
				return err
			}
		}
		if r.state == runSealed && r.n == 0 {
			if err := x.drop(r); err != nil {
				return err
			}
			continue
		}
		kept = append(kept, r)
		if !r.dirty {
			continue
		}
		v := make([]byte, 9)
		v[0] = r.state
		copy(v[1:], u64(r.n))
		if err := x.infoB.Put(r.name, v); err != nil {
			return err
		}
		r.dirty = false
	}
	x.all = kept
	x.read = x.read[:0]
	for _, r := range x.all {
		if r.readable() {
			x.read = append(x.read, r)
		}
	}
	x.sortRead()
	return nil
}

// sortRead orders the readable runs most entries first: a key is in at
// most one, so lookups stop soonest searching the biggest first.
func (x *index) sortRead() {
	sort.SliceStable(x.read, func(i, j int) bool { return x.read[i].n > x.read[j].n })
}

func (x *index) drop(r *run) error {
	if err := x.runsB.DeleteBucket(r.name); err != nil {
		return fmt.Errorf("storage: run %x: %w", r.name, err)
	}
	if err := x.bloomB.Delete(r.name); err != nil {
		return err
	}
	return x.infoB.Delete(r.name)
}

// tier is a run's size class: runs a tier apart differ mergeFanIn times.
func tier(n uint64) int {
	t := 0
	for m := runKeys * uint64(mergeFanIn); n >= m; m *= uint64(mergeFanIn) {
		t++
	}
	return t
}

// planMerge picks mergeFanIn sealed runs of the smallest tier that has
// that many and begins their merge.
func (x *index) planMerge() {
	tiers := map[int][]*run{}
	best := -1
	for _, r := range x.all {
		if r.state != runSealed {
			continue
		}
		t := tier(r.n)
		tiers[t] = append(tiers[t], r)
		if len(tiers[t]) == mergeFanIn && (best < 0 || t < best) {
			best = t
		}
	}
	if best < 0 {
		return
	}
	if err := x.newRun(runBuilding); err != nil {
		return // retried by the next commit
	}
	for _, r := range tiers[best][:mergeFanIn] {
		r.state = runMerging
		r.dirty = true
	}
	_ = x.tx.Bucket(bucketMeta).Delete(keyMergeAfter)
}

// planSparse begins a merge of every sealed run whose leaf pages are
// less than half used (deletes left them so), alone or together: their
// entries go into full pages and the rest of their pages go free. Since
// less than half of each is in use, the merge writes less than it frees.
func (x *index) planSparse() {
	var sparse []*run
	for _, r := range x.all {
		if r.state != runSealed {
			continue
		}
		b := x.bucket(r)
		if b == nil {
			continue
		}
		st := b.Stats()
		if st.LeafAlloc >= 4*4096 && 2*st.LeafInuse < st.LeafAlloc {
			sparse = append(sparse, r)
		}
	}
	if len(sparse) == 0 {
		return
	}
	if err := x.newRun(runBuilding); err != nil {
		return
	}
	for _, r := range sparse {
		r.state = runMerging
		r.dirty = true
	}
	_ = x.tx.Bucket(bucketMeta).Delete(keyMergeAfter)
}

// mergeStep copies up to limit entries, in key order, from the merge's
// inputs into its output; after the last it seals the output and drops
// the inputs.
func (x *index) mergeStep(limit int) error {
	meta := x.tx.Bucket(bucketMeta)
	var ins []*bolt.Bucket
	for _, r := range x.all {
		if r.state != runMerging {
			continue
		}
		b := x.bucket(r)
		if b == nil {
			return fmt.Errorf("%w: run %x has no bucket", ErrCorrupt, r.name)
		}
		ins = append(ins, b)
	}
	// Gather first, copied into one buffer (bbolt keeps a value's slice
	// until the commit, and a commit that grows the file remaps it): the
	// output is written after the cursors are done.
	m := newMerged(ins, meta.Get(keyMergeAfter))
	var buf []byte
	var ends []int // key end, value end, per entry
	for len(ends) < 2*limit {
		k, v := m.next()
		if k == nil {
			break
		}
		buf = append(buf, k...)
		ends = append(ends, len(buf))
		buf = append(buf, v...)
		ends = append(ends, len(buf))
	}
	n := len(ends) / 2
	done := m.done()
	out := x.build
	ob := x.bucket(out)
	if ob == nil {
		return fmt.Errorf("%w: run %x has no bucket", ErrCorrupt, out.name)
	}
	ob.FillPercent = 1 // appended in key order
	var last []byte
	for i, start := 0, 0; i < n; i++ {
		k, v := buf[start:ends[2*i]], buf[ends[2*i]:ends[2*i+1]]
		if err := ob.Put(k, v); err != nil {
			return err
		}
		last, start = k, ends[2*i+1]
	}
	out.n += uint64(n)
	out.dirty = true
	if !done {
		return meta.Put(keyMergeAfter, last)
	}
	for _, r := range x.all {
		if r.state == runMerging {
			if err := x.drop(r); err != nil {
				return err
			}
			r.state, r.n, r.dirty = runSealed, 0, false
			r.name = nil
		}
	}
	kept := x.all[:0]
	for _, r := range x.all {
		if r.name != nil {
			kept = append(kept, r)
		}
	}
	x.all = kept
	out.state, out.sealed = runSealed, true
	x.build = nil
	return meta.Delete(keyMergeAfter)
}

// buildBloom writes the filter of a run sealed in this transaction.
func (x *index) buildBloom(r *run) error {
	f := newBloom(r.n)
	if b := x.bucket(r); b != nil {
		b.ForEach(func(k, _ []byte) error {
			bloomAdd(f, xxhash.Sum64(k))
			return nil
		})
	}
	r.sealed = false
	return x.bloomB.Put(r.name, f)
}

// A Bloom filter of blocks of bloomBlock bytes: a key's bloomProbes bits
// all fall in one block (one cache line), chosen by its hash; about 1%
// false positives at bloomBitsPerKey.
const (
	bloomBlock      = 64
	bloomBitsPerKey = 10
	bloomProbes     = 6
)

func newBloom(n uint64) []byte {
	blocks := (n*bloomBitsPerKey + bloomBlock*8 - 1) / (bloomBlock * 8)
	return make([]byte, max(blocks, 1)*bloomBlock)
}

func bloomBits(f []byte, h uint64) (blk []byte, g uint64) {
	nb := uint64(len(f) / bloomBlock)
	i := h % nb
	return f[i*bloomBlock : (i+1)*bloomBlock], h * 0x9e3779b97f4a7c15
}

func bloomAdd(f []byte, h uint64) {
	blk, g := bloomBits(f, h)
	for range bloomProbes {
		bit := g & (bloomBlock*8 - 1)
		blk[bit>>3] |= 1 << (bit & 7)
		g >>= 9
	}
}

// bloomHas reports whether h may have been added to f (always, for a
// filter of a bad size).
func bloomHas(f []byte, h uint64) bool {
	if len(f) == 0 || len(f)%bloomBlock != 0 {
		return true
	}
	blk, g := bloomBits(f, h)
	for range bloomProbes {
		bit := g & (bloomBlock*8 - 1)
		if blk[bit>>3]&(1<<(bit&7)) == 0 {
			return false
		}
		g >>= 9
	}
	return true
}

// forEach calls fn for every indexed key in key order, starting after
// after (from the first when nil), until fn returns false.
func (x *index) forEach(after []byte, fn func(k, v []byte) bool) {
	var bs []*bolt.Bucket
	for _, r := range x.read {
		if b := x.bucket(r); b != nil {
			bs = append(bs, b)
		}
	}
	m := newMerged(bs, after)
	for {
		k, v := m.next()
		if k == nil || !fn(k, v) {
			return
		}
	}
}

// merged walks buckets together in key order, from the first key after
// after (from the first when nil); a key in several yields once.
type merged struct {
	cs    []*bolt.Cursor
	heads [][2][]byte
}

func newMerged(bs []*bolt.Bucket, after []byte) *merged {
	m := &merged{}
	for _, b := range bs {
		c := b.Cursor()
		var k, v []byte
		if after == nil {
			k, v = c.First()
		} else if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
			k, v = c.Next()
		}
		m.cs = append(m.cs, c)
		m.heads = append(m.heads, [2][]byte{k, v})
	}
	return m
}

// next returns the least key left and its value (nil at the end); they
// stay valid for the transaction while nothing is written.
func (m *merged) next() (k, v []byte) {
	least := -1
	for i, h := range m.heads {
		if h[0] != nil && (least < 0 || bytes.Compare(h[0], m.heads[least][0]) < 0) {
			least = i
		}
	}
	if least < 0 {
		return nil, nil
	}
	k, v = m.heads[least][0], m.heads[least][1]
	for i, h := range m.heads {
		if h[0] != nil && bytes.Equal(h[0], k) {
			nk, nv := m.cs[i].Next()
			m.heads[i] = [2][]byte{nk, nv}
		}
	}
	return k, v
}

func (m *merged) done() bool {
	for _, h := range m.heads {
		if h[0] != nil {
			return false
		}
	}
	return true
}

// upgradeV2 turns a schema-2 file's one "index" bucket into the first
// run, in place.
func upgradeV2(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	runs, err := tx.CreateBucket(bucketRuns)
	if err != nil {
		return err
	}
	info, err := tx.CreateBucket(bucketRunInfo)
	if err != nil {
		return err
	}
	if _, err := tx.CreateBucket(bucketBloom); err != nil {
		return err
	}
	if err := tx.MoveBucket(bucketIndex, nil, runs); err != nil {
		return fmt.Errorf("storage: upgrading to schema %d: %w", SchemaVersion, err)
	}
	v := make([]byte, 9)
	v[0] = runSealed
	copy(v[1:], meta.Get(keyBlocksN)) // the index holds every block
	if err := info.Put(bucketIndex, v); err != nil {
		return err
	}
	if err := meta.Put(keyRunNext, u32(0)); err != nil {
		return err
	}
	return meta.Put(keyVersion, u32(SchemaVersion))
}
