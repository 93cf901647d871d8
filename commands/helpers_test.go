package commands_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	format "github.com/ipfs/go-ipld-format"
)

// mustCall runs a command in-process and fails the test on error.
func mustCall(t *testing.T, n *node.Node, path string, args []string, opts map[string]string, dir files.Directory) *rpc.Result {
	t.Helper()
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, path, args, opts, dir)
	if err != nil {
		t.Fatalf("%s %v: %v", path, args, err)
	}
	return res
}

// callErr runs a command in-process and returns its error (nil fails).
func callErr(t *testing.T, n *node.Node, path string, args []string, opts map[string]string, dir files.Directory) error {
	t.Helper()
	_, err := rpc.Call(context.Background(), n, commands.DefaultTable, path, args, opts, dir)
	if err == nil {
		t.Fatalf("%s %v %v: expected an error", path, args, opts)
	}
	return err
}

// addTree adds each entry of m as a top-level entry and returns the CID
// of the last event (the top entry added last).
func addTree(t *testing.T, n *node.Node, opts map[string]string, m map[string]files.Node) string {
	t.Helper()
	res := mustCall(t, n, "add", nil, opts, files.NewMapDirectory(m))
	last := res.Values[len(res.Values)-1].(*node.AddEvent)
	if last.Hash == "" {
		t.Fatalf("add: last event has no hash: %+v", last)
	}
	return last.Hash
}

// rpcPost posts to /api/v0/<path> with query q and an optional body.
func rpcPost(t *testing.T, srv *testutil.Server, path string, q url.Values, body io.Reader, contentType string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v0/"+path+"?"+q.Encode(), body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readAll reads a response body.
func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantErrorJSON checks a JSON error response.
func wantErrorJSON(t *testing.T, resp *http.Response, status int, msg string) {
	t.Helper()
	b := readAll(t, resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d (body %s)", resp.StatusCode, status, b)
	}
	var we struct {
		Message string
		Code    int
		Type    string
	}
	if err := json.Unmarshal(b, &we); err != nil {
		t.Fatalf("error body %q: %v", b, err)
	}
	if we.Message != msg || we.Type != "error" {
		t.Fatalf("error %+v, want message %q", we, msg)
	}
}

// wantErr checks that err's message is msg.
func wantErr(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil || err.Error() != msg {
		t.Fatalf("error %v, want %q", err, msg)
	}
}

// wantErrPrefix checks that err's message starts with prefix.
func wantErrPrefix(t *testing.T, err error, prefix string) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("error %v, want prefix %q", err, prefix)
	}
}

// notFound starts the error of a read of a block that a test node (no
// network, as Kubo's offline node) lacks.
const notFound = "block was not found locally (offline): ipld: could not find "

// The fuzz targets of the outside inputs (a CAR, a tar, dag-json and
// dag-cbor, a config document, a multipart add; in the test files of their
// families) feed them to their commands on a node with real storage.
// Whatever the input, the command answers a value or an error (a panic
// fails the target), the canary file added before stays whole and pinned,
// a failed command leaves the pins as they were, and the store passes its
// check at the end. `make fuzz` runs each for a short time; plain `go test`
// runs the seeds.

// fuzzNode opens a node with a pinned canary file and returns a check
// of the invariants to run after each input.
func fuzzNode(f *testing.F) (*node.Node, func(t *testing.T, err error, pinsBefore int)) {
	n := testutil.MustOpenNode(f)
	canary := bytes.Repeat([]byte("canary "), 40000) // several blocks
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil, nil,
		files.NewMapDirectory(map[string]files.Node{"canary": files.NewBytesFile(canary)}))
	if err != nil {
		f.Fatal(err)
	}
	root := res.Values[len(res.Values)-1].(*node.AddEvent).Hash
	c, err := cid.Decode(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		if errs := n.Store.Check(storage.CheckOptions{}); len(errs) > 0 {
			f.Errorf("store check after fuzzing: %v", errs)
		}
	})
	return n, func(t *testing.T, err error, pinsBefore int) {
		t.Helper()
		if err != nil && (strings.Contains(err.Error(), "panic") || err.Error() == "") {
			t.Fatalf("unclear error: %q", err)
		}
		if got, err := rpc.Call(context.Background(), n, commands.DefaultTable, "cat", []string{root}, nil, nil); err != nil || !bytes.Equal(got.Bytes, canary) {
			t.Fatalf("canary unreadable or changed: %v", err)
		}
		if ok, err := n.Pins().IsRecursive(context.Background(), c); !ok || err != nil {
			t.Fatalf("canary no longer pinned: %v", err)
		}
		if err != nil {
			if now := pinCount(t, n); now != pinsBefore {
				t.Fatalf("a failed command changed the pins: %d then %d", pinsBefore, now)
			}
		}
	}
}

func oneFile(name string, data []byte) files.Directory {
	return files.NewMapDirectory(map[string]files.Node{name: files.NewBytesFile(data)})
}

// sparseTar is an old-GNU sparse archive of one file of size bytes:
// zeros but its last byte, which is 'x'. It takes 2 KiB.
func sparseTar(size int64) []byte {
	h := make([]byte, 512)
	copy(h, "sparse.bin")
	field := func(off, n int, v int64) { copy(h[off:off+n], fmt.Sprintf("%0*o\x00", n-1, v)) }
	field(100, 8, 0o644)
	field(108, 8, 0)
	field(116, 8, 0)
	field(124, 12, 1) // stored bytes
	field(136, 12, 0)
	h[156] = 'S'
	copy(h[257:], "ustar  \x00")
	field(386, 12, size-1) // the one stored region: offset, length
	field(398, 12, 1)
	field(483, 12, size) // real size
	copy(h[148:156], "        ")
	sum := 0
	for _, b := range h {
		sum += int(b)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
	data := make([]byte, 512)
	data[0] = 'x'
	return append(append(h, data...), make([]byte, 1024)...)
}

// waitStopped waits until no goroutine runs fn (a stack frame naming
// it), and fails after timeout.
func waitStopped(t *testing.T, fn string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 1<<20)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, fn) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still running %v after the client left:\n%s", fn, timeout, stacks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cpuTime is the CPU time this process used so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// gcCPUTime is the CPU the Go collector has taken so far (the runtime's
// estimate as of its last collection).
func gcCPUTime() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

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
	// A wait, not a timing claim: the server sees the hang-up only once it
	// has read what the client's kernel still held of the body, which
	// waits for the store's writer; commits on a loaded machine's disk can
	// take seconds each.
	waitStopped(t, fn, 60*time.Second)
	var before int64
	if progress != nil {
		before = progress()
	}
	// The collector's CPU is not the command's: it frees what the
	// command left (under -race, seconds of it for a large body). A cycle
	// under way is finished first, since the runtime counts a cycle's CPU
	// only at its end, and the memory is given back (the scavenger's CPU).
	debug.FreeOSMemory()
	cpu, gc := cpuTime(t), gcCPUTime()
	time.Sleep(time.Second)
	if progress != nil {
		if now := progress(); now != before {
			t.Fatalf("work went on after the client left: %d then %d", before, now)
		}
	}
	if d, g := cpuTime(t)-cpu, gcCPUTime()-gc; d-g > 300*time.Millisecond {
		t.Fatalf("%v of CPU in the second after the command stopped, %v of it the collector's", d, g)
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

// storedBlocks counts the store's blocks once its writer has committed
// what was already queued: blocks a command handed the store before its
// client left are written (a bounded queue, Budget.StorePendingMiB);
// what must not happen is more of them after that.
func storedBlocks(n *node.Node) func() int64 {
	return func() int64 {
		for deadline := time.Now().Add(30 * time.Second); n.Store.PendingBytes() > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		st, _ := n.Store.Stat()
		return int64(st.NumBlocks)
	}
}

func addBytes(t *testing.T, n *node.Node, data []byte, opts map[string]string) cid.Cid {
	t.Helper()
	dir := files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile(data)})
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil, opts, dir)
	if err != nil {
		t.Fatal(err)
	}
	last := res.Values[len(res.Values)-1].(*node.AddEvent)
	return cid.MustParse(last.Hash)
}
