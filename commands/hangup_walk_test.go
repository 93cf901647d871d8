package commands_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/ipld/merkledag"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	format "github.com/ipfs/go-ipld-format"
	"github.com/multiformats/go-varint"
)

// putAll stores bs in batches.
func putAll(t *testing.T, n *node.Node, bs []blocks.Block) {
	t.Helper()
	for len(bs) > 0 {
		k := min(len(bs), 8192)
		if err := n.Blocks.PutMany(context.Background(), bs[:k]); err != nil {
			t.Fatal(err)
		}
		bs = bs[k:]
	}
}

// wideDAG stores a dag-pb root over fan nodes of leaves raw leaves each
// (all distinct) and returns the root.
func wideDAG(t *testing.T, n *node.Node, fan, leaves int) cid.Cid {
	t.Helper()
	root := merkledag.NodeWithData(nil)
	var all []blocks.Block
	for i := 0; i < fan; i++ {
		mid := merkledag.NodeWithData(nil)
		for j := 0; j < leaves; j++ {
			leaf := merkledag.NewRawNode([]byte(fmt.Sprintf("leaf %d %d", i, j)))
			all = append(all, leaf)
			if err := mid.AddRawLink(fmt.Sprint(j), &format.Link{Cid: leaf.Cid()}); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, mid)
		if err := root.AddNodeLink(fmt.Sprint(i), mid); err != nil {
			t.Fatal(err)
		}
	}
	putAll(t, n, append(all, root))
	return root.Cid()
}

// deepDAG stores a chain of depth dag-pb nodes, each linking twice to the
// next: 2^depth paths over depth+1 blocks.
func deepDAG(t *testing.T, n *node.Node, depth int) cid.Cid {
	t.Helper()
	var all []blocks.Block
	leaf := merkledag.NewRawNode([]byte("bottom"))
	all = append(all, leaf)
	below := leaf.Cid()
	for i := 0; i < depth; i++ {
		nd := merkledag.NodeWithData(nil)
		nd.AddRawLink("a", &format.Link{Cid: below})
		nd.AddRawLink("b", &format.Link{Cid: below})
		all = append(all, nd)
		below = nd.Cid()
	}
	putAll(t, n, all)
	return below
}

// hangupMidway sends the raw HTTP request req (head and body) on a new
// connection, waits until a goroutine runs fn (the command's work), hangs
// up, and then checks that fn stops within 2 s, that progress (nil: not
// checked) stays still in the second after, that the process uses no CPU
// to speak of in that second, and that no goroutine is left over.
func hangupMidway(t *testing.T, srv *testutil.Server, req []byte, fn string, progress func() int64) {
	t.Helper()
	testutil.PostURL(t, srv.URL+"/api/v0/version", nil)
	time.Sleep(100 * time.Millisecond)
	base := runtime.NumGoroutine()
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	go func() { c.Write(req) }()
	deadline := time.Now().Add(20 * time.Second)
	buf := make([]byte, 1<<20)
	for !strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never started", fn)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // under way
	c.Close()
	waitStopped(t, fn, 10*time.Second) // a wait, not a timing claim: a batch commit under -race on a loaded machine can take seconds
	var before int64
	if progress != nil {
		before = progress()
	}
	cpu := cpuTime(t)
	time.Sleep(time.Second)
	if progress != nil {
		if now := progress(); now != before {
			t.Fatalf("work went on after the client left: %d then %d", before, now)
		}
	}
	if d := cpuTime(t) - cpu; d > 300*time.Millisecond {
		t.Fatalf("%v of CPU in the second after the command stopped", d)
	}
	if g := runtime.NumGoroutine(); g > base+2 {
		t.Fatalf("%d goroutines after the client left, %d before", g, base)
	}
}

func httpPost(path string, body []byte, contentType string) []byte {
	head := fmt.Sprintf("POST /api/v0/%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n", path, len(body))
	if contentType != "" {
		head += "Content-Type: " + contentType + "\r\n"
	}
	return append([]byte(head+"\r\n"), body...)
}

func storedBlocks(n *node.Node) func() int64 {
	return func() int64 {
		st, _ := n.Store.Stat()
		return int64(st.NumBlocks)
	}
}

// Ensure refs -r stops when its client hangs up, on a DAG of 2^60 paths.
func TestHangup_StopsRefs(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root := deepDAG(t, n, 60)
	hangupMidway(t, srv, httpPost("refs?recursive=true&arg="+root.String(), nil, ""), "refWriter", nil)
}

// Ensure dag/export and pin/add stop when their client hangs up, on a
// DAG of 400,000 blocks.
func TestHangup_StopsExportAndPin(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root := wideDAG(t, n, 400, 1000)
	t.Run("dag/export", func(t *testing.T) {
		hangupMidway(t, srv, httpPost("dag/export?arg="+root.String(), nil, ""), "ExportCAR", nil)
	})
	t.Run("pin/add", func(t *testing.T) {
		hangupMidway(t, srv, httpPost("pin/add?arg="+root.String(), nil, ""), "AddPin", nil)
		if ok, _ := n.IsPinnedRecursive(context.Background(), root); ok {
			t.Fatal("pin/add finished although its client left")
		}
	})
}

// Ensure repo/gc stops when its client hangs up: no more blocks removed.
func TestHangup_StopsGC(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	wideDAG(t, n, 400, 1000) // unpinned: all garbage
	hangupMidway(t, srv, httpPost("repo/gc?silent=true", nil, ""), "CollectGarbage", storedBlocks(n))
	if st, _ := n.Store.Stat(); st.NumBlocks == 0 {
		t.Fatal("GC removed every block although its client left")
	}
}

// Ensure dag/import stops when its client hangs up: a CAR of 400,000
// blocks, the connection closed while it streams.
func TestHangup_StopsCARImport(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	var car bytes.Buffer
	leaf0 := merkledag.NewRawNode([]byte("leaf 0"))
	hdr := []byte("\xa2eroots\x81\xd8*X%\x00" + string(leaf0.Cid().Bytes()) + "gversion\x01")
	car.Write(varint.ToUvarint(uint64(len(hdr))))
	car.Write(hdr)
	for i := 0; i < 400000; i++ {
		b := merkledag.NewRawNode([]byte(fmt.Sprintf("leaf %d", i)))
		sec := append(b.Cid().Bytes(), b.RawData()...)
		car.Write(varint.ToUvarint(uint64(len(sec))))
		car.Write(sec)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "big.car")
	io.Copy(w, &car)
	mw.Close()
	hangupMidway(t, srv, httpPost("dag/import", body.Bytes(), mw.FormDataContentType()), "CarImporter", storedBlocks(n))
	if ok, _ := n.IsPinnedRecursive(context.Background(), leaf0.Cid()); ok {
		t.Fatal("the root of a cut CAR import is pinned")
	}
}
