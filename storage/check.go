// check.go: Check walks the invariants written in doc.go.

package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/cespare/xxhash/v2"
	mh "github.com/multiformats/go-multihash"
	bolt "go.etcd.io/bbolt"
)

// CheckOptions select the expensive parts of Check.
type CheckOptions struct {
	// VerifyHashes re-hashes every block (reads the whole store).
	VerifyHashes bool
}

// Check verifies the invariants of doc.go, in one read transaction, and
// bbolt's own page consistency. It returns every violation found (nil if
// none).
func (s *Store) Check(opts CheckOptions) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := s.flush(); err != nil {
		return []error{err}
	}
	// bbolt's check reads the freelist, which a commit changes: in a
	// writable store it runs in a write transaction (rolled back), so
	// that no commit runs beside it.
	pages := func(tx *bolt.Tx) error {
		for e := range tx.Check() {
			bad("bbolt: %w", e)
		}
		return errRolledBack
	}
	var err error
	if s.w != nil {
		err = s.db.Update(pages)
	} else {
		err = s.db.View(pages)
	}
	if err != nil && !errors.Is(err, errRolledBack) {
		return append(errs, err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			bad("missing bucket %q", bucketMeta)
			return nil
		}
		// A read-only open reads a schema-2 file as it is.
		if v := meta.Get(keyVersion); len(v) != 4 || (getU32(v) != SchemaVersion && ((getU32(v) != 2 && getU32(v) != 3) || s.w != nil)) {
			bad("schema version record %x, want %d", v, SchemaVersion)
		}
		segsB := tx.Bucket(bucketSegs)
		if segsB == nil {
			bad("missing bucket %q", bucketSegs)
			return nil
		}
		idx, err := loadIndex(tx)
		if err != nil {
			bad("%v", err)
			return nil
		}
		if tx.Bucket(bucketData) == nil {
			bad("missing bucket %q", bucketData)
		}
		segs := map[uint32]segInfo{}
		segsB.ForEach(func(k, v []byte) error {
			si, ok := decodeSegInfo(v)
			if len(k) != 4 || !ok {
				bad("segment entry %x: bad record %x", k, v)
				return nil
			}
			id := binary.BigEndian.Uint32(k)
			segs[id] = si
			fi, err := os.Stat(s.sf.name(id))
			switch {
			case err != nil:
				bad("segment %d: %v", id, err)
			case fi.Size() < int64(si.end):
				bad("segment %d is %d bytes, its entry says %d", id, fi.Size(), si.end)
			}
			return nil
		})
		if active := getU32(meta.Get(keySegActive)); s.w != nil {
			if _, ok := segs[active]; !ok {
				bad("active segment %d has no entry", active)
			}
		}
		counted := map[uint32]segInfo{}
		var n, size uint64
		var buf []byte
		visit := func(k, v []byte) error {
			l, ok := decodeLoc(v)
			if !ok {
				bad("index entry %x: bad location %x", k, v)
				return nil
			}
			n++
			size += uint64(l.n)
			si, ok := segs[l.seg]
			if !ok {
				bad("index entry %x points into segment %d, which has no entry", k, l.seg)
				return nil
			}
			if uint64(l.off)+uint64(l.n) > si.end || int64(l.off) < segHeader+recHeader {
				bad("index entry %x: %d bytes at %d run past segment %d's end %d", k, l.n, l.off, l.seg, si.end)
				return nil
			}
			c := counted[l.seg]
			c.liveN++
			c.liveBytes += uint64(recHeader+len(k)) + uint64(l.n)
			counted[l.seg] = c
			dm, err := mh.Decode(k)
			if err != nil {
				bad("block key %x is not a multihash: %v", k, err)
				return nil
			}
			if dm.Code == mh.IDENTITY {
				bad("identity block %x is stored", k)
			}
			if opts.VerifyHashes {
				// The record's header names the same key.
				rec := make([]byte, recHeader+len(k))
				if err := s.sf.readAt(loc{seg: l.seg, off: l.off - uint32(len(rec)), n: uint32(len(rec))}, rec); err != nil {
					bad("block %x: reading its record: %v", k, err)
					return nil
				}
				if binary.BigEndian.Uint32(rec) != l.n || int(rec[4]) != len(k) || string(rec[recHeader:]) != string(k) {
					bad("block %x: its record's header does not name it", k)
				}
				if cap(buf) < int(l.n) {
					buf = make([]byte, l.n)
				}
				buf = buf[:l.n]
				if err := s.sf.readAt(l, buf); err != nil {
					bad("block %x: %v", k, err)
					return nil
				}
				if err := VerifyBlock(k, buf); err != nil {
					errs = append(errs, err)
				} else if l.hasSum && !intact(k, l, buf) {
					bad("block %x: its index entry's CRC-32C does not match its bytes", k)
				}
			}
			return nil
		}
		checkRuns(idx, bad, visit)
		for id, si := range segs {
			c := counted[id]
			if c.liveN != si.liveN || c.liveBytes != si.liveBytes {
				bad("segment %d: entry says %d blocks (%d bytes of records), the index points to %d (%d bytes)", id, si.liveN, si.liveBytes, c.liveN, c.liveBytes)
			}
		}
		if got := getU64(meta.Get(keyBlocksN)); got != n {
			bad("blocks.n is %d, the index holds %d", got, n)
		}
		if got := getU64(meta.Get(keyBlocksSize)); got != size {
			bad("blocks.size is %d, the index holds %d bytes", got, size)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

// VerifyBlock re-hashes data with the function and length of key and
// reports a mismatch.
func VerifyBlock(key, data []byte) error {
	dm, err := mh.Decode(key)
	if err != nil {
		return fmt.Errorf("block key %x is not a multihash: %w", key, err)
	}
	sum, err := mh.Sum(data, dm.Code, dm.Length)
	if err != nil {
		return fmt.Errorf("block %s: %w", mh.Multihash(key).B58String(), err)
	}
	if string(sum) != string(key) {
		return fmt.Errorf("block %s: stored bytes hash to %s", mh.Multihash(key).B58String(), sum.B58String())
	}
	return nil
}

// BlockFile says where the bytes of the block with multihash key sit:
// the segment file, the offset and the length (for tests that damage a
// block behind the store's back, and for repair tools).
func (s *Store) BlockFile(key []byte) (file string, off int64, n int, err error) {
	if err := s.flush(); err != nil {
		return "", 0, 0, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		idx, err := loadIndex(tx)
		if err != nil {
			return err
		}
		l, ok := decodeLoc(idx.get(key))
		if !ok {
			return fmt.Errorf("storage: block %x not stored", key)
		}
		file, off, n = s.sf.name(l.seg), int64(l.off), int(l.n)
		return nil
	})
	return file, off, n, err
}

// checkRuns checks the runs of the index (runs.go) and calls visit for
// every entry of the readable ones.
func checkRuns(idx *index, bad func(string, ...any), visit func(k, v []byte) error) {
	opens, merging := 0, 0
	for _, r := range idx.all {
		switch r.state {
		case runOpen:
			opens++
		case runMerging:
			merging++
		}
	}
	if opens > 1 {
		bad("%d open runs, want at most one", opens)
	}
	if (merging > 0) != (idx.build != nil) {
		bad("%d runs being merged, output run present: %v", merging, idx.build != nil)
	}
	for i, r := range idx.read {
		b := idx.bucket(r)
		if b == nil {
			bad("run %x has no bucket", r.name)
			continue
		}
		var f []byte
		if r.state != runOpen && idx.bloomB != nil {
			f = idx.bloomB.Get(r.name)
		}
		var n uint64
		b.ForEach(func(k, v []byte) error {
			n++
			if f != nil && !bloomHas(f, xxhash.Sum64(k)) {
				bad("block %x is in run %x, whose filter says it is not", k, r.name)
			}
			for _, o := range idx.read[i+1:] {
				if ob := idx.bucket(o); ob != nil && ob.Get(k) != nil {
					bad("block %x is in runs %x and %x", k, r.name, o.name)
				}
			}
			return visit(k, v)
		})
		if n != r.n && !idx.legacy {
			bad("run %x holds %d entries, its description says %d", r.name, n, r.n)
		}
	}
	if r := idx.build; r != nil {
		b := idx.bucket(r)
		if b == nil {
			bad("run %x has no bucket", r.name)
			return
		}
		var n uint64
		b.ForEach(func(k, v []byte) error {
			n++
			found := false
			for _, in := range idx.all {
				if in.state == runMerging {
					if ib := idx.bucket(in); ib != nil && bytes.Equal(ib.Get(k), v) {
						found = true
					}
				}
			}
			if !found {
				bad("merge output run %x holds %x, which no input holds as %x", r.name, k, v)
			}
			return nil
		})
		if n != r.n {
			bad("run %x holds %d entries, its description says %d", r.name, n, r.n)
		}
	}
}

var errRolledBack = errors.New("storage: rolled back")
