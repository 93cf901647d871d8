package storage_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/storage"

	blocks "github.com/ipfs/go-block-format"
)

func mustBeDamaged(t *testing.T, s *storage.Store, b blocks.Block) {
	t.Helper()
	_, err := s.Blockstore().Get(context.Background(), b.Cid())
	if !errors.Is(err, storage.ErrBlockDamaged) || !strings.Contains(err.Error(), b.Cid().String()) {
		t.Fatalf("Get of a damaged block: %v, want ErrBlockDamaged naming %s", err, b.Cid())
	}
}

// Ensure a schema-3 store (entries without a checksum) opens read-only as
// it is, is upgraded by a writable open, and keeps every block readable:
// its old entries checked against the block's hash, the new ones against
// their CRC-32C, a flipped bit found either way.
func TestSchema3_Upgraded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	var old []blocks.Block
	for i := 0; i < 20; i++ {
		old = append(old, randBlock(t, 3000+i))
	}
	if err := s.Blockstore().PutMany(ctx, old); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := storage.DowngradeToV3(path); err != nil {
		t.Fatal(err)
	}
	ro, err := storage.Open(path, &storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range old {
		mustRead(t, ro, b)
	}
	ro.Close()
	if v, err := storage.Schema(path); err != nil || v != 3 {
		t.Fatalf("schema after a read-only open: %d %v, want 3", v, err)
	}

	mustOpen(t, path).Close()
	if v, err := storage.Schema(path); err != nil || v != storage.SchemaVersion {
		t.Fatalf("schema after a writable open: %d %v, want %d", v, err, storage.SchemaVersion)
	}
	s = mustOpen(t, path)
	defer s.Close()
	var fresh []blocks.Block
	for i := 0; i < 5; i++ {
		fresh = append(fresh, randBlock(t, 5000+i))
	}
	if err := s.Blockstore().PutMany(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	for _, b := range append(old, fresh...) {
		mustRead(t, s, b)
	}
	mustCheck(t, s)
	testutil.FlipBit(t, s, old[3].Cid().Hash())
	testutil.FlipBit(t, s, fresh[2].Cid().Hash())
	mustBeDamaged(t, s, old[3])
	mustBeDamaged(t, s, fresh[2])
	if errs := s.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) != 2 {
		t.Fatalf("check found %d problems, want the 2 damaged blocks: %v", len(errs), errs)
	}
}

// Ensure reclaiming a segment does not move a damaged block (moved, its
// bytes would get a new checksum and pass for sound): the reclaim names
// it, the block stays damaged where it was, and every other live block of
// the segment moves and reads back.
func TestReclaim_LeavesDamagedBlock(t *testing.T) {
	ctx := context.Background()
	s, err := storage.Open(filepath.Join(t.TempDir(), storage.FileName), &storage.Options{SegmentBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var all []blocks.Block
	for i := 0; i < 60; i++ {
		b := randBlock(t, 4000+i)
		all = append(all, b)
		if err := s.Blockstore().Put(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var keys [][]byte
	var live []blocks.Block
	for i, b := range all {
		if i%3 == 0 {
			live = append(live, b)
		} else {
			keys = append(keys, b.Cid().Hash())
		}
	}
	if _, err := s.Blockstore().DeleteMany(keys); err != nil {
		t.Fatal(err)
	}
	bad := live[1]
	testutil.FlipBit(t, s, bad.Cid().Hash())
	_, err = s.Reclaim(ctx, storage.ReclaimOptions{MinGarbage: 0.1})
	if !errors.Is(err, storage.ErrBlockDamaged) || !strings.Contains(err.Error(), fmt.Sprintf("%x", []byte(bad.Cid().Hash()))) {
		t.Fatalf("reclaim: %v, want ErrBlockDamaged naming %x", err, []byte(bad.Cid().Hash()))
	}
	mustBeDamaged(t, s, bad)
	for _, b := range live {
		if b != bad {
			mustRead(t, s, b)
		}
	}
}
