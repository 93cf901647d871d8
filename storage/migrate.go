// migrate.go: moving a schema-1 store (block bytes inside the bbolt file)
// to the current schema (block bytes in segment files, the bbolt file an
// index).

package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// v1Suffix names the schema-1 file while it is being migrated.
const v1Suffix = ".v1"

var (
	// keyMigrating is in "meta" from the creation of a store migrated
	// from schema 1 until the migration's last commit.
	keyMigrating = []byte("migrate")
	// keyMigrateAt is the last key copied: a phase byte ('d' for the
	// datastore records, 'b' for blocks) then the key.
	keyMigrateAt = []byte("migrate.at")
)

// migrateChunk bounds the bytes copied per commit.
var migrateChunk = 4 << 20

// migrateV1 moves the schema-1 file at path aside (path+".v1"), creates
// the schema-2 store at path and copies every record and block into it,
// a chunk per commit, the commit recording how far it got; then it
// removes the old file. A crash at any point resumes where the last
// commit left off: the old file is only read, and removed last.
func migrateV1(path string, o Options) (*Store, error) {
	old := path + v1Suffix
	if _, err := os.Stat(old); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(path, old); err != nil {
			return nil, fmt.Errorf("storage: migrate %s: %w", path, err)
		}
		if err := syncDir(filepath.Dir(path)); err != nil {
			return nil, err
		}
	}
	s, err := open(path, o, true)
	if err != nil {
		return nil, fmt.Errorf("storage: migrate %s: %w", path, err)
	}
	var at []byte
	var migrating bool
	if err := s.db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		migrating = m.Get(keyMigrating) != nil
		at = append([]byte(nil), m.Get(keyMigrateAt)...)
		return nil
	}); err != nil {
		s.Close()
		return nil, err
	}
	if migrating {
		if err := s.copyV1(old, at); err != nil {
			s.Close()
			return nil, fmt.Errorf("storage: migrate %s (schema 1, kept as %s; the next open resumes): %w", path, old, err)
		}
	}
	if err := os.Remove(old); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.Close()
		return nil, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) copyV1(old string, at []byte) error {
	src, err := bolt.Open(old, 0o400, &bolt.Options{ReadOnly: true, Timeout: s.opts.Timeout})
	if err != nil {
		return err
	}
	defer src.Close()
	var total, written uint64
	if err := src.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil || tx.Bucket(bucketIndex) == nil || tx.Bucket(bucketBlocks) == nil || tx.Bucket(bucketData) == nil {
			return fmt.Errorf("%w: %s: schema 1 buckets missing", ErrCorrupt, old)
		}
		total = getU64(m.Get(keyBlocksN))
		written = getU64(m.Get(keyWritten))
		return nil
	}); err != nil {
		return err
	}
	start := time.Now()
	s.opts.Log("storage: migrating %s to schema %d (%d blocks): block bytes move to %s", old, SchemaVersion, total, s.sf.dir)
	phase, after := byte('d'), []byte(nil)
	if len(at) > 0 {
		phase, after = at[0], at[1:]
	}
	var copied uint64
	last := time.Now()
	for phase != 0 {
		var muts []mutation
		size := 0
		done := false
		err := src.View(func(tx *bolt.Tx) error {
			bucket := bucketData
			if phase == 'b' {
				bucket = bucketIndex
			}
			c := tx.Bucket(bucket).Cursor()
			var k, v []byte
			if after == nil {
				k, v = c.First()
			} else if k, v = c.Seek(after); k != nil && string(k) == string(after) {
				k, v = c.Next()
			}
			blocks := tx.Bucket(bucketBlocks)
			for ; k != nil && size < migrateChunk; k, v = c.Next() {
				m := mutation{bucket: bucket, kind: opPut, key: append([]byte(nil), k...)}
				if phase == 'b' {
					sub := blocks.Bucket(v)
					if sub == nil {
						return fmt.Errorf("%w: %s: index entry %x has no block", ErrCorrupt, old, k)
					}
					m.bucket = bucketBlocks
					m.val = append([]byte(nil), sub.Get(dataKeyV1)...)
				} else {
					m.val = append([]byte(nil), v...)
				}
				muts = append(muts, m)
				size += len(m.key) + len(m.val)
			}
			done = k == nil
			return nil
		})
		if err != nil {
			return err
		}
		if phase == 'b' {
			copied += uint64(len(muts))
		}
		if len(muts) > 0 {
			after = muts[len(muts)-1].key
		}
		next := phase
		if done {
			next, after = map[byte]byte{'d': 'b', 'b': 0}[phase], nil
		}
		if next != 0 {
			muts = append(muts, mutation{bucket: bucketMeta, kind: opPut, key: keyMigrateAt, val: append([]byte{next}, after...)})
		} else {
			s.w.writtenTotal.Add(written)
			muts = append(muts,
				mutation{bucket: bucketMeta, kind: opDel, key: keyMigrateAt},
				mutation{bucket: bucketMeta, kind: opDel, key: keyMigrating})
		}
		if err := s.w.do(muts); err != nil {
			return err
		}
		phase = next
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			s.opts.Log("storage: migrating: %d of %d blocks copied", copied, total)
		}
	}
	s.opts.Log("storage: migrated %d blocks in %s", copied, time.Since(start).Round(time.Millisecond))
	return nil
}

// dataKeyV1 is the key of a block's bytes in its nested bucket (schema 1).
var dataKeyV1 = []byte("d")
