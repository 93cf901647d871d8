package node_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/files"
	ipld "github.com/ipfs/go-ipld-format"
)

// cutReader yields data, then io.ErrUnexpectedEOF, as a multipart part
// does when the body ends before the part's boundary.
type cutReader struct{ data []byte }

func (c *cutReader) Read(b []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(b, c.data)
	c.data = c.data[n:]
	return n, nil
}

// cutDir lists its entries, then fails as a multipart reader does when
// the body ends before the closing boundary.
type cutDir struct {
	names []string
	nodes []files.Node
	cut   bool // the iterator met the cut
}

func (d *cutDir) Mode() os.FileMode          { return 0 }
func (d *cutDir) ModTime() time.Time         { return time.Time{} }
func (d *cutDir) Close() error               { return nil }
func (d *cutDir) Size() (int64, error)       { return 0, files.ErrNotSupported }
func (d *cutDir) Entries() files.DirIterator { return &cutIter{d: d, i: -1} }

type cutIter struct {
	d   *cutDir
	i   int
	err error
}

func (it *cutIter) Name() string     { return it.d.names[it.i] }
func (it *cutIter) Node() files.Node { return it.d.nodes[it.i] }
func (it *cutIter) Err() error       { return it.err }
func (it *cutIter) Next() bool {
	it.i++
	if it.i < len(it.d.names) {
		return true
	}
	it.err = errors.New("multipart: NextPart: EOF")
	it.d.cut = true
	return false
}

// wantNothingKept checks that a failed add left no pin and, after a
// collection, no block.
func wantNothingKept(t *testing.T, n *node.Node) {
	t.Helper()
	ctx := context.Background()
	pins, err := n.Pins().List(ctx, "all")
	if err != nil {
		t.Fatal(err)
	}
	if len(pins) != 0 {
		t.Fatalf("pins after a cut add: %v", pins)
	}
	if _, err := n.Storage().CollectGarbage(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := n.Store.BlockBytes(); got != 0 {
		t.Fatalf("%d block bytes left after a cut add and a GC", got)
	}
	mustCheck(t, n)
}

// Ensure a file whose input ends early (io.ErrUnexpectedEOF) fails the
// add and is neither pinned nor kept, whatever the chunker and pin flag.
func TestAdd_CutFileFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    node.AddOptions
	}{
		{"pin", node.AddOptions{Pin: true}},
		{"no-pin", node.AddOptions{}},
		{"buzhash", node.AddOptions{Pin: true, Chunker: "buzhash"}},
		{"rabin", node.AddOptions{Pin: true, Chunker: "rabin"}},
		{"progress", node.AddOptions{Pin: true, Progress: true}},
		{"wrap", node.AddOptions{Pin: true, Wrap: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := testutil.MustOpenNode(t)
			a, err := n.UnixFS().NewAdder(context.Background(), tc.o, func(node.AddEvent) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			f := files.NewReaderFile(&cutReader{data: randBytes(600 << 10)})
			_, err = a.AddAll(files.NewMapDirectory(map[string]files.Node{"cut.bin": f}))
			if !errors.Is(err, node.ErrInputCut) {
				t.Fatalf("add of a cut file: %v, want %v", err, node.ErrInputCut)
			}
			wantNothingKept(t, n)
		})
	}
}

// Ensure complete top-level entries are not pinned, nor handed to
// AfterTop (add --to-files), when the request fails after them.
func TestAdd_CutAfterCompleteEntries(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		n := testutil.MustOpenNode(t)
		var after []string
		o := node.AddOptions{Pin: true, Wrap: wrap}
		if !wrap {
			o.AfterTop = func(name string, _ ipld.Node) error { after = append(after, name); return nil }
		}
		var events int
		a, err := n.UnixFS().NewAdder(context.Background(), o, func(node.AddEvent) error { events++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		d := &cutDir{
			names: []string{"a", "b"},
			nodes: []files.Node{files.NewBytesFile(randBytes(300 << 10)), files.NewMapDirectory(map[string]files.Node{
				"c": files.NewBytesFile(randBytes(1000)),
			})},
		}
		if _, err := a.AddAll(d); err == nil || err.Error() != "multipart: NextPart: EOF" {
			t.Fatalf("wrap=%v: add with a cut body: %v", wrap, err)
		}
		if !d.cut {
			t.Fatal("the import stopped before the cut: the test does not exercise complete entries")
		}
		if events != 0 {
			// Results are sent only once the body is complete.
			t.Fatalf("wrap=%v: %d events sent for a failed request", wrap, events)
		}
		if len(after) != 0 {
			t.Fatalf("AfterTop ran for %v", after)
		}
		wantNothingKept(t, n)
	}
}
