package unixfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipld/unixfs/importer/balanced"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	"github.com/ipfs/boxo/ipld/unixfs/importer/trickle"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-cidutil"
	ipld "github.com/ipfs/go-ipld-format"
)

// recordDAG keeps every block added, in order.
type recordDAG struct {
	mu    sync.Mutex
	order []cid.Cid
	data  map[cid.Cid][]byte
}

func (d *recordDAG) Add(_ context.Context, n ipld.Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.data == nil {
		d.data = map[cid.Cid][]byte{}
	}
	d.order = append(d.order, n.Cid())
	d.data[n.Cid()] = n.RawData()
	return nil
}
func (d *recordDAG) AddMany(ctx context.Context, ns []ipld.Node) error {
	for _, n := range ns {
		d.Add(ctx, n)
	}
	return nil
}
func (d *recordDAG) Get(context.Context, cid.Cid) (ipld.Node, error) { return nil, errors.New("no") }
func (d *recordDAG) GetMany(context.Context, []cid.Cid) <-chan *ipld.NodeOption {
	return nil
}
func (d *recordDAG) Remove(context.Context, cid.Cid) error       { return nil }
func (d *recordDAG) RemoveMany(context.Context, []cid.Cid) error { return nil }

type layoutCase struct {
	size     int
	chunker  string
	raw      bool
	maxLinks int
	v1       bool
	mtime    bool
	trickle  bool
	inline   bool
}

func (c layoutCase) String() string {
	return fmt.Sprintf("%d_%s_raw%v_links%d_v1%v_mtime%v_trickle%v_inline%v",
		c.size, c.chunker, c.raw, c.maxLinks, c.v1, c.mtime, c.trickle, c.inline)
}

// layoutWith builds c's file from r with boxo's layout, or with cairn's
// (window chunks ahead, buffers reused when hb hands them back).
func layoutWith(t testing.TB, c layoutCase, r io.Reader, parallel bool, dag ipld.DAGService) (ipld.Node, error) {
	return layoutOpts(t, c, r, parallel, dag, 4, nil)
}

func layoutOpts(t testing.TB, c layoutCase, r io.Reader, parallel bool, dag ipld.DAGService,
	window int, hb Handbacker) (ipld.Node, error) {
	spl, err := chunker.FromString(r, c.chunker)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _ := merkledag.PrefixForCidVersion(map[bool]int{false: 0, true: 1}[c.v1])
	var b cid.Builder = prefix
	if c.inline {
		b = cidutil.InlineBuilder{Builder: prefix, Limit: 32}
	}
	p := helpers.DagBuilderParams{Dagserv: dag, RawLeaves: c.raw, Maxlinks: c.maxLinks, CidBuilder: b}
	if c.mtime {
		p.FileMode, p.FileModTime = 0o644, time.Unix(1700000000, 5)
	}
	db, err := p.New(spl)
	if err != nil {
		t.Fatal(err)
	}
	if !parallel && c.trickle {
		return trickle.Layout(db)
	}
	if !parallel {
		return balanced.Layout(db)
	}
	o := LeafOptions{Raw: c.raw, ChunkSize: FixedChunkSize(c.chunker), Window: window, Handback: hb}
	if c.trickle {
		return TrickleLayout(db, spl, o)
	}
	return BalancedLayout(db, spl, o)
}

// The layouts give boxo's block for block, in the same order, for every
// shape of tree, leaf kind and CID form, on one core and on four.
func TestBalancedLayout_MatchesBoxo(t *testing.T) {
	data := make([]byte, 3<<20+123)
	rand.New(rand.NewSource(1)).Read(data)
	const chunk = 262144
	cases := []layoutCase{
		{size: len(data), chunker: "size-262144", maxLinks: 174},
		{size: len(data), chunker: "size-262144", maxLinks: 174, mtime: true},
		{size: len(data), chunker: "size-4096", raw: true, maxLinks: 3, v1: true},
		{size: len(data), chunker: "size-1000", maxLinks: 5, mtime: true},
		{size: len(data), chunker: "rabin", raw: true, maxLinks: 11, v1: true},
		{size: len(data), chunker: "buzhash", maxLinks: 11, v1: true},
		{size: 200000, chunker: "size-1000", maxLinks: 2},
		{size: 300, chunker: "size-7", maxLinks: 3, inline: true, v1: true},
		{size: 300, chunker: "size-7", maxLinks: 3, inline: true, raw: true, v1: true, trickle: true},
		{size: 20, chunker: "size-262144", maxLinks: 174, inline: true, mtime: true},
		{size: 20, chunker: "size-262144", maxLinks: 174, inline: true, v1: true},
		{size: len(data), chunker: "size-262144", maxLinks: 174, trickle: true},
		{size: len(data), chunker: "size-1000", maxLinks: 4, trickle: true, mtime: true},
		{size: len(data), chunker: "size-4096", maxLinks: 3, trickle: true, raw: true, v1: true},
		{size: len(data), chunker: "default", maxLinks: 174},
	}
	// Around the chunk size, each way.
	for _, n := range []int{0, 1, chunk - 1, chunk, chunk + 1, 2*chunk - 1, 2 * chunk, 2*chunk + 1} {
		for _, v := range []layoutCase{{}, {raw: true, v1: true}, {v1: true}, {trickle: true}, {raw: true, trickle: true, v1: true},
			{inline: true, v1: true, raw: true}, {mtime: true}} {
			v.size, v.chunker, v.maxLinks = n, "size-262144", 174
			cases = append(cases, v)
		}
	}
	for _, procs := range []int{1, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("procs%d_%s", procs, c), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				var want, got recordDAG
				wn, err := layoutWith(t, c, bytes.NewReader(data[:c.size]), false, &want)
				if err != nil {
					t.Fatal(err)
				}
				gn, err := layoutWith(t, c, bytes.NewReader(data[:c.size]), true, &got)
				if err != nil {
					t.Fatal(err)
				}
				sameBlocks(t, gn, wn, &got, &want)
			})
		}
	}
}

func sameBlocks(t *testing.T, gn, wn ipld.Node, got, want *recordDAG) {
	t.Helper()
	if gn.Cid() != wn.Cid() {
		t.Fatalf("root %s, boxo %s", gn.Cid(), wn.Cid())
	}
	if len(got.order) != len(want.order) {
		t.Fatalf("%d blocks, boxo %d", len(got.order), len(want.order))
	}
	for i := range want.order {
		if got.order[i] != want.order[i] || !bytes.Equal(got.data[got.order[i]], want.data[want.order[i]]) {
			t.Fatalf("block %d: %s, boxo %s", i, got.order[i], want.order[i])
		}
	}
}

// With only-hash, leaf buffers are reused once added, and the blocks are
// still boxo's: a buffer is never rewritten while its leaf is in use. The
// buffers allocated stay within the window, whatever the file size.
func TestBalancedLayout_ReusesBuffers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	data := make([]byte, 8<<20+5)
	rand.New(rand.NewSource(3)).Read(data)
	for _, c := range []layoutCase{
		{size: len(data), chunker: "size-65536", maxLinks: 7},
		{size: len(data), chunker: "size-65536", maxLinks: 7, raw: true, v1: true, trickle: true},
	} {
		var want, got recordDAG
		wn, err := layoutWith(t, c, bytes.NewReader(data), false, &want)
		if err != nil {
			t.Fatal(err)
		}
		// The recording DAG copies what it keeps, so reuse is safe; the
		// hashes are checked against the bytes kept.
		copying := &handbackDAG{copyDAG: copyDAG{&got}}
		gn, err := layoutOpts(t, c, bytes.NewReader(data), true, copying, 3, copying)
		if err != nil {
			t.Fatal(err)
		}
		reused := copying.reused
		sameBlocks(t, gn, wn, &got, &want)
		for _, k := range got.order {
			if c2, err := k.Prefix().Sum(got.data[k]); err != nil || c2 != k {
				t.Fatalf("block %s holds other bytes", k)
			}
		}
		if reused < len(data)/65536-1 {
			t.Fatalf("%d buffers given back, want every leaf's", reused)
		}
	}
}

// handbackDAG is a copyDAG that hands every leaf's buffer back once it
// has copied the leaf, as hashOnlyDAG does for the leaves it drops.
type handbackDAG struct {
	copyDAG
	Handback
	reused int
}

func (d *handbackDAG) Add(ctx context.Context, n ipld.Node) error {
	err := d.copyDAG.Add(ctx, n)
	if free := d.Take(n); free != nil {
		d.reused++
		free()
	}
	return err
}

// copyDAG records copies of the blocks added.
type copyDAG struct{ *recordDAG }

func (d *copyDAG) Add(ctx context.Context, n ipld.Node) error {
	raw := append([]byte{}, n.RawData()...)
	blk, _ := blocks.NewBlockWithCid(raw, n.Cid())
	return d.recordDAG.Add(ctx, &rawBlockNode{blk})
}

// rawBlockNode is just enough of a node for recordDAG.
type rawBlockNode struct{ blocks.Block }

func (rawBlockNode) Links() []*ipld.Link                                { return nil }
func (rawBlockNode) Resolve([]string) (any, []string, error)            { return nil, nil, nil }
func (rawBlockNode) ResolveLink([]string) (*ipld.Link, []string, error) { return nil, nil, nil }
func (rawBlockNode) Tree(string, int) []string                          { return nil }
func (n rawBlockNode) Copy() ipld.Node                                  { return n }
func (rawBlockNode) Stat() (*ipld.NodeStat, error)                      { return nil, nil }
func (n rawBlockNode) Size() (uint64, error)                            { return uint64(len(n.RawData())), nil }

// The window follows the workers and the memory budget.
func TestLeafWindow(t *testing.T) {
	for _, c := range []struct{ workers, chunk, mib, want int }{
		{2, 262144, 0, 4},
		{4, 262144, 256, 8},  // pi-zero-2w: 8 chunks, 2 MiB of 256
		{4, 1 << 20, 256, 3}, // 1 MiB chunks: a 64th of 256 MiB
		{4, 262144, 128, 7},  // the smallest budget
		{1, 262144, 1024, 2}, // at least two
		{16, 262144, 1024, 32},
	} {
		if got := LeafWindow(c.workers, c.chunk, c.mib); got != c.want {
			t.Errorf("LeafWindow(%d, %d, %d) = %d, want %d", c.workers, c.chunk, c.mib, got, c.want)
		}
	}
}

type failAfter struct {
	r io.Reader
	n int
}

var errCut = errors.New("body cut")

func (f *failAfter) Read(b []byte) (int, error) {
	if f.n <= 0 {
		return 0, errCut
	}
	if len(b) > f.n {
		b = b[:f.n]
	}
	n, err := f.r.Read(b)
	f.n -= n
	return n, err
}

// A read error ends the layout with that error, and no goroutine of the
// pipeline outlives it.
func TestBalancedLayout_ReadError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	before := runtime.NumGoroutine()
	data := make([]byte, 4<<20)
	for _, cut := range []int{0, 1000, 262144, 3 << 20} {
		_, err := layoutWith(t, layoutCase{size: len(data), chunker: "size-262144", maxLinks: 174},
			&failAfter{r: bytes.NewReader(data), n: cut}, true, &recordDAG{})
		if !errors.Is(err, errCut) {
			t.Fatalf("cut at %d: err %v, want %v", cut, err, errCut)
		}
	}
	// Workers that saw the error may still be returning: wait for them,
	// but no longer than a leak would take to show.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after, %d before", n, before)
	}
}

// go test ./node/unixfs -run XXX -bench BalancedLayout -cpu 1,2: hashing and
// building leaves without storage or HTTP.
func BenchmarkBalancedLayout(b *testing.B) {
	data := make([]byte, 64<<20)
	rand.New(rand.NewSource(1)).Read(data)
	for _, raw := range []bool{false, true} {
		b.Run(fmt.Sprintf("raw=%v", raw), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for range b.N {
				if _, err := layoutWith(b, layoutCase{size: len(data), chunker: "size-262144", raw: raw, maxLinks: 174, v1: raw},
					bytes.NewReader(data), true, &dropDAG{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// dropDAG keeps nothing and hands every leaf's buffer back at once, as
// an only-hash import does.
type dropDAG struct {
	recordDAG
	Handback
}

func (d *dropDAG) Add(_ context.Context, n ipld.Node) error {
	if free := d.Take(n); free != nil {
		free()
	}
	return nil
}

// eofCounter counts the reads that return io.EOF.
type eofCounter struct {
	r    io.Reader
	eofs int
}

func (e *eofCounter) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err == io.EOF {
		e.eofs++
	}
	return n, err
}

// The input's end is read once, as boxo's chunker reads it: add's
// progress events are sent at each io.EOF.
func TestBalancedLayout_ReadsEndOnce(t *testing.T) {
	data := make([]byte, 3*65536)
	for _, n := range []int{0, 5, 65536, 65537, len(data)} {
		for _, tr := range []bool{false, true} {
			r := &eofCounter{r: bytes.NewReader(data[:n])}
			c := layoutCase{size: n, chunker: "size-65536", maxLinks: 174, trickle: tr}
			if _, err := layoutWith(t, c, r, true, &recordDAG{}); err != nil {
				t.Fatal(err)
			}
			if r.eofs != 1 {
				t.Errorf("%d bytes, trickle %v: io.EOF read %d times, want 1", n, tr, r.eofs)
			}
		}
	}
}

// Ensure a small file's leaf (and a file's short last chunk) holds a
// buffer of its own size, not a whole chunk's: the blocks of a directory
// of many small files wait for the store's commit together.
func TestBalancedLayout_SmallLeafOwnsSmallBuffer(t *testing.T) {
	data := make([]byte, 2*262144+100)
	rand.New(rand.NewSource(2)).Read(data)
	for _, c := range []layoutCase{
		{size: 100, chunker: "size-262144", maxLinks: 174, raw: true, v1: true},
		{size: 100, chunker: "size-262144", maxLinks: 174},
		{size: len(data), chunker: "size-262144", maxLinks: 174, raw: true, v1: true},
	} {
		var got recordDAG
		if _, err := layoutWith(t, c, bytes.NewReader(data[:c.size]), true, &got); err != nil {
			t.Fatal(err)
		}
		for k, b := range got.data {
			if len(b) < 1024 && cap(b) > 1024 {
				t.Errorf("%s: block %s of %d bytes holds a buffer of %d", c, k, len(b), cap(b))
			}
		}
	}
}
