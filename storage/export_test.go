package storage

import (
	"encoding/binary"
	"testing"

	blocks "github.com/ipfs/go-block-format"
	bolt "go.etcd.io/bbolt"
)

// RandBlock is a raw block of n random bytes.
var RandBlock = testBlock

// SetMigrateChunk sets the bytes a migration copies per commit.
func SetMigrateChunk(n int) { migrateChunk = n }

// WriteV1 writes a schema-1 store at path holding n random blocks of
// 1-8 KB and the given records, as the store before schema 2 laid it out
// (block bytes in a nested bucket each under a sequence number, an index
// from multihash to sequence number).
func WriteV1(t *testing.T, path string, n int, recs map[string]string) []blocks.Block {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []blocks.Block
	err = db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket([]byte("meta"))
		idx, _ := tx.CreateBucket([]byte("index"))
		data, _ := tx.CreateBucket([]byte("blocks"))
		dsb, _ := tx.CreateBucket([]byte("data"))
		var size uint64
		for i := 0; i < n; i++ {
			b := testBlock(t, 1000+(i*97)%7000)
			seq, _ := data.NextSequence()
			k := binary.BigEndian.AppendUint64(nil, seq)
			sub, err := data.CreateBucket(k)
			if err != nil {
				return err
			}
			if err := sub.Put([]byte("d"), b.RawData()); err != nil {
				return err
			}
			if err := idx.Put(b.Cid().Hash(), k); err != nil {
				return err
			}
			size += uint64(len(b.RawData()))
			out = append(out, b)
		}
		for k, v := range recs {
			dsb.Put([]byte(k), []byte(v))
		}
		meta.Put([]byte("version"), binary.BigEndian.AppendUint32(nil, 1))
		meta.Put([]byte("blocks.n"), binary.BigEndian.AppendUint64(nil, uint64(n)))
		meta.Put([]byte("blocks.size"), binary.BigEndian.AppendUint64(nil, size))
		meta.Put([]byte("written"), binary.BigEndian.AppendUint64(nil, 1<<20))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
