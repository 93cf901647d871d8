package storage

import (
	"context"
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
