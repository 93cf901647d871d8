package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"path/filepath"
	"testing"
	"unsafe"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
	bolt "go.etcd.io/bbolt"
)

func newBlock(t *testing.T, n int) blocks.Block {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	h, _ := mh.Sum(b, mh.SHA2_256, -1)
	blk, err := blocks.NewBlockWithCid(b, cid.NewCidV1(cid.Raw, h))
	if err != nil {
		t.Fatal(err)
	}
	return blk
}

// Large blocks reach View and Get as copies read from the file, not as
// the mapped bytes; small ones come from the map. Either way the bytes are
// the stored ones, also after deletes and new puts reuse pages.
func TestView_LargeBlocksReadFromFile(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bs := s.Blockstore()
	var blks []blocks.Block
	for _, n := range []int{100, preadMin - 1, preadMin, 262158, 1 << 20, 300000} {
		blks = append(blks, newBlock(t, n))
	}
	if err := bs.PutMany(ctx, blks); err != nil {
		t.Fatal(err)
	}
	check := func(blk blocks.Block) {
		t.Helper()
		var mapped []byte
		s.db.View(func(tx *bolt.Tx) error { mapped = lookup(tx, blk.Cid().Hash()); return nil })
		err := bs.View(ctx, blk.Cid(), func(b []byte) error {
			if !bytes.Equal(b, blk.RawData()) {
				t.Errorf("View of %d bytes: wrong bytes", len(b))
			}
			fromMap := unsafe.SliceData(b) == unsafe.SliceData(mapped)
			if want := len(b) < preadMin; fromMap != want {
				t.Errorf("View of %d bytes: from the map %v, want %v", len(b), fromMap, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := bs.Get(ctx, blk.Cid())
		if err != nil || !bytes.Equal(got.RawData(), blk.RawData()) {
			t.Errorf("Get of %d bytes: %v, equal %v", len(blk.RawData()), err, err == nil && bytes.Equal(got.RawData(), blk.RawData()))
		}
		if n, err := bs.GetSize(ctx, blk.Cid()); err != nil || n != len(blk.RawData()) {
			t.Errorf("GetSize = %d, %v; want %d", n, err, len(blk.RawData()))
		}
	}
	for _, b := range blks {
		check(b)
	}
	// Free pages and reuse them: the survivors must still read right.
	if err := bs.DeleteBlock(ctx, blks[3].Cid()); err != nil {
		t.Fatal(err)
	}
	more := []blocks.Block{newBlock(t, 262158), newBlock(t, 70000)}
	if err := bs.PutMany(ctx, more); err != nil {
		t.Fatal(err)
	}
	for _, b := range append(append(blks[:3:3], blks[4:]...), more...) {
		check(b)
	}
}
