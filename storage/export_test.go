package storage

import (
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/ipfs/go-cid"
	bolt "go.etcd.io/bbolt"
)

// RandBlock is a raw block of n random bytes.
var RandBlock = testBlock

// SetMigrateChunk sets the bytes a migration copies per commit.
func SetMigrateChunk(n int) { migrateChunk = n }

// SetRunSizes makes runs and merge steps small, so that a test of a few
// thousand blocks seals and merges many; the returned func restores them.
func SetRunSizes(keys uint64, minStep, perEntry, maxStep int) func() {
	k, mn, pe, mx := runKeys, mergeMinStep, mergePerEntry, mergeMaxStep
	runKeys, mergeMinStep, mergePerEntry, mergeMaxStep = keys, minStep, perEntry, maxStep
	return func() { runKeys, mergeMinStep, mergePerEntry, mergeMaxStep = k, mn, pe, mx }
}

// Runs reports how many runs the index has (readable ones) and whether
// a merge is in progress.
func (s *Store) Runs() (n int, merging bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		x, err := loadIndex(tx)
		if err != nil {
			return err
		}
		n, merging = len(x.read), x.build != nil
		return nil
	})
	return n, merging, err
}

// DowngradeToV2 rewrites the index of the closed store at path as schema
// 2 had it: one "index" bucket, no runs.
func DowngradeToV2(path string) error {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		x, err := loadIndex(tx)
		if err != nil {
			return err
		}
		idx, err := tx.CreateBucket(bucketIndex)
		if err != nil {
			return err
		}
		var ents [][2][]byte
		x.forEach(nil, func(k, v []byte) bool {
			ents = append(ents, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
			return true
		})
		for _, e := range ents {
			if err := idx.Put(e[0], e[1]); err != nil {
				return err
			}
		}
		for _, b := range [][]byte{bucketRuns, bucketRunInfo, bucketBloom} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		meta.Delete(keyRunNext)
		meta.Delete(keyMergeAfter)
		return meta.Put(keyVersion, u32(2))
	})
}

// BloomFalsePositives builds a filter of in and returns the share of out
// it may hold; it fails the build if it would reject a key of in.
func BloomFalsePositives(in, out [][]byte) float64 {
	f := newBloom(uint64(len(in)))
	for _, k := range in {
		bloomAdd(f, xxhash.Sum64(k))
	}
	for _, k := range in {
		if !bloomHas(f, xxhash.Sum64(k)) {
			return 1
		}
	}
	n := 0
	for _, k := range out {
		if bloomHas(f, xxhash.Sum64(k)) {
			n++
		}
	}
	return float64(n) / float64(len(out))
}

// SetMergeAfterOpen sets how long after Open idle merge steps wait; the
// returned func restores it.
func SetMergeAfterOpen(d time.Duration) func() {
	old := mergeAfterOpen
	mergeAfterOpen = d
	return func() { mergeAfterOpen = old }
}

// DSLagged is how many datastore keys are written in the active segment
// and not yet in the "data" bucket.
func (s *Store) DSLagged() int {
	s.w.ds.mu.RLock()
	defer s.w.ds.mu.RUnlock()
	return len(s.w.ds.m)
}

// DSInBucket reports whether key is in the "data" bucket itself.
func (s *Store) DSInBucket(key string) bool {
	var ok bool
	_ = s.db.View(func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketData).Get([]byte(key)) != nil
		return nil
	})
	return ok
}

// Flush makes the writer take a full commit: the index and the "data"
// bucket then hold every write acknowledged.
func (s *Store) Flush() error { return s.w.flush() }

// FailBatch records err as a failed write of b.
func FailBatch(b *Batch, err error) {
	b.mu.Lock()
	b.err = err
	b.mu.Unlock()
}

// DowngradeToV3 rewrites the closed store at path as schema 3 wrote it:
// index entries without their checksum.
func DowngradeToV3(path string) error {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		runs := tx.Bucket(bucketRuns)
		err := runs.ForEach(func(name, _ []byte) error {
			b := runs.Bucket(name)
			var ents [][2][]byte
			b.ForEach(func(k, v []byte) error {
				if len(v) == locSumLen {
					ents = append(ents, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v[:locLen]...)})
				}
				return nil
			})
			for _, e := range ents {
				if err := b.Put(e[0], e[1]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyVersion, u32(3))
	})
}

// SegmentCount is the number of segments the store holds.
func SegmentCount(t testing.TB, s *Store) int {
	t.Helper()
	n := 0
	if err := s.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bucketSegs).Stats().KeyN; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// ReadLater looks c up now and returns a read of it from that place, as
// a reader does whose lookup a delete overtakes.
func ReadLater(t testing.TB, s *Store, c cid.Cid) func() ([]byte, error) {
	t.Helper()
	l, err := s.locate(c)
	if err != nil {
		t.Fatal(err)
	}
	return func() ([]byte, error) {
		var buf []byte
		return s.readBlock(c, l, &buf)
	}
}
