package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
)

// Ensure StorageMax bounds the store file on disk, free pages included:
// refused adds leave it within the cap plus one write batch, however
// often they are repeated, and what they freed is reused by later adds.
func TestStorageMax_BoundsFileOnDisk(t *testing.T) {
	repo := testutil.MustInitRepo(t)
	n, err := node.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	const capBytes = 20_000_000
	if err := n.ConfigFile().Update(func(doc map[string]any) error {
		return config.SetKey(doc, "Datastore.StorageMax", "20MB")
	}); err != nil {
		t.Fatal(err)
	}
	const batch = storage.GrowStep // the default 1 MiB batches are smaller
	// The accounting counts queued blocks with 1/32 for their page
	// overhead (node/session.go); the file may pass cap+batch by that much.
	const limit = capBytes + batch + (capBytes+batch)/32
	path := filepath.Join(repo, storage.FileName)
	fileSize := func() int64 {
		n, err := storage.DiskBytes(path)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	add := func(size int) error {
		a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{Pin: true}, func(node.AddEvent) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.AddAll(files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile(randBytes(size))}))
		return err
	}
	for i := 0; i < 3; i++ {
		if err := add(30_000_000); !errors.Is(err, node.ErrStorageFull) {
			t.Fatalf("30 MB add under a 20MB cap: %v", err)
		}
		sz := fileSize()
		t.Logf("after refused add %d: store file %d bytes", i, sz)
		if sz > limit {
			t.Fatalf("refused add %d: store file is %d bytes, above the cap %d plus one growth step %d and page overhead (%d)", i, sz, capBytes, batch, limit)
		}
	}
	if err := add(8_000_000); err != nil {
		t.Fatalf("8 MB add after refused ones: %v", err)
	}
	if err := add(8_000_000); err != nil {
		t.Fatalf("second 8 MB add: %v", err)
	}
	if err := add(8_000_000); !errors.Is(err, node.ErrStorageFull) {
		t.Fatalf("third 8 MB add: %v", err)
	}
	if sz := fileSize(); sz > limit {
		t.Fatalf("store file is %d bytes, above the cap %d plus one growth step %d and page overhead (%d)", sz, capBytes, batch, limit)
	}
	t.Logf("store file %d bytes under a cap of %d", fileSize(), capBytes)
	mustCheck(t, n)
}

// Ensure a repo whose store is of schema 1 (written before segment files)
// opens: the store is migrated, its blocks read back, and the daemon's
// start-time compaction check does not refuse it first.
func TestNew_MigratesSchema1Store(t *testing.T) {
	repo := testutil.MustInitRepo(t)
	path := filepath.Join(repo, storage.FileName)
	os.Remove(path)
	os.RemoveAll(storage.SegmentDir(path))
	blks := testutil.WriteSchema1Store(t, path, 500, nil)
	var logged []string
	n, err := node.New(repo, &node.Options{CompactIfNeeded: true, Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, b := range blks {
		got, err := n.Blocks.Get(context.Background(), b.Cid())
		if err != nil || !bytes.Equal(got.RawData(), b.RawData()) {
			t.Fatalf("block %s after migration: %v", b.Cid(), err)
		}
	}
	if len(logged) == 0 || !strings.Contains(strings.Join(logged, "\n"), "migrated 500 blocks") {
		t.Fatalf("log %q", logged)
	}
	mustCheck(t, n)
}
