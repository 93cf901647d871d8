package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cairn/storage"

	blocks "github.com/ipfs/go-block-format"
	ds "github.com/ipfs/go-datastore"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
)

// keysOf lists the store's keys with ForEachKey and checks their order.
func keysOf(t *testing.T, s *storage.Store) [][]byte {
	t.Helper()
	var got [][]byte
	err := s.Blockstore().ForEachKey(context.Background(), func(k mh.Multihash) error {
		got = append(got, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(got); i++ {
		if bytes.Compare(got[i-1], got[i]) >= 0 {
			t.Fatalf("ForEachKey: %x then %x, not in key order", got[i-1], got[i])
		}
	}
	return got
}

// checkExactly checks that the store holds live (readable, listed) and
// none of gone.
func checkExactly(t *testing.T, s *storage.Store, live map[string]blocks.Block, gone []blocks.Block) {
	t.Helper()
	ctx := context.Background()
	for _, b := range live {
		mustRead(t, s, b)
	}
	for _, b := range gone {
		if _, ok := live[string(b.Cid().Hash())]; ok {
			continue
		}
		if _, err := s.Blockstore().Get(ctx, b.Cid()); !ipld.IsNotFound(err) {
			t.Fatalf("deleted block %s: %v", b.Cid(), err)
		}
	}
	keys := keysOf(t, s)
	if len(keys) != len(live) {
		t.Fatalf("ForEachKey lists %d keys, want %d", len(keys), len(live))
	}
	for _, k := range keys {
		if _, ok := live[string(k)]; !ok {
			t.Fatalf("ForEachKey lists %x, not stored", k)
		}
	}
	mustCheck(t, s)
}

// Ensure the index keeps every block through runs sealed, merged across
// many commits, deletes and moves landing in runs being merged, and
// reopens, with Check's invariants holding after each step.
func TestRuns_SealMerge_DeleteMoveReopen(t *testing.T) {
	defer storage.SetRunSizes(48, 8, 4, 60)()
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := openSmallSegs(t, path, 256<<10)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	live := map[string]blocks.Block{}
	var gone []blocks.Block
	sawMerge, maxRuns := false, 0
	for round := 0; round < 12; round++ {
		// Half through PutMany (one commit), half through Put (indexed
		// later, in key order).
		var batch []blocks.Block
		for i := 0; i < 150; i++ {
			b := randBlock(t, 500+rng.Intn(1500))
			live[string(b.Cid().Hash())] = b
			if i%2 == 0 {
				batch = append(batch, b)
			} else if err := s.Blockstore().Put(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Blockstore().PutMany(ctx, batch); err != nil {
			t.Fatal(err)
		}
		// Delete about a fifth, chosen at random.
		var keys [][]byte
		for k, b := range live {
			if rng.Intn(5) == 0 {
				keys = append(keys, []byte(k))
				gone = append(gone, b)
				delete(live, k)
			}
		}
		sizes, err := s.Blockstore().DeleteMany(keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range sizes {
			if n < 0 {
				t.Fatalf("delete of stored block %x found nothing", keys[i])
			}
		}
		if round%3 == 2 {
			if _, err := s.Reclaim(ctx, storage.ReclaimOptions{MinGarbage: 0.1}); err != nil {
				t.Fatal(err)
			}
		}
		n, merging, err := s.Runs()
		if err != nil {
			t.Fatal(err)
		}
		sawMerge = sawMerge || merging
		maxRuns = max(maxRuns, n)
		checkExactly(t, s, live, gone)
		if round%4 == 3 {
			s.Close()
			s = openSmallSegs(t, path, 256<<10)
			checkExactly(t, s, live, gone)
		}
	}
	s.Close()
	t.Logf("%d blocks live, %d deleted, at most %d runs", len(live), len(gone), maxRuns)
	if !sawMerge {
		t.Fatal("no merge was in progress at any check: the merge path went untested")
	}
	// 1800 puts into runs of 48 would be 37 runs unmerged.
	if maxRuns > 25 {
		t.Fatalf("%d runs at once: merges do not keep up", maxRuns)
	}
}

// Ensure a store written with schema 2 (one "index" bucket) is read as it
// is by a read-only open and upgraded in place by a writable one.
func TestRuns_UpgradeSchema2(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	ctx := context.Background()
	live := map[string]blocks.Block{}
	var batch []blocks.Block
	for i := 0; i < 300; i++ {
		b := randBlock(t, 1000+i)
		live[string(b.Cid().Hash())] = b
		batch = append(batch, b)
	}
	if err := s.Blockstore().PutMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := storage.DowngradeToV2(path); err != nil {
		t.Fatal(err)
	}

	ro, err := storage.Open(path, &storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	checkExactly(t, ro, live, nil)
	ro.Close()

	s = mustOpen(t, path)
	checkExactly(t, s, live, nil)
	var more []blocks.Block
	for i := 0; i < 50; i++ {
		b := randBlock(t, 700+i)
		live[string(b.Cid().Hash())] = b
		more = append(more, b)
	}
	if err := s.Blockstore().PutMany(ctx, more); err != nil {
		t.Fatal(err)
	}
	gone := batch[:100]
	var keys [][]byte
	for _, b := range gone {
		keys = append(keys, b.Cid().Hash())
		delete(live, string(b.Cid().Hash()))
	}
	if _, err := s.Blockstore().DeleteMany(keys); err != nil {
		t.Fatal(err)
	}
	checkExactly(t, s, live, gone)
	s.Close()
	s = mustOpen(t, path)
	checkExactly(t, s, live, gone)
	s.Close()
}

// Ensure a run's filter never hides a key it holds (the runs test checks
// every key through Check) and rejects most keys it does not hold.
func TestRuns_FilterRejectsMostAbsentKeys(t *testing.T) {
	keys := make([][]byte, 5000)
	for i := range keys {
		keys[i] = randBlock(t, 64).Cid().Hash()
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	fp := storage.BloomFalsePositives(keys[:2500], keys[2500:])
	if fp > 0.03 {
		t.Fatalf("filter lets %.1f%% of absent keys through, want about 1%%", fp*100)
	}
}

// Ensure a merge left in progress when writes stop is finished by the
// writer's idle steps, and one in progress at Close by the next Open's.
func TestRuns_IdleWriterFinishesMerge(t *testing.T) {
	defer storage.SetRunSizes(64, 1, 1, 64)()
	defer storage.SetMergeAfterOpen(0)()
	var done atomic.Int32
	path := filepath.Join(t.TempDir(), storage.FileName)
	// Without the index lag, so that PutMany indexes in its commit.
	open := func() *storage.Store {
		s, err := storage.Open(path, &storage.Options{IndexLagBytes: -1, MergeDone: func() { done.Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	ctx := context.Background()
	live := map[string]blocks.Block{}
	var batch []blocks.Block
	for i := 0; i < 4*64; i++ {
		b := randBlock(t, 100+i)
		live[string(b.Cid().Hash())] = b
		batch = append(batch, b)
	}
	// One commit seals four runs and plans their merge; its step copies
	// 64 of the 256 entries.
	if err := s.Blockstore().PutMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	waitMerged := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, merging, err := s.Runs()
			if err != nil {
				t.Fatal(err)
			}
			if !merging {
				if n != want {
					t.Fatalf("%d runs after the merge, want %d", n, want)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the merge is still in progress 10 s after the last write")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if _, merging, _ := s.Runs(); !merging {
		t.Fatal("no merge in progress after the commit that sealed four runs")
	}
	waitMerged(1)
	checkExactly(t, s, live, nil)
	// MergeDone runs right after the commit that Runs just saw.
	for i := 0; done.Load() == 0 && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if done.Load() != 1 {
		t.Fatalf("MergeDone called %d times after one merge", done.Load())
	}

	batch = batch[:0]
	for i := 0; i < 4*64; i++ {
		b := randBlock(t, 600+i)
		live[string(b.Cid().Hash())] = b
		batch = append(batch, b)
	}
	if err := s.Blockstore().PutMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open()
	defer s.Close()
	if _, merging, _ := s.Runs(); !merging {
		t.Fatal("no merge in progress after reopening")
	}
	waitMerged(2) // the first merge's output and the second's
	checkExactly(t, s, live, nil)
}

// Ensure a store whose index passes Options.MaxIndexBytes refuses block
// puts with ErrIndexFull, still reads, deletes and keeps records, and
// takes puts again once deletes have freed index pages.
func TestStore_MaxIndexBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s, err := storage.Open(path, &storage.Options{MaxIndexBytes: 2 << 20, IndexLagBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var stored []blocks.Block
	for round := 0; ; round++ {
		if round == 200 {
			t.Fatal("200,000 blocks stored under a 2 MiB index cap")
		}
		var batch []blocks.Block
		for i := 0; i < 1000; i++ {
			batch = append(batch, randBlock(t, 40))
		}
		err := s.Blockstore().PutMany(ctx, batch)
		if errors.Is(err, storage.ErrIndexFull) {
			if !strings.Contains(err.Error(), "remove blocks") {
				t.Fatalf("error does not say what to do: %v", err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, batch...)
	}
	one := randBlock(t, 41)
	bt := s.NewBatch()
	if err := s.Blockstore().PutAsync(bt, one); !errors.Is(err, storage.ErrIndexFull) {
		t.Fatalf("PutAsync on a full index: %v", err)
	}
	if err := s.Datastore().Put(ctx, ds.NewKey("/pins/x"), []byte("y")); err != nil {
		t.Fatalf("record on a full index: %v", err)
	}
	mustRead(t, s, stored[0])
	var keys [][]byte
	for _, b := range stored[:len(stored)*3/4] {
		keys = append(keys, b.Cid().Hash())
	}
	if _, err := s.Blockstore().DeleteMany(keys); err != nil {
		t.Fatalf("delete on a full index: %v", err)
	}
	if err := s.Blockstore().Put(ctx, one); err != nil {
		t.Fatalf("put after deletes freed index pages: %v", err)
	}
	mustRead(t, s, one)
	mustCheck(t, s)
	t.Logf("%d blocks stored before the 2 MiB index was full", len(stored))
}

// Ensure Reclaim gives the index file's free pages back to the file
// system (holes, Linux) while readers go on, and that the store reads,
// takes new blocks and passes Check after it and after a reopen.
func TestReclaim_GivesIndexPagesBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s, err := storage.Open(path, &storage.Options{IndexLagBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	live := map[string]blocks.Block{}
	var all []blocks.Block
	for round := 0; round < 40; round++ {
		var batch []blocks.Block
		for i := 0; i < 1000; i++ {
			b := randBlock(t, 30)
			batch = append(batch, b)
		}
		if err := s.Blockstore().PutMany(ctx, batch); err != nil {
			t.Fatal(err)
		}
		all = append(all, batch...)
	}
	var keys [][]byte
	var gone []blocks.Block
	for i, b := range all {
		if i%10 == 0 {
			live[string(b.Cid().Hash())] = b
		} else {
			keys = append(keys, b.Cid().Hash())
			gone = append(gone, b)
		}
	}
	if _, err := s.Blockstore().DeleteMany(keys); err != nil {
		t.Fatal(err)
	}
	before, err := storage.DiskBytes(path)
	if err != nil {
		t.Fatal(err)
	}
	// Readers throughout: a page given back must never be one they read.
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(readErr)
		for {
			for _, b := range live {
				select {
				case <-stop:
					return
				default:
				}
				got, err := s.Blockstore().Get(ctx, b.Cid())
				if err != nil || !bytes.Equal(got.RawData(), b.RawData()) {
					readErr <- fmt.Errorf("read of %s during give-back: %v", b.Cid(), err)
					return
				}
				time.Sleep(20 * time.Microsecond) // moments without a reader

			}
		}
	}()
	res, err := s.Reclaim(ctx, storage.ReclaimOptions{})
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	if res.IndexFreed == 0 {
		// Readers all along (a loaded machine): again, without them.
		t.Log("readers held freed pages throughout; giving back again without readers")
		if res.IndexFreed, err = s.GiveBackIndex(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := storage.DiskBytes(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("disk %d -> %d bytes; index pages given back: %d bytes", before, after, res.IndexFreed)
	if runtime.GOOS == "linux" && res.IndexFreed == 0 {
		t.Fatal("no index page given back after deleting nine tenths of the blocks")
	}
	checkExactly(t, s, live, gone)
	more := randBlock(t, 999)
	live[string(more.Cid().Hash())] = more
	if err := s.Blockstore().Put(ctx, more); err != nil {
		t.Fatal(err)
	}
	checkExactly(t, s, live, gone)
	s.Close()
	s = mustOpen(t, path)
	defer s.Close()
	checkExactly(t, s, live, gone)
}
