package storage_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn/storage"

	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
)

// Ensure small datastore writes are answered from the overlay before any
// index commit folds them, that Get, Has, GetSize and Query see puts,
// overwrites and deletes in order, and that a close folds them into the
// bucket.
func TestDatastore_LaggedWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	ctx := context.Background()
	d := s.Datastore()
	// Some keys in the bucket first: a long key goes through a full
	// commit.
	long := "/p/" + strings.Repeat("x", 300)
	for _, k := range []string{"/p/b", "/p/d", long} {
		if err := d.Put(ctx, ds.NewKey(k), []byte("old"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if !s.DSInBucket(long) {
		t.Fatal("a 303-byte key was not written to the bucket directly")
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	b := mustBatch(t, d)
	b.Put(ctx, ds.NewKey("/p/a"), []byte("A"))
	b.Put(ctx, ds.NewKey("/p/b"), []byte("B1"))
	b.Put(ctx, ds.NewKey("/p/b"), []byte("B2")) // the later write wins
	b.Delete(ctx, ds.NewKey("/p/d"))
	b.Put(ctx, ds.NewKey("/q/e"), []byte("E")) // outside the prefix
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.DSLagged(); n != 4 {
		t.Fatalf("%d keys lagged, want 4", n)
	}
	if s.DSInBucket("/p/a") {
		t.Fatal("a small write reached the bucket before an index commit")
	}
	want := map[string]string{"/p/a": "A", "/p/b": "B2", long: "old" + long}
	check := func(s *storage.Store) {
		t.Helper()
		d := s.Datastore()
		for k, v := range want {
			got, err := d.Get(ctx, ds.NewKey(k))
			if err != nil || string(got) != v {
				t.Fatalf("get %.20s: %q, %v; want %q", k, got, err, v)
			}
			if n, err := d.GetSize(ctx, ds.NewKey(k)); err != nil || n != len(v) {
				t.Fatalf("getsize %.20s: %d, %v", k, n, err)
			}
		}
		if _, err := d.Get(ctx, ds.NewKey("/p/d")); err != ds.ErrNotFound {
			t.Fatalf("get of a deleted key: %v", err)
		}
		if ok, _ := d.Has(ctx, ds.NewKey("/p/d")); ok {
			t.Fatal("has of a deleted key")
		}
		res, err := d.Query(ctx, dsq.Query{Prefix: "/p"})
		if err != nil {
			t.Fatal(err)
		}
		all, _ := res.Rest()
		var got []string
		for _, e := range all {
			got = append(got, fmt.Sprintf("%.8s=%.8s", e.Key, e.Value))
		}
		if w := fmt.Sprintf("%.8s=%.8s %.8s=%.8s %.8s=%.8s", "/p/a", "A", "/p/b", "B2", long, "old"+long); strings.Join(got, " ") != w {
			t.Fatalf("query /p: %q, want %q", got, w)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path)
	defer s.Close()
	if !s.DSInBucket("/p/a") || s.DSInBucket("/p/d") {
		t.Fatal("close did not fold the lagged writes into the bucket")
	}
	check(s)
	mustCheck(t, s)
}

func mustBatch(t *testing.T, d *storage.Datastore) ds.Batch {
	t.Helper()
	b, err := d.Batch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dsStep is step i of the "dsput" crash child: a block, then a put of
// key i%50, and every seventh step a delete of key (i+1)%50.
func dsStep(s *storage.Store, i int) error {
	ctx := context.Background()
	if err := s.Blockstore().Put(ctx, numbered(i)); err != nil {
		return err
	}
	if err := s.Datastore().Put(ctx, dsStepKey(i), []byte(strconv.Itoa(i))); err != nil {
		return err
	}
	if i%7 == 0 {
		return s.Datastore().Delete(ctx, dsStepKey(i+1))
	}
	return nil
}

func dsStepKey(i int) ds.Key { return ds.NewKey(fmt.Sprintf("/k/%d", i%50)) }

// dsAfter is the datastore after steps 0..n-1 ("" for a missing key).
func dsAfter(n int) map[string]string {
	m := map[string]string{}
	for i := 0; i < n; i++ {
		m[dsStepKey(i).String()] = strconv.Itoa(i)
		if i%7 == 0 {
			delete(m, dsStepKey(i+1).String())
		}
	}
	return m
}

// Ensure every datastore write acknowledged before a kill -9 is there
// after it, in the order written, beside the blocks.
func TestCrash_DatastoreWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	ctx := context.Background()
	total := 0
	for round, d := range []time.Duration{60 * time.Millisecond, 250 * time.Millisecond, 600 * time.Millisecond} {
		// Each round starts over: the steps are numbered from 0.
		os.RemoveAll(filepath.Dir(path))
		os.MkdirAll(filepath.Dir(path), 0o700)
		acked := runAcked(t, "dsput", path, d)
		s := mustOpen(t, path)
		for i := 0; i <= acked; i++ {
			mustRead(t, s, numbered(i))
		}
		// Step acked+1 may have done part of its writes.
		before, after := dsAfter(acked+1), dsAfter(acked+2)
		for k := 0; k < 50; k++ {
			key := dsStepKey(k)
			v, err := s.Datastore().Get(ctx, key)
			got := string(v)
			if err == ds.ErrNotFound {
				got = ""
			} else if err != nil {
				t.Fatal(err)
			}
			if got != before[key.String()] && got != after[key.String()] {
				t.Fatalf("round %d: %s = %q after %d acknowledged steps, want %q", round, key, got, acked+1, before[key.String()])
			}
		}
		mustCheck(t, s)
		s.Close()
		t.Logf("round %d: %d steps acknowledged before the kill", round, acked+1)
		total += acked + 1
	}
	if total == 0 {
		t.Fatal("no step was acknowledged before a kill: nothing tested")
	}
}

// Ensure a batch's datastore writes land with its blocks, and not at all
// when one of its writes failed before them.
func TestBatch_DatastoreAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	ctx := context.Background()
	blk := randBlock(t, 1000)
	b := s.NewBatch()
	if err := s.Blockstore().PutAsync(b, blk); err != nil {
		t.Fatal(err)
	}
	db := b.Datastore()
	db.Put(ctx, ds.NewKey("/pins/a"), []byte("x"))
	if err := db.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	mustRead(t, s, blk)
	if ok, _ := s.Datastore().Has(ctx, ds.NewKey("/pins/a")); !ok {
		t.Fatal("the write after the batch is missing")
	}

	failed := errors.New("disk on fire")
	b2 := s.NewBatch()
	if err := s.Blockstore().PutAsync(b2, randBlock(t, 1000)); err != nil {
		t.Fatal(err)
	}
	b2.Sync()
	storage.FailBatch(b2, failed)
	db2 := b2.Datastore()
	db2.Put(ctx, ds.NewKey("/pins/b"), []byte("x"))
	if err := db2.Commit(ctx); !errors.Is(err, failed) {
		t.Fatalf("commit after a failed write: %v, want %v", err, failed)
	}
	if ok, _ := s.Datastore().Has(ctx, ds.NewKey("/pins/b")); ok {
		t.Fatal("a write after a failed one was recorded")
	}
	s.Close()
	s = mustOpen(t, path)
	defer s.Close()
	mustRead(t, s, blk)
	if ok, _ := s.Datastore().Has(ctx, ds.NewKey("/pins/a")); !ok {
		t.Fatal("the write after the batch is missing after a reopen")
	}
	mustCheck(t, s)
}

// Readers of the datastore and commits that find the overlay empty
// (long keys go through full commits) run at once: under -race this
// caught a commit clearing the overlay's map without its lock.
func TestDatastore_ReadersDuringEmptyOverlayCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	ctx := context.Background()
	d := s.Datastore()
	// A short key goes through the overlay, which a flush then empties:
	// its map is allocated and empty.
	if err := d.Put(ctx, ds.NewKey("/p/a"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := d.Has(ctx, ds.NewKey("/p/a")); err != nil {
				done <- err
				return
			}
		}
	}()
	long := "/p/" + strings.Repeat("y", 300)
	for i := 0; i < 200; i++ {
		if err := d.Put(ctx, ds.NewKey(long), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, err := d.Get(ctx, ds.NewKey(long)); err != nil || len(v) != 1 || v[0] != 199 {
		t.Fatalf("last write: %v, %v", v, err)
	}
}

// Ensure datastore records alone wait in the overlay past IndexLagBlocks
// of them (spread keys would each dirty a page of their own) and are
// written into the bucket at four times that, while beside a lagging
// block they count with it up to IndexLagBlocks.
func TestDatastore_LagFoldsAtFourTimesLagBlocks(t *testing.T) {
	const lag = 16
	s, err := storage.Open(filepath.Join(t.TempDir(), storage.FileName), &storage.Options{IndexLagBlocks: lag})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	d := s.Datastore()
	key := func(i int) ds.Key { return ds.NewKey(fmt.Sprintf("/providers/k%03d/p", i)) }
	for i := range 4*lag - 1 {
		if err := d.Put(ctx, key(i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.DSLagged(); n != 4*lag-1 || s.DSInBucket(key(0).String()) {
		t.Fatalf("after %d records: %d lagged, first in the bucket %v; want all lagged", 4*lag-1, n, s.DSInBucket(key(0).String()))
	}
	if err := d.Put(ctx, key(4*lag-1), []byte{1}); err != nil {
		t.Fatal(err)
	}
	if n := s.DSLagged(); n != 0 || !s.DSInBucket(key(0).String()) || !s.DSInBucket(key(4*lag-1).String()) {
		t.Fatalf("after %d records: %d lagged; want all in the bucket", 4*lag, n)
	}
	// Beside a lagging block (an add and its pin), blocks and records
	// count together up to IndexLagBlocks.
	if err := s.Blockstore().Put(ctx, randBlock(t, 100)); err != nil {
		t.Fatal(err)
	}
	for i := range lag - 2 {
		if err := d.Put(ctx, key(100+i), []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.DSLagged(); n != lag-2 {
		t.Fatalf("a block and %d records: %d records lagged, want all", lag-2, n)
	}
	if err := d.Put(ctx, key(100+lag), []byte{1}); err != nil {
		t.Fatal(err)
	}
	if n := s.DSLagged(); n != 0 {
		t.Fatalf("a block and %d records: %d records lagged, want none", lag-1, n)
	}
}
