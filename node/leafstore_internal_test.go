package node

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"sync/atomic"
	"testing"

	"cairn/node/unixfs"
	"cairn/storage"

	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipld/unixfs/importer/balanced"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	"github.com/ipfs/boxo/ipld/unixfs/importer/trickle"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// countingHandback counts the leaf buffers the DAG service gives back.
type countingHandback struct {
	*batchDAG
	n atomic.Int64
}

func (c *countingHandback) Expect(nd ipld.Node, free func()) {
	c.batchDAG.Expect(nd, func() { c.n.Add(1); free() })
}

// storedCase is a file layout of the test: 65536-byte chunks, 7 links a
// node, CIDv0 dag-pb leaves or CIDv1 raw leaves, balanced or trickle.
type storedCase struct{ raw, trickle bool }

func (c storedCase) String() string { return fmt.Sprintf("raw%v_trickle%v", c.raw, c.trickle) }

// layoutStored builds r's file into ds with boxo's layout, or with
// cairn's (3 chunks ahead, buffers reused when hb hands them back).
func layoutStored(t *testing.T, c storedCase, r io.Reader, ours bool, ds ipld.DAGService, hb unixfs.Handbacker) (ipld.Node, error) {
	const size = "size-65536"
	spl, err := chunker.FromString(r, size)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _ := merkledag.PrefixForCidVersion(map[bool]int{false: 0, true: 1}[c.raw])
	p := helpers.DagBuilderParams{Dagserv: ds, RawLeaves: c.raw, Maxlinks: 7, CidBuilder: prefix}
	db, err := p.New(spl)
	if err != nil {
		t.Fatal(err)
	}
	o := unixfs.LeafOptions{Raw: c.raw, ChunkSize: unixfs.FixedChunkSize(size), Window: 3, Handback: hb}
	switch {
	case !ours && c.trickle:
		return trickle.Layout(db)
	case !ours:
		return balanced.Layout(db)
	case c.trickle:
		return unixfs.TrickleLayout(db, spl, o)
	}
	return unixfs.BalancedLayout(db, spl, o)
}

// orderDAG keeps the CIDs added, in order, and their bytes.
type orderDAG struct {
	ipld.DAGService
	order []cid.Cid
	data  map[cid.Cid][]byte
}

func (d *orderDAG) Add(ctx context.Context, n ipld.Node) error {
	if d.data == nil {
		d.data = map[cid.Cid][]byte{}
	}
	d.order = append(d.order, n.Cid())
	d.data[n.Cid()] = append([]byte{}, n.RawData()...)
	return nil
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
	n, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	data := make([]byte, 12<<20+7)
	rand.New(rand.NewSource(5)).Read(data)
	for _, c := range []storedCase{{}, {raw: true, trickle: true}} {
		var want orderDAG
		wn, err := layoutStored(t, c, bytes.NewReader(data), false, &want, nil)
		if err != nil {
			t.Fatal(err)
		}
		sess := n.Storage().BeginWrite()
		hb := &countingHandback{batchDAG: newBatchDAG(ctx, n, sess)}
		gn, err := layoutStored(t, c, bytes.NewReader(data), true, hb.batchDAG, hb)
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
