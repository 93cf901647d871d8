package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	mh "github.com/multiformats/go-multihash"
)

func addData(t testing.TB, n *node.Node, data []byte, pin bool) cid.Cid {
	t.Helper()
	var last node.AddEvent
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{Pin: pin, EmptyDirs: true}, func(e node.AddEvent) error {
		if e.Hash != "" {
			last = e
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	roots, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile(data)}))
	if err != nil {
		t.Fatal(err)
	}
	_ = last
	return roots[0]
}

func readAll(t testing.TB, n *node.Node, c cid.Cid) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := n.UnixFS().WriteFile(context.Background(), c, 0, -1, &b); err != nil {
		t.Fatalf("read %s: %v", c, err)
	}
	return b.Bytes()
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func mustCheck(t testing.TB, n *node.Node) {
	t.Helper()
	if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatal(errs)
	}
}

// Ensure GC removes unpinned blocks and keeps recursive DAGs, direct pin
// roots and the MFS root's DAG.
func TestGC_KeepsPinnedRemovesRest(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	kept := randBytes(700 << 10)
	rec := addData(t, n, kept, true)
	garbage := addData(t, n, randBytes(600<<10), false)
	direct := addData(t, n, randBytes(300), false)
	if err := n.Pins().Add(ctx, direct, false, "", nil); err != nil {
		t.Fatal(err)
	}
	mfs := addData(t, n, randBytes(500<<10), false)
	if err := n.Store.Datastore().Put(ctx, dsKey("/local/filesroot"), mfs.Bytes()); err != nil {
		t.Fatal(err)
	}
	var removed []cid.Cid
	res, err := n.Storage().CollectGarbage(ctx, func(c cid.Cid) error { removed = append(removed, c); return nil })
	if err != nil {
		t.Fatal(err)
	}
	// The garbage file is 3 chunks + 1 root.
	if res.Removed != 4 || len(removed) != 4 {
		t.Fatalf("removed %d blocks, want 4", res.Removed)
	}
	if !bytes.Equal(readAll(t, n, rec), kept) {
		t.Fatal("pinned file damaged")
	}
	if _, err := n.Blocks.Get(ctx, direct); err != nil {
		t.Fatalf("direct pin root: %v", err)
	}
	readAll(t, n, mfs)
	if ok, _ := n.Blocks.Has(ctx, garbage); ok {
		t.Fatal("garbage root still there")
	}
	mustCheck(t, n)
}

func dsKey(s string) dsk { return ds.NewKey(s) }

// Ensure adds running while GC runs lose nothing: every file added and
// pinned during repeated collections reads back whole.
func TestGC_ConcurrentAddsNeverCollected(t *testing.T) {
	n := testutil.MustOpenNode(t)
	// Garbage for the sweeps to chew on.
	for i := 0; i < 20; i++ {
		addData(t, n, randBytes(300<<10), false)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := n.Storage().CollectGarbage(context.Background(), nil); err != nil && !errors.Is(err, node.ErrGCRunning) {
				t.Error(err)
				return
			}
		}
	}()
	type file struct {
		c    cid.Cid
		data []byte
	}
	var added []file
	for i := 0; i < 30; i++ {
		d := randBytes(100<<10 + i*7919)
		added = append(added, file{addData(t, n, d, true), d})
	}
	stop.Store(true)
	wg.Wait()
	if _, err := n.Storage().CollectGarbage(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range added {
		if !bytes.Equal(readAll(t, n, f.c), f.data) {
			t.Fatalf("%s damaged by GC", f.c)
		}
	}
	mustCheck(t, n)
}

// Ensure a pin added while GC sweeps keeps its whole DAG: the blocks it
// reads are marked before they are read.
func TestGC_PinDuringGC(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		data := randBytes(800 << 10)
		c := addData(t, n, data, false)
		done := make(chan error, 1)
		go func() { _, err := n.Storage().CollectGarbage(ctx, nil); done <- err }()
		perr := n.Pins().Add(ctx, c, true, "", nil)
		if err := <-done; err != nil && !errors.Is(err, node.ErrGCRunning) {
			t.Fatal(err)
		}
		if perr != nil {
			// GC won the race and removed the DAG before the pin read it:
			// then nothing is pinned.
			if ok, _ := n.Pins().IsRecursive(ctx, c); ok {
				t.Fatal("pin recorded over a collected DAG")
			}
			continue
		}
		n.Storage().CollectGarbage(ctx, nil)
		if !bytes.Equal(readAll(t, n, c), data) {
			t.Fatal("DAG pinned during GC was collected")
		}
	}
	mustCheck(t, n)
}

// Ensure StorageMax is a hard cap: an add that would pass it first
// triggers GC, then fails naming the cap and usage, storing nothing.
func TestStorageMax_HardCap(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	if err := n.ConfigFile().Update(func(doc map[string]any) error {
		return config.SetKey(doc, "Datastore.StorageMax", "3MB")
	}); err != nil {
		t.Fatal(err)
	}
	keep := addData(t, n, randBytes(1<<20), true)
	// Garbage that GC can free to make room.
	addData(t, n, randBytes(1<<20), false)
	before, _ := n.Store.Stat()
	// 1.5 MB fits only after GC.
	c := addData(t, n, randBytes(1500<<10), true)
	readAll(t, n, c)
	readAll(t, n, keep)
	// 2 MB more cannot fit even after GC.
	mid, _ := n.Store.Stat()
	a, _ := n.UnixFS().NewAdder(ctx, node.AddOptions{Pin: true}, func(node.AddEvent) error { return nil })
	_, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{"big": files.NewBytesFile(randBytes(2 << 20))}))
	if !errors.Is(err, node.ErrStorageFull) {
		t.Fatalf("got %v, want ErrStorageFull", err)
	}
	for _, want := range []string{"Datastore.StorageMax is 3.0 MB", "the repo holds"} {
		if !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	after, _ := n.Store.Stat()
	if after.NumBlocks != mid.NumBlocks || after.BlockBytes != mid.BlockBytes {
		t.Fatalf("partial add left blocks: %d/%d before, %d/%d after", mid.NumBlocks, mid.BlockBytes, after.NumBlocks, after.BlockBytes)
	}
	if before.BlockBytes <= mid.BlockBytes-1500<<10 {
		t.Fatalf("GC did not run before refusing (before %d, mid %d)", before.BlockBytes, mid.BlockBytes)
	}
	mustCheck(t, n)
}

// Ensure pins survive a restart and pin update swaps roots atomically.
func TestPins_PersistAndUpdate(t *testing.T) {
	repo := testutil.MustInitRepo(t)
	ctx := context.Background()
	n, err := node.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := addData(t, n, randBytes(400<<10), true)
	b := addData(t, n, randBytes(400<<10), false)
	if err := n.Pins().Update(ctx, a, b, true); err != nil {
		t.Fatal(err)
	}
	if err := n.Pins().Update(ctx, a, b, true); err == nil || err.Error() != "'from' cid was not recursively pinned already" {
		t.Fatalf("second update: %v", err)
	}
	if err := n.Pins().Remove(ctx, b, false); err == nil || err.Error() != b.String()+" is pinned recursively" {
		t.Fatalf("rm non-recursive: %v", err)
	}
	if err := n.Pins().Remove(ctx, a, true); !errors.Is(err, node.ErrNotPinned) {
		t.Fatalf("rm unpinned: %v", err)
	}
	n.Close()
	n, err = node.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	pins, _ := n.Pins().List(ctx, "")
	if len(pins) != 1 || !pins[0].Cid.Equals(b) || pins[0].Type != "recursive" {
		t.Fatalf("pins after restart: %v", pins)
	}
	// A DAG with a missing block cannot be pinned.
	c := addData(t, n, randBytes(600<<10), false)
	links, _ := n.UnixFS().Links(ctx, c)
	n.Blocks.DeleteBlock(ctx, links[1].Cid)
	if err := n.Pins().Add(ctx, c, true, "", nil); err == nil {
		t.Fatal("pinned an incomplete DAG")
	}
	if ok, _ := n.Pins().IsRecursive(ctx, c); ok {
		t.Fatal("incomplete DAG recorded as pinned")
	}
}

// Ensure pin verify reports a corrupt block of a pinned DAG.
func TestVerifyDAG_CorruptBlock(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	c := addData(t, n, randBytes(600<<10), true)
	links, _ := n.UnixFS().Links(ctx, c)
	bad := links[0].Cid
	testutil.OverwriteBlock(t, n.Store, bad.Hash(), make([]byte, 262158))
	var got []cid.Cid
	n.Dag().Verify(ctx, c, func(x cid.Cid, err error) { got = append(got, x) })
	if len(got) != 1 || !got[0].Equals(bad) {
		t.Fatalf("bad nodes %v, want [%s]", got, bad)
	}
	got = nil
	n.Block().Verify(ctx, func(x cid.Cid, err error) { got = append(got, x) }, nil)
	if len(got) != 1 || !bytes.Equal(got[0].Hash(), bad.Hash()) {
		t.Fatalf("repo verify found %v", got)
	}
}

// GC of 100k small blocks: time and peak heap, logged for the README
// (go test ./node -run GC_100k -v). Asserts only correctness.
func TestGC_100kSmallBlocks(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	const total = 100000
	s := n.Storage().BeginWrite()
	var keep []cid.Cid
	for i := 0; i < total; i++ {
		b := randBytes(64)
		h, _ := mh.Sum(b, mh.SHA2_256, -1)
		blk, _ := blocks.NewBlockWithCid(b, cid.NewCidV1(cid.Raw, h))
		if err := s.PutAsync(ctx, blk); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			keep = append(keep, blk.Cid())
		}
	}
	if err := s.End(); err != nil {
		t.Fatal(err)
	}
	// Direct pins in one transaction (as 10k pin add calls would be 10k
	// commits).
	b, _ := n.Store.Datastore().Batch(ctx)
	for _, c := range keep {
		b.Put(ctx, ds.NewKey("/pins/direct/"+c.String()), nil)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, err := n.Storage().CollectGarbage(ctx, nil)
	el := time.Since(start)
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != total-len(keep) {
		t.Fatalf("removed %d, want %d", res.Removed, total-len(keep))
	}
	st, _ := n.Store.Stat()
	if st.NumBlocks != uint64(len(keep)) {
		t.Fatalf("%d blocks left, want %d", st.NumBlocks, len(keep))
	}
	p := peak.Load()
	if p < base {
		p = base
	}
	t.Logf("GC of %d blocks (%d pinned): %v, heap in use %.1f MiB before, peak %.1f MiB (+%.1f MiB)",
		total, len(keep), el.Round(time.Millisecond), float64(base)/(1<<20), float64(p)/(1<<20), float64(p-base)/(1<<20))
	mustCheck(t, n)
}

type dsk = ds.Key
