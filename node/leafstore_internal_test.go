package node

import (
	"bytes"
	"context"
	"math/rand"
	"runtime"
	"sync/atomic"
	"testing"

	"cairn/storage"

	ipld "github.com/ipfs/go-ipld-format"
)

// countingHandback counts the leaf buffers the DAG service gives back.
type countingHandback struct {
	*batchDAG
	n atomic.Int64
}

func (c *countingHandback) expect(nd ipld.Node, free func()) {
	c.batchDAG.expect(nd, func() { c.n.Add(1); free() })
}

// Stored imports reuse leaf buffers once the store's transaction that
// wrote them has ended, and a buffer is never rewritten while the store
// holds it: the stored blocks are boxo's, byte for byte, and hash to
// their CIDs.
func TestLayout_StoredReusesBuffers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	dir := t.TempDir()
	if _, err := Init(dir, "test"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n, err := New(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	data := make([]byte, 12<<20+7)
	rand.New(rand.NewSource(5)).Read(data)
	for _, c := range []layoutCase{
		{size: len(data), chunker: "size-65536", maxLinks: 7},
		{size: len(data), chunker: "size-65536", maxLinks: 7, raw: true, v1: true, trickle: true},
	} {
		var want recordDAG
		wn, err := layoutWith(t, c, bytes.NewReader(data), false, &want)
		if err != nil {
			t.Fatal(err)
		}
		sess := n.BeginWrite()
		hb := &countingHandback{batchDAG: newBatchDAG(ctx, n, sess)}
		gn, err := layoutOpts(t, c, bytes.NewReader(data), true, hb.batchDAG, 3, hb)
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.End(); err != nil {
			t.Fatal(err)
		}
		if gn.Cid() != wn.Cid() {
			t.Fatalf("%s: root %s, boxo %s", c, gn.Cid(), wn.Cid())
		}
		for _, k := range want.order {
			b, err := n.Blocks.Get(ctx, k)
			if err != nil {
				t.Fatalf("%s: block %s: %v", c, k, err)
			}
			if !bytes.Equal(b.RawData(), want.data[k]) {
				t.Fatalf("%s: block %s holds other bytes than boxo's", c, k)
			}
		}
		if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
			t.Fatal(errs)
		}
		if got, leaves := hb.n.Load(), int64(len(data)/65536); got < leaves {
			t.Fatalf("%s: %d buffers given back, want every leaf's (%d)", c, got, leaves)
		}
	}
}
