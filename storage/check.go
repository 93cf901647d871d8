// check.go: Check walks the invariants written in doc.go.

package storage

import (
	"encoding/binary"
	"fmt"

	mh "github.com/multiformats/go-multihash"
	bolt "go.etcd.io/bbolt"
)

// CheckOptions select the expensive parts of Check.
type CheckOptions struct {
	// VerifyHashes re-hashes every block (reads the whole store).
	VerifyHashes bool
}

// Check verifies the invariants of doc.go and bbolt's own page consistency,
// in one read transaction. It returns every violation found (nil if none).
func (s *Store) Check(opts CheckOptions) []error {
	var errs []error
	err := s.db.View(func(tx *bolt.Tx) error {
		for e := range tx.Check() {
			errs = append(errs, fmt.Errorf("bbolt: %w", e))
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			errs = append(errs, fmt.Errorf("missing bucket %q", bucketMeta))
			return nil
		}
		if v := meta.Get(keyVersion); len(v) != 4 || binary.BigEndian.Uint32(v) != SchemaVersion {
			errs = append(errs, fmt.Errorf("schema version record %x, want %d", v, SchemaVersion))
		}
		blocks, idx := tx.Bucket(bucketBlocks), tx.Bucket(bucketIndex)
		if blocks == nil || idx == nil {
			errs = append(errs, fmt.Errorf("missing bucket %q or %q", bucketBlocks, bucketIndex))
			return nil
		}
		if tx.Bucket(bucketData) == nil {
			errs = append(errs, fmt.Errorf("missing bucket %q", bucketData))
		}
		var n, size uint64
		err := idx.ForEach(func(k, ref []byte) error {
			v := getData(blocks, ref)
			if len(ref) != 8 || v == nil {
				errs = append(errs, fmt.Errorf("index entry %x points to missing data %x", k, ref))
				return nil
			}
			n++
			size += uint64(len(v))
			dm, err := mh.Decode(k)
			if err != nil {
				errs = append(errs, fmt.Errorf("block key %x is not a multihash: %v", k, err))
				return nil
			}
			if dm.Code == mh.IDENTITY {
				errs = append(errs, fmt.Errorf("identity block %x is stored", k))
			}
			if opts.VerifyHashes {
				if err := VerifyBlock(k, v); err != nil {
					errs = append(errs, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		var stored uint64
		blocks.ForEach(func(k, v []byte) error { stored++; return nil })
		if stored != n {
			errs = append(errs, fmt.Errorf("%d data entries, %d indexed: orphans", stored, n))
		}
		if got := getU64(meta.Get(keyBlocksN)); got != n {
			errs = append(errs, fmt.Errorf("blocks.n is %d, bucket holds %d", got, n))
		}
		if got := getU64(meta.Get(keyBlocksSize)); got != size {
			errs = append(errs, fmt.Errorf("blocks.size is %d, bucket holds %d bytes", got, size))
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
