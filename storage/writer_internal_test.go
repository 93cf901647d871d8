package storage

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"testing"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

func testBlock(t testing.TB, n int) blocks.Block {
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

// Ensure puts and deletes of the same block in one commit end as the
// later one says, and report the sizes deleted.
func TestApply_PutDeleteSameCommit(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	a, b := testBlock(t, 500), testBlock(t, 600)
	put := func(blk blocks.Block) mutation {
		return mutation{bucket: bucketBlocks, kind: opPut, key: blk.Cid().Hash(), val: blk.RawData()}
	}
	del := func(blk blocks.Block) mutation {
		return mutation{bucket: bucketBlocks, kind: opDel, key: blk.Cid().Hash()}
	}
	if err := s.w.do([]mutation{put(b)}); err != nil {
		t.Fatal(err)
	}
	// The writer goroutine is idle: commit this group from here.
	dels := &request{muts: []mutation{del(a), del(b)}, sizes: make([]int, 2)}
	group := []*request{{muts: []mutation{put(a)}}, dels, {muts: []mutation{put(b)}}}
	if err := s.w.commit(group); err != nil {
		t.Fatal(err)
	}
	if dels.sizes[0] != 500 || dels.sizes[1] != 600 {
		t.Fatalf("sizes %v", dels.sizes)
	}
	if ok, _ := s.Blockstore().Has(ctx, a.Cid()); ok {
		t.Fatal("block put then deleted in one commit is stored")
	}
	got, err := s.Blockstore().Get(ctx, b.Cid())
	if err != nil || string(got.RawData()) != string(b.RawData()) {
		t.Fatalf("block deleted then put in one commit: %v", err)
	}
	if errs := s.Check(CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatal(errs)
	}
	st, _ := s.Stat()
	if st.NumBlocks != 1 || st.BlockBytes != 600 {
		t.Fatalf("counters %+v", st)
	}
}
