package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	blocks "github.com/ipfs/go-block-format"
)

// Ensure a commit of deletes alone clears a fault once the file system
// has room, and keeps it while the file system has none.
func TestFault_DeleteCommit_ClearsOnlyWithRoom(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	bs := s.Blockstore()
	a, b := testBlock(t, 500), testBlock(t, 600)
	if err := bs.PutMany(ctx, []blocks.Block{a, b}); err != nil {
		t.Fatal(err)
	}
	// A commit the disk refused, as the writer records it.
	s.w.noteCommit(nil, fmt.Errorf("write %s: %w", s.path, syscall.ENOSPC))
	if f := s.Fault(); f == "" {
		t.Fatal("no fault after a failed commit")
	}

	room := statRoom
	defer func() { statRoom = room }()
	statRoom = func(string) int64 { return 4096 } // full
	if err := bs.DeleteBlock(ctx, a.Cid()); err != nil {
		t.Fatal(err)
	}
	if f := s.Fault(); f == "" {
		t.Fatal("a commit of deletes on a full disk cleared the fault")
	}
	statRoom = room // room again
	if err := bs.DeleteBlock(ctx, b.Cid()); err != nil {
		t.Fatal(err)
	}
	if f := s.Fault(); f != "" {
		t.Fatalf("fault %q after a commit of deletes with room on the disk, want none", f)
	}
}

// Ensure Open allocates the reserve beside the store file, a released
// reserve is made again once there is room for it twice over, and
// ReserveBytes < 0 makes none.
func TestReserve_MadeReleasedMadeAgain(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := filepath.Join(dir, ReserveName)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := allocatedBytes(fi); got < DefaultReserveBytes {
		t.Fatalf("reserve takes %d bytes on disk, want %d", got, DefaultReserveBytes)
	}
	r := s.w.res
	if !r.release() {
		t.Fatal("release of a present reserve reported none")
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("reserve after release: %v", err)
	}
	room := statRoom
	defer func() { statRoom = room }()
	statRoom = func(string) int64 { return DefaultReserveBytes } // room for it once only
	r.tried = r.tried.Add(-reserveRetry)
	if r.make() {
		t.Fatal("reserve made on a disk with room for it once only")
	}
	statRoom = room
	r.tried = r.tried.Add(-reserveRetry)
	if !r.make() {
		t.Fatal("reserve not made again on a disk with room")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}

	dir2 := t.TempDir()
	s2, err := Open(filepath.Join(dir2, FileName), &Options{ReserveBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := os.Stat(filepath.Join(dir2, ReserveName)); !os.IsNotExist(err) {
		t.Fatalf("reserve with ReserveBytes -1: %v", err)
	}
}

// Ensure deletes on a disk with room only for small commits go through
// once the reserve is given up, a step at a time, each block's size
// reported as removed, and that the same deletes are refused without a
// reserve to give up.
func TestReserve_DeletesInSteps(t *testing.T) {
	for _, reserve := range []int64{0, -1} {
		s, err := Open(filepath.Join(t.TempDir(), FileName), &Options{ReserveBytes: reserve})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		bs := s.Blockstore()
		var keys [][]byte
		var blks []blocks.Block
		for i := 0; i < 1000; i++ {
			b := blocks.NewBlock([]byte(fmt.Sprintf("block %d", i)))
			blks = append(blks, b)
			keys = append(keys, b.Cid().Hash())
		}
		if err := bs.PutMany(context.Background(), blks); err != nil {
			t.Fatal(err)
		}
		var largest int
		room := func(group []*request) error {
			n := 0
			for _, r := range group {
				n += len(r.muts)
			}
			if n > deleteStep {
				return fmt.Errorf("write: %w", syscall.ENOSPC)
			}
			largest = max(largest, n)
			return nil
		}
		commitRoom.Store(&room)
		sizes, err := bs.DeleteMany(keys)
		commitRoom.Store(nil)
		if reserve < 0 {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("deletes without a reserve on a full disk: %v, want ENOSPC", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("deletes after the reserve was given up: %v", err)
		}
		if largest != deleteStep {
			t.Fatalf("largest step %d deletes, want %d", largest, deleteStep)
		}
		for i, b := range blks {
			if sizes[i] != len(b.RawData()) {
				t.Fatalf("size of removed block %d: %d, want %d", i, sizes[i], len(b.RawData()))
			}
			if ok, _ := bs.Has(context.Background(), b.Cid()); ok {
				t.Fatalf("block %d still stored", i)
			}
		}
	}
}
