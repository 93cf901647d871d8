package storage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"cairn/internal/testutil"
	"cairn/storage"

	blocks "github.com/ipfs/go-block-format"
	ds "github.com/ipfs/go-datastore"
	ipld "github.com/ipfs/go-ipld-format"
)

func openSmallSegs(t *testing.T, path string, segBytes int64) *storage.Store {
	t.Helper()
	s, err := storage.Open(path, &storage.Options{SegmentBytes: segBytes})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func segFiles(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(storage.SegmentDir(path), "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustRead(t *testing.T, s *storage.Store, b blocks.Block) {
	t.Helper()
	got, err := s.Blockstore().Get(context.Background(), b.Cid())
	if err != nil {
		t.Fatalf("get %s: %v", b.Cid(), err)
	}
	if string(got.RawData()) != string(b.RawData()) {
		t.Fatalf("block %s read back different bytes", b.Cid())
	}
}

// Ensure blocks spread over many segment files (a batch larger than a
// segment included) read back after a reopen.
func TestSegments_RollOver_Reopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := openSmallSegs(t, path, 64<<10)
	ctx := context.Background()
	var all []blocks.Block
	var batch []blocks.Block
	for i := 0; i < 100; i++ {
		b := randBlock(t, 4000+i)
		batch = append(batch, b)
		all = append(all, b)
	}
	if err := s.Blockstore().PutMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	big := randBlock(t, 200<<10) // larger than a segment: one of its own
	if err := s.Blockstore().Put(ctx, big); err != nil {
		t.Fatal(err)
	}
	all = append(all, big)
	if n := len(segFiles(t, path)); n < 7 {
		t.Fatalf("%d segment files for 600 KB in 64 KiB segments", n)
	}
	mustCheck(t, s)
	s.Close()
	s = openSmallSegs(t, path, 64<<10)
	defer s.Close()
	for _, b := range all {
		mustRead(t, s, b)
	}
	mustCheck(t, s)
}

// Ensure bytes past the last commit in the active segment (a commit a
// crash cut short) are cut at open, and that segment files no entry
// names are removed.
func TestOpen_DropsUncommittedSegmentBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	b := randBlock(t, 3000)
	if err := s.Blockstore().Put(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	s.Close()
	files := segFiles(t, path)
	if len(files) != 1 {
		t.Fatalf("segments %v", files)
	}
	fi, _ := os.Stat(files[0])
	f, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 5000))
	f.Close()
	orphan := filepath.Join(storage.SegmentDir(path), "00000099.seg")
	os.WriteFile(orphan, []byte("cairnSG1 half a commit"), 0o600)

	s = mustOpen(t, path)
	defer s.Close()
	if fi2, _ := os.Stat(files[0]); fi2.Size() != fi.Size() {
		t.Fatalf("active segment is %d bytes after reopen, %d committed", fi2.Size(), fi.Size())
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("orphan segment kept: %v", err)
	}
	mustRead(t, s, b)
	b2 := randBlock(t, 100)
	if err := s.Blockstore().Put(context.Background(), b2); err != nil {
		t.Fatal(err)
	}
	mustRead(t, s, b2)
	mustCheck(t, s)
}

// Ensure deleting every block of a full segment removes its file, and
// that Reclaim gives back segments mostly garbage, never rewriting more
// than it frees, keeping every live block readable.
func TestReclaim_GivesSpaceBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := openSmallSegs(t, path, 64<<10)
	defer s.Close()
	ctx := context.Background()
	bs := s.Blockstore()
	var all []blocks.Block
	for i := 0; i < 160; i++ { // ten segments of 16 blocks
		b := randBlock(t, 4000)
		if err := bs.Put(ctx, b); err != nil {
			t.Fatal(err)
		}
		all = append(all, b)
	}
	before := len(segFiles(t, path))
	// The first 16 blocks fill the first segment: deleting them removes it.
	var keys [][]byte
	for _, b := range all[:16] {
		keys = append(keys, b.Cid().Hash())
	}
	sizes, err := bs.DeleteMany(append(keys, []byte("\x12\x20not stored, not a real multihash!")))
	if err != nil {
		t.Fatal(err)
	}
	if sizes[0] != 4000 || sizes[len(sizes)-1] != -1 {
		t.Fatalf("sizes %v", sizes)
	}
	if got := len(segFiles(t, path)); got != before-1 {
		t.Fatalf("%d segment files after emptying one, %d before", got, before)
	}
	// Three of every four of the rest: most segments are 3/4 garbage.
	var live []blocks.Block
	keys = nil
	for i, b := range all[16:] {
		if i%4 == 0 {
			live = append(live, b)
			continue
		}
		keys = append(keys, b.Cid().Hash())
	}
	if _, err := bs.DeleteMany(keys); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Stat()
	diskBefore, _ := storage.DiskBytes(path)
	res, err := s.Reclaim(ctx, storage.ReclaimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	diskAfter, _ := storage.DiskBytes(path)
	t.Logf("reclaim: %+v; disk %d -> %d; free before %d", res, diskBefore, diskAfter, st.FreeBytes)
	if res.Segments < 8 || res.Rewritten > res.Freed/2 || diskAfter >= diskBefore-res.Freed/2 {
		t.Fatalf("reclaim %+v, disk %d -> %d", res, diskBefore, diskAfter)
	}
	for _, b := range live {
		mustRead(t, s, b)
	}
	for _, b := range all[17:20] {
		if _, err := bs.GetSize(ctx, b.Cid()); !ipld.IsNotFound(err) {
			t.Fatalf("deleted block: %v", err)
		}
	}
	mustCheck(t, s)
	st, _ = s.Stat()
	if st.FreeBytes > 64<<10+st.IndexFreeBytes {
		t.Fatalf("after reclaim %d bytes free in segments", st.FreeBytes-st.IndexFreeBytes)
	}
}

// Ensure a schema-1 store (block bytes in nested buckets of the bbolt
// file) is migrated at open: blocks, records and counters carried over,
// the old file gone.
func TestMigrate_V1(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	blks := testutil.WriteSchema1Store(t, path, 300, map[string]string{"/pins/x": "y", "/local/filesroot": "z"})
	s := mustOpen(t, path)
	defer s.Close()
	for _, b := range blks {
		mustRead(t, s, b)
	}
	v, err := s.Datastore().Get(context.Background(), ds.NewKey("/pins/x"))
	if err != nil || string(v) != "y" {
		t.Fatalf("record: %q %v", v, err)
	}
	st, _ := s.Stat()
	if st.NumBlocks != 300 {
		t.Fatalf("%d blocks after migration", st.NumBlocks)
	}
	if _, err := os.Stat(path + ".v1"); !os.IsNotExist(err) {
		t.Fatalf("old file kept: %v", err)
	}
	if s.Writes().Total < 1<<20 {
		t.Fatalf("lifetime writes %d not carried over", s.Writes().Total)
	}
	mustCheck(t, s)
}

// Ensure blocks acknowledged and not yet indexed when the process ends
// without Close (a copy of the files taken then stands for a crash) are
// indexed at the next open, up to a record the crash cut.
func TestOpen_IndexesAcknowledgedUnindexedBlocks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, storage.FileName)
	s := mustOpen(t, path)
	defer s.Close()
	ctx := context.Background()
	var blks []blocks.Block
	for i := 0; i < 20; i++ {
		b := randBlock(t, 1500)
		if err := s.Blockstore().Put(ctx, b); err != nil {
			t.Fatal(err)
		}
		blks = append(blks, b)
	}
	// The crash: the files as they are now, and half a record more.
	crash := filepath.Join(t.TempDir(), storage.FileName)
	copyFile(t, path, crash)
	os.MkdirAll(storage.SegmentDir(crash), 0o700)
	for _, f := range segFiles(t, path) {
		copyFile(t, f, filepath.Join(storage.SegmentDir(crash), filepath.Base(f)))
	}
	seg := segFiles(t, crash)
	cut := randBlock(t, 1500)
	rec := append([]byte{0, 0, 0x05, 0xdc, byte(len(cut.Cid().Hash()))}, cut.Cid().Hash()...)
	rec = append(rec, cut.RawData()[:700]...)
	f, _ := os.OpenFile(seg[len(seg)-1], os.O_WRONLY|os.O_APPEND, 0)
	f.Write(rec)
	f.Close()

	c := mustOpen(t, crash)
	defer c.Close()
	for _, b := range blks {
		mustRead(t, c, b)
	}
	if ok, _ := c.Blockstore().Has(ctx, cut.Cid()); ok {
		t.Fatal("a record the crash cut was indexed")
	}
	if st, _ := c.Stat(); st.NumBlocks != 20 {
		t.Fatalf("%d blocks after the crash", st.NumBlocks)
	}
	mustCheck(t, c)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Ensure deleting most blocks makes the index file worth compacting, and
// that Compact then shrinks it to about what its entries need.
func TestShouldCompact_AfterMostBlocksDeleted(t *testing.T) {
	path := filepath.Join(t.TempDir(), storage.FileName)
	s := mustOpen(t, path)
	ctx := context.Background()
	var keys [][]byte
	var batch []blocks.Block
	for i := 0; i < 200000; i++ {
		b := randBlock(t, 40)
		batch = append(batch, b)
		if i%10 != 0 {
			keys = append(keys, b.Cid().Hash())
		}
		if len(batch) == 5000 {
			if err := s.Blockstore().PutMany(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if _, err := s.Blockstore().DeleteMany(keys); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Stat()
	s.Close()
	t.Logf("after deleting 90%%: %+v", st)
	if !st.ShouldCompact() {
		t.Fatalf("index file of %d bytes for %d blocks is not worth compacting", st.IndexBytes, st.NumBlocks)
	}
	before, after, err := storage.Compact(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compacted %d -> %d", before, after)
	if after > before/3 {
		t.Fatalf("compacted %d -> %d", before, after)
	}
	s = mustOpen(t, path)
	defer s.Close()
	mustCheck(t, s)
}

// Ensure Schema reads a store's version without migrating it: none yet,
// schema 1, schema 2, current.
func TestSchema_ReadsWithoutMigrating(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, storage.FileName)
	if v, err := storage.Schema(path); err != nil || v != 0 {
		t.Fatalf("no store: %d %v", v, err)
	}
	testutil.WriteSchema1Store(t, path, 5, nil)
	if v, err := storage.Schema(path); err != nil || v != 1 {
		t.Fatalf("schema 1: %d %v", v, err)
	}
	if v, _ := storage.Schema(path); v != 1 {
		t.Fatal("Schema migrated the store")
	}
	s := mustOpen(t, path)
	s.Close()
	if v, err := storage.Schema(path); err != nil || v != storage.SchemaVersion {
		t.Fatalf("after open: %d %v", v, err)
	}
	if err := storage.DowngradeToV2(path); err != nil {
		t.Fatal(err)
	}
	if v, err := storage.Schema(path); err != nil || v != 2 {
		t.Fatalf("schema 2: %d %v", v, err)
	}
	if err := os.WriteFile(path, make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Schema(path); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("a file of zeros: %v", err)
	}
}
