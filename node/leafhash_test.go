package node

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
	"github.com/ipfs/go-cid"
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
}

func layoutWith(t testing.TB, c layoutCase, r io.Reader, parallel bool, dag ipld.DAGService) (ipld.Node, error) {
	spl, err := chunker.FromString(r, c.chunker)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _ := merkledag.PrefixForCidVersion(map[bool]int{false: 0, true: 1}[c.v1])
	p := helpers.DagBuilderParams{Dagserv: dag, RawLeaves: c.raw, Maxlinks: c.maxLinks, CidBuilder: prefix}
	if c.mtime {
		p.FileMode, p.FileModTime = 0o644, time.Unix(1700000000, 5)
	}
	db, err := p.New(spl)
	if err != nil {
		t.Fatal(err)
	}
	if parallel {
		return balancedLayout(db, spl, false)
	}
	return balanced.Layout(db)
}

// The parallel layout gives boxo's balanced layout block for block, in the
// same order, for every shape of tree.
func TestBalancedLayout_MatchesBoxo(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	data := make([]byte, 3<<20+123)
	rand.New(rand.NewSource(1)).Read(data)
	for _, c := range []layoutCase{
		{0, "size-262144", false, 174, false, false},
		{1, "size-262144", false, 174, false, false},
		{262144, "size-262144", false, 174, false, false},
		{262145, "size-262144", true, 174, true, false},
		{len(data), "size-262144", false, 174, false, false},
		{len(data), "size-262144", false, 174, false, true},
		{len(data), "size-4096", true, 3, true, false},
		{len(data), "size-1000", false, 5, false, true},
		{len(data), "rabin", true, 11, true, false},
		{200000, "size-1000", false, 2, false, false},
	} {
		t.Run(fmt.Sprintf("%d_%s_raw%v_links%d_v1%v_mtime%v", c.size, c.chunker, c.raw, c.maxLinks, c.v1, c.mtime), func(t *testing.T) {
			var want, got recordDAG
			wn, err := layoutWith(t, c, bytes.NewReader(data[:c.size]), false, &want)
			if err != nil {
				t.Fatal(err)
			}
			gn, err := layoutWith(t, c, bytes.NewReader(data[:c.size]), true, &got)
			if err != nil {
				t.Fatal(err)
			}
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
		})
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
		_, err := layoutWith(t, layoutCase{len(data), "size-262144", false, 174, false, false},
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

// go test ./node -run XXX -bench BalancedLayout -cpu 1,2: hashing and
// building leaves without storage or HTTP; with one CPU the parallel
// layout is boxo's.
func BenchmarkBalancedLayout(b *testing.B) {
	data := make([]byte, 64<<20)
	rand.New(rand.NewSource(1)).Read(data)
	for _, raw := range []bool{false, true} {
		b.Run(fmt.Sprintf("raw=%v", raw), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for range b.N {
				if _, err := layoutWith(b, layoutCase{len(data), "size-262144", raw, 174, raw, false},
					bytes.NewReader(data), true, newHashOnlyDAG(context.Background())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
