package storage_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/storage"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
	bolt "go.etcd.io/bbolt"
)

func mustOpen(t *testing.T, path string) *storage.Store {
	t.Helper()
	s, err := storage.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func randBlock(t *testing.T, n int) blocks.Block { return storage.RandBlock(t, n) }

func mustCheck(t *testing.T, s *storage.Store) {
	t.Helper()
	if errs := s.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatalf("check: %v", errs)
	}
}

// Ensure that blocks put survive a close and reopen, and counters match.
func TestStore_Put_Reopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	ctx := context.Background()
	bs := s.Blockstore()
	var want []blocks.Block
	for i := 0; i < 50; i++ {
		b := randBlock(t, 1000+i)
		want = append(want, b)
		if err := bs.Put(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// Same bytes again: counted once.
	if err := bs.Put(ctx, want[0]); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path)
	defer s.Close()
	bs = s.Blockstore()
	var total uint64
	for _, b := range want {
		got, err := bs.Get(ctx, b.Cid())
		if err != nil {
			t.Fatal(err)
		}
		if string(got.RawData()) != string(b.RawData()) {
			t.Fatalf("block %s differs", b.Cid())
		}
		total += uint64(len(b.RawData()))
	}
	st, err := s.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.NumBlocks != 50 || st.BlockBytes != total {
		t.Fatalf("stat: got %d blocks %d bytes, want 50 and %d", st.NumBlocks, st.BlockBytes, total)
	}
	mustCheck(t, s)
}

// Ensure a dag-pb CID and a raw CID of the same bytes share one block.
func TestBlockstore_SharedMultihash(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), storage.FileName))
	defer s.Close()
	ctx := context.Background()
	b := randBlock(t, 100)
	if err := s.Blockstore().Put(ctx, b); err != nil {
		t.Fatal(err)
	}
	pb := cid.NewCidV0(b.Cid().Hash())
	ok, err := s.Blockstore().Has(ctx, pb)
	if err != nil || !ok {
		t.Fatalf("Has(%s) = %v, %v", pb, ok, err)
	}
	var keys []cid.Cid
	ch, _ := s.Blockstore().AllKeysChan(ctx)
	for k := range ch {
		keys = append(keys, k)
	}
	if len(keys) != 1 || keys[0].Type() != cid.Raw {
		t.Fatalf("keys %v", keys)
	}
}

// Ensure missing blocks give ipld.ErrNotFound and identity CIDs need no
// storage.
func TestBlockstore_NotFound_Identity(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), storage.FileName))
	defer s.Close()
	ctx := context.Background()
	_, err := s.Blockstore().Get(ctx, randBlock(t, 10).Cid())
	if !ipld.IsNotFound(err) {
		t.Fatalf("got %v, want not found", err)
	}
	h, _ := mh.Sum([]byte("inline"), mh.IDENTITY, -1)
	id := cid.NewCidV1(cid.Raw, h)
	blk, _ := blocks.NewBlockWithCid([]byte("inline"), id)
	if err := s.Blockstore().Put(ctx, blk); err != nil {
		t.Fatal(err)
	}
	got, err := s.Blockstore().Get(ctx, id)
	if err != nil || string(got.RawData()) != "inline" {
		t.Fatalf("identity get: %v %v", got, err)
	}
	if st, _ := s.Stat(); st.NumBlocks != 0 {
		t.Fatalf("identity block was stored")
	}
	mustCheck(t, s)
}

// Ensure concurrent async puts through batches are all durable at Sync,
// and deletes keep the counters right.
func TestBatch_ConcurrentSync(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), storage.FileName))
	defer s.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var all []blocks.Block
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bt := s.NewBatch()
			for i := 0; i < 100; i++ {
				b := randBlock(t, 4096)
				if err := s.Blockstore().PutAsync(bt, b); err != nil {
					t.Error(err)
				}
				mu.Lock()
				all = append(all, b)
				mu.Unlock()
			}
			if err := bt.Sync(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, b := range all[:200] {
		if err := s.Blockstore().DeleteBlock(ctx, b.Cid()); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := s.Stat()
	if st.NumBlocks != 200 {
		t.Fatalf("got %d blocks, want 200", st.NumBlocks)
	}
	mustCheck(t, s)
}

// Ensure PutAsyncThen calls then once per put: after the transaction that
// wrote the block (which is then readable), before Sync returns; at once
// for a block that is not queued (identity) and for a put that fails.
func TestPutAsyncThen_AfterCommit(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), storage.FileName))
	ctx := context.Background()
	bs := s.Blockstore()
	bt := s.NewBatch()
	var mu sync.Mutex
	calls := map[cid.Cid]int{}
	var unreadable []cid.Cid
	then := func(b blocks.Block) func() {
		return func() {
			// The writer goroutine: a read transaction must see the block.
			has, err := bs.Has(ctx, b.Cid())
			mu.Lock()
			defer mu.Unlock()
			calls[b.Cid()]++
			if err != nil || !has {
				unreadable = append(unreadable, b.Cid())
			}
		}
	}
	var all []blocks.Block
	for range 64 {
		b := randBlock(t, 64<<10)
		all = append(all, b)
		if err := bs.PutAsyncThen(bt, b, then(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := bt.Sync(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, b := range all {
		if calls[b.Cid()] != 1 {
			t.Errorf("%s: then ran %d times by Sync, want once", b.Cid(), calls[b.Cid()])
		}
	}
	if len(unreadable) > 0 {
		t.Errorf("then ran before these blocks were committed: %v", unreadable)
	}
	mu.Unlock()

	idHash, _ := mh.Sum([]byte("tiny"), mh.IDENTITY, -1)
	id, _ := blocks.NewBlockWithCid([]byte("tiny"), cid.NewCidV1(cid.Raw, idHash))
	ran := false
	if err := bs.PutAsyncThen(bt, id, func() { ran = true }); err != nil || !ran {
		t.Fatalf("identity block: err %v, then ran %v; want nil and at once", err, ran)
	}
	s.Close()
	ran = false
	if err := bs.PutAsyncThen(bt, randBlock(t, 100), func() { ran = true }); !errors.Is(err, storage.ErrClosed) || !ran {
		t.Fatalf("put after close: err %v, then ran %v; want %v and at once", err, ran, storage.ErrClosed)
	}
}

// Ensure the datastore view supports prefix queries and batches.
func TestDatastore_QueryBatch(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), storage.FileName))
	defer s.Close()
	ctx := context.Background()
	d := s.Datastore()
	b, _ := d.Batch(ctx)
	for _, k := range []string{"/pins/a", "/pins/b", "/pinsx/c", "/other"} {
		b.Put(ctx, ds.NewKey(k), []byte(k))
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := d.Query(ctx, dsq.Query{Prefix: "/pins"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.Rest()
	if len(got) != 2 || got[0].Key != "/pins/a" || got[1].Key != "/pins/b" {
		t.Fatalf("query: %v", got)
	}
	if _, err := d.Get(ctx, ds.NewKey("/none")); !errors.Is(err, ds.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	d.Delete(ctx, ds.NewKey("/other"))
	if ok, _ := d.Has(ctx, ds.NewKey("/other")); ok {
		t.Fatal("deleted key still there")
	}
}

// Ensure damaged files give a clear error at open, not a panic.
func TestOpen_Corrupt(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.db")
	os.WriteFile(short, []byte("not a bolt file"), 0o600)
	if _, err := storage.Open(short, nil); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("short file: got %v, want ErrCorrupt", err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	junk := make([]byte, 64<<10)
	rand.Read(junk)
	os.WriteFile(garbage, junk, 0o600)
	if _, err := storage.Open(garbage, nil); err == nil {
		t.Fatal("garbage file opened")
	}
	// A second open of a file in use reports the lock.
	p := filepath.Join(dir, storage.FileName)
	s := mustOpen(t, p)
	defer s.Close()
	if _, err := storage.Open(p, nil); !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("second open: got %v, want ErrLocked", err)
	}
}

// Ensure Check reports a block whose bytes no longer match its hash.
func TestCheck_DetectsBadBlock(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), storage.FileName))
	defer s.Close()
	b := randBlock(t, 100)
	s.Blockstore().Put(context.Background(), b)
	// Overwrite the value behind the store's back.
	file, off, n, err := s.BlockFile(b.Cid().Hash())
	if err != nil || n != 100 {
		t.Fatal(n, err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 100), off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	errs := s.Check(storage.CheckOptions{VerifyHashes: true})
	if len(errs) != 1 {
		t.Fatalf("got %v, want one error", errs)
	}
}

type boltTx = bolt.Tx

// Ensure Writes counts the bytes commits write, since open and over the
// file's life (kept across reopens), and about one byte per byte added.
func TestStore_Writes_SinceOpenAndLifetime(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	ctx := context.Background()
	if w := s.Writes(); w.SinceOpen != 0 {
		t.Fatalf("fresh store wrote %d bytes since open", w.SinceOpen)
	}
	const size = 1 << 20
	for range 4 {
		if err := s.Blockstore().Put(ctx, randBlock(t, size/4)); err != nil {
			t.Fatal(err)
		}
	}
	first := s.Writes()
	if first.SinceOpen < size || first.SinceOpen > 2*size || first.Total < first.SinceOpen {
		t.Fatalf("after adding %d bytes: %+v", size, first)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path)
	defer s.Close()
	reopened := s.Writes()
	if reopened.SinceOpen != 0 || reopened.Total < size {
		t.Fatalf("after reopening: %+v (before: %+v)", reopened, first)
	}
	if err := s.Blockstore().Put(ctx, randBlock(t, size/4)); err != nil {
		t.Fatal(err)
	}
	if w := s.Writes(); w.SinceOpen < size/4 || w.Total < reopened.Total+size/4 {
		t.Fatalf("after one more put: %+v (reopened: %+v)", w, reopened)
	}
	mustCheck(t, s)
}

// Ensure a put whose context ends while the writer is stuck in a commit
// (here: another write transaction holds bbolt's lock) gives up with the
// context's error instead of waiting for the writer, and that the batch
// then reports the failure while the writer goes on once it is free.
func TestPutAsyncContext_GivesUpWhileWriterIsStuck(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), storage.FileName))
	bs := s.Blockstore()
	tx, err := s.DB().Begin(true) // the writer's next commit waits for it
	if err != nil {
		t.Fatal(err)
	}
	bt := s.NewBatch()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		for {
			if err := bs.PutAsyncContext(ctx, bt, randBlock(t, 16), nil); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		t.Fatalf("a put failed before the context ended: %v", err)
	case <-time.After(200 * time.Millisecond): // the queue fills up
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("put after cancel: %v, want context.Canceled", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := bt.Sync(); err == nil {
		t.Fatal("Sync of a batch with a cancelled put reports success")
	}
	// The store takes writes again.
	b := randBlock(t, 16)
	if err := bs.Put(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if has, err := bs.Has(context.Background(), b.Cid()); err != nil || !has {
		t.Fatalf("after the stuck writer: has %v, %v", has, err)
	}
}

// Ensure a block with one flipped bit on disk is never handed out: Get
// and View answer ErrBlockDamaged naming the block, Has still sees it,
// and the other blocks read as before.
func TestBlockstore_FlippedBit_NeverServed(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), storage.FileName))
	defer s.Close()
	ctx := context.Background()
	bs := s.Blockstore()
	good, bad := randBlock(t, 4096), randBlock(t, 4096)
	for _, b := range []blocks.Block{good, bad} {
		if err := bs.Put(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	testutil.FlipBit(t, s, bad.Cid().Hash())
	if _, err := bs.Get(ctx, bad.Cid()); !errors.Is(err, storage.ErrBlockDamaged) {
		t.Fatalf("Get of the flipped block: %v, want ErrBlockDamaged", err)
	} else if want := bad.Cid().String(); !strings.Contains(err.Error(), want) {
		t.Fatalf("Get error %q does not name %s", err, want)
	}
	called := false
	err := bs.View(ctx, bad.Cid(), func([]byte) error { called = true; return nil })
	if !errors.Is(err, storage.ErrBlockDamaged) || called {
		t.Fatalf("View of the flipped block: %v (fn called: %v), want ErrBlockDamaged", err, called)
	}
	if ok, err := bs.Has(ctx, bad.Cid()); !ok || err != nil {
		t.Fatalf("Has of the flipped block: %v %v", ok, err)
	}
	got, err := bs.Get(ctx, good.Cid())
	if err != nil || string(got.RawData()) != string(good.RawData()) {
		t.Fatalf("Get of the good block: %v", err)
	}
}

// The cost of reading a 256 KiB block, hash check included (the read
// path of cat, bitswap and the gateway).
func BenchmarkBlockstore_View256K(b *testing.B) {
	s, err := storage.Open(filepath.Join(b.TempDir(), storage.FileName), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	blk := storage.RandBlock(b, 256<<10)
	if err := s.Blockstore().Put(context.Background(), blk); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(256 << 10)
	for b.Loop() {
		if err := s.Blockstore().View(context.Background(), blk.Cid(), func([]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// Ensure PunchRemoved gives back the space of removed blocks in the
// active segment without moving a live one: the live blocks read back,
// Check passes, and Reclaim still walks the segment afterwards.
func TestStore_PunchRemoved_GivesSpaceBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	defer s.Close()
	ctx := context.Background()
	bs := s.Blockstore()
	live, gone := putSpread(t, bs, 4)
	for _, b := range gone {
		if err := bs.DeleteBlock(ctx, b.Cid()); err != nil {
			t.Fatal(err)
		}
	}
	freed, err := s.PunchRemoved()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(gone)) * 250 << 10; freed < want {
		t.Fatalf("freed %d bytes on disk, want at least %d", freed, want)
	}
	wantLiveAfterReclaim(t, s, live)
}

// Ensure PunchRemoved gives back the space of removed blocks in older
// segments too, that live blocks there read whole, that a reader which
// looked a removed block up before the delete answers not found rather
// than damaged, and that Check and Reclaim still pass.
func TestStore_PunchRemoved_OlderSegments(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s, err := storage.Open(path, &storage.Options{SegmentBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	bs := s.Blockstore()
	live, gone := putSpread(t, bs, 2) // every segment keeps live blocks
	if segs := storage.SegmentCount(t, s); segs < 8 {
		t.Fatalf("%d segments, want the blocks spread over at least 8", segs)
	}
	before := diskUsage(t, storage.SegmentDir(path))
	stale := storage.ReadLater(t, s, gone[0].Cid()) // looked up now, read later
	for _, b := range gone {
		if err := bs.DeleteBlock(ctx, b.Cid()); err != nil {
			t.Fatal(err)
		}
	}
	freed, err := s.PunchRemoved()
	if err != nil {
		t.Fatal(err)
	}
	want := int64(len(gone)) * 250 << 10
	if freed < want {
		t.Fatalf("freed %d bytes on disk, want at least %d", freed, want)
	}
	if after := diskUsage(t, storage.SegmentDir(path)); before-after < want {
		t.Fatalf("segments take %d bytes on disk less than before the deletes, want at least %d", before-after, want)
	}
	if _, err := stale(); !ipld.IsNotFound(err) {
		t.Fatalf("read of a block removed after its lookup: %v, want not found", err)
	}
	wantLiveAfterReclaim(t, s, live)
}

// diskUsage sums what the files in dir take on disk (holes excluded).
func diskUsage(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Sys().(*syscall.Stat_t).Blocks * 512
	}
	return n
}

// putSpread puts 40 blocks of 256 KiB and returns every keep-th as live,
// the others to remove.
func putSpread(t *testing.T, bs *storage.Blockstore, keep int) (live, gone []blocks.Block) {
	t.Helper()
	for i := 0; i < 40; i++ {
		b := randBlock(t, 256<<10)
		if err := bs.Put(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if i%keep == 0 {
			live = append(live, b)
		} else {
			gone = append(gone, b)
		}
	}
	return live, gone
}

// wantLiveAfterReclaim checks that the live blocks read whole and the
// store checks clean after PunchRemoved, then again after a Reclaim.
func wantLiveAfterReclaim(t *testing.T, s *storage.Store, live []blocks.Block) {
	t.Helper()
	ctx := context.Background()
	bs := s.Blockstore()
	for _, b := range live {
		got, err := bs.Get(ctx, b.Cid())
		if err != nil || string(got.RawData()) != string(b.RawData()) {
			t.Fatalf("live block after PunchRemoved: %v", err)
		}
	}
	mustCheck(t, s)
	if _, err := s.Reclaim(ctx, storage.ReclaimOptions{MinGarbage: 0.01}); err != nil {
		t.Fatalf("reclaim after PunchRemoved: %v", err)
	}
	mustCheck(t, s)
	for _, b := range live {
		if _, err := bs.Get(ctx, b.Cid()); err != nil {
			t.Fatalf("live block after Reclaim: %v", err)
		}
	}
}
