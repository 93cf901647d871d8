package commands_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/filestore"
	"github.com/ipfs/go-cid"
)

func setConfigBool(t *testing.T, n *node.Node, key string, v bool) {
	t.Helper()
	val := "false"
	if v {
		val = "true"
	}
	mustCall(t, n, "config", []string{key, val}, map[string]string{"bool": "true"}, nil)
}

// diskFile writes data to a file under the filestore root (the parent of
// the repo directory) and returns its absolute path.
func diskFile(t *testing.T, n *node.Node, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(n.Storage().FilestoreRoot(), "data", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pathFile is a file argument that carries its path on disk, as a
// multipart part with an Abspath header does.
func pathFile(t *testing.T, name, p string) files.Directory {
	t.Helper()
	return files.NewMapDirectory(map[string]files.Node{name: pathNode(t, p)})
}

func pathNode(t *testing.T, p string) files.Node {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	rf, err := files.NewReaderPathFile(p, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rf
}

func listRes(t *testing.T, n *node.Node, path string, args []string, opts map[string]string) []*filestore.ListRes {
	t.Helper()
	var out []*filestore.ListRes
	for _, v := range mustCall(t, n, path, args, opts, nil).Values {
		out = append(out, v.(*filestore.ListRes))
	}
	return out
}

// byOffset returns entries sorted by offset.
func byOffset(rs []*filestore.ListRes) []*filestore.ListRes {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Offset < rs[j].Offset })
	return rs
}

// Ensure --nocopy and the filestore commands are refused while the
// filestore is off, with Kubo's errors.
func TestFilestore_Disabled(t *testing.T) {
	n := testutil.MustOpenNode(t)
	p := diskFile(t, n, "f", []byte("data"))
	wantErr(t, callErr(t, n, "add", nil, map[string]string{"nocopy": "true"}, pathFile(t, "f", p)),
		"either the filestore or the urlstore must be enabled to use nocopy, see: https://github.com/ipfs/kubo/blob/master/docs/experimental-features.md#ipfs-filestore")
	for _, cmd := range []string{"filestore/ls", "filestore/verify", "filestore/dups"} {
		wantErr(t, callErr(t, n, cmd, nil, nil, nil), "filestore is not enabled, see https://git.io/vNItf")
	}
	setConfigBool(t, n, "Experimental.FilestoreEnabled", true)
	wantErr(t, callErr(t, n, "add", nil, map[string]string{"nocopy": "true", "raw-leaves": "false"}, pathFile(t, "f", p)),
		"nocopy option requires '--raw-leaves' to be enabled as well")
	// A file outside the root (the repo's parent directory) is refused.
	out, err := os.MkdirTemp("", "cairn-outside")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	op := filepath.Join(out, "f")
	os.WriteFile(op, []byte("outside"), 0o644)
	wantErr(t, callErr(t, n, "add", nil, map[string]string{"nocopy": "true"}, pathFile(t, "f", op)),
		"cannot add filestore references outside ipfs root ("+n.Storage().FilestoreRoot()+")")
	// Without a path (stdin) there is nothing to reference.
	wantErrPrefix(t, callErr(t, n, "add", nil, map[string]string{"nocopy": "true"}, files.NewMapDirectory(map[string]files.Node{
		"x": files.NewBytesFile([]byte("x"))})), "missing file path or URL")
}

// Ensure add --nocopy stores references instead of bytes, cat reads
// through them, and verify reports changed (12) and removed (11) files.
func TestFilestore_AddCatVerify(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	setConfigBool(t, n, "Experimental.FilestoreEnabled", true)
	data := noise(600 << 10)
	p := diskFile(t, n, "big.bin", data)
	before := n.Store.BlockBytes()
	res := mustCall(t, n, "add", nil, map[string]string{"nocopy": "true"}, pathFile(t, "big.bin", p))
	root := res.Values[len(res.Values)-1].(*node.AddEvent).Hash
	// Only the root node (a few hundred bytes) went into the block store.
	if grown := n.Store.BlockBytes() - before; grown > 4096 {
		t.Fatalf("block store grew by %d bytes for a nocopy add", grown)
	}
	// Same CID as a normal add with raw leaves.
	if c := addTree(t, n, map[string]string{"raw-leaves": "true", "only-hash": "true"}, map[string]files.Node{"x": files.NewBytesFile(data)}); c != root {
		t.Fatalf("nocopy root %s, raw-leaves add %s", root, c)
	}
	if got := mustCall(t, n, "cat", []string{root}, nil, nil).Bytes; !bytes.Equal(got, data) {
		t.Fatal("cat through the filestore differs")
	}

	ls := byOffset(listRes(t, n, "filestore/ls", nil, nil))
	if len(ls) != 3 {
		t.Fatalf("filestore ls: %d entries", len(ls))
	}
	for i, want := range []struct{ off, size uint64 }{{0, 262144}, {262144, 262144}, {524288, 90112}} {
		r := ls[i]
		if r.Status != filestore.StatusOk || r.FilePath != "data/big.bin" || r.Offset != want.off || r.Size != want.size || r.Key.Prefix().Codec != cid.Raw {
			t.Fatalf("entry %d: %+v", i, r)
		}
		if has, _ := n.Blocks.Blockstore.Has(ctx, r.Key); has {
			t.Fatalf("leaf %s was copied into the block store", r.Key)
		}
	}
	fo := listRes(t, n, "filestore/ls", nil, map[string]string{"file-order": "true"})
	for i := range fo {
		if fo[i].Offset != ls[i].Offset {
			t.Fatalf("file-order: %d at position %d", fo[i].Offset, i)
		}
	}
	for _, r := range listRes(t, n, "filestore/verify", nil, nil) {
		if r.Status != filestore.StatusOk {
			t.Fatalf("verify before change: %+v", r)
		}
	}

	// Change one byte in the second chunk.
	changed := append([]byte(nil), data...)
	changed[300000] ^= 0xff
	os.WriteFile(p, changed, 0o644)
	status := map[uint64]filestore.Status{}
	for _, r := range listRes(t, n, "filestore/verify", nil, nil) {
		status[r.Offset] = r.Status
	}
	if status[0] != filestore.StatusOk || status[262144] != filestore.StatusFileChanged || status[524288] != filestore.StatusOk {
		t.Fatalf("verify after change: %v", status)
	}
	wantErrPrefix(t, callErr(t, n, "cat", []string{root}, nil, nil), "data in file did not match. data/big.bin offset 262144")
	one := listRes(t, n, "filestore/verify", []string{ls[1].Key.String()}, nil)
	if len(one) != 1 || one[0].Status != filestore.StatusFileChanged || one[0].ErrorMsg == "" {
		t.Fatalf("verify one: %+v", one)
	}
	// A shorter file: the last chunks cannot be read whole.
	os.WriteFile(p, data[:300000], 0o644)
	status = map[uint64]filestore.Status{}
	for _, r := range listRes(t, n, "filestore/verify", nil, nil) {
		status[r.Offset] = r.Status
	}
	if status[0] != filestore.StatusOk || status[262144] != filestore.StatusFileChanged || status[524288] != filestore.StatusFileChanged {
		t.Fatalf("verify after truncation: %v", status)
	}
	// Removed file.
	os.Remove(p)
	for _, r := range listRes(t, n, "filestore/verify", nil, nil) {
		if r.Status != filestore.StatusFileNotFound || !strings.Contains(r.ErrorMsg, "no such file") {
			t.Fatalf("verify after removal: %+v", r)
		}
	}
	// Arguments: not a CID (20), not in the filestore (30).
	rs := listRes(t, n, "filestore/verify", []string{"notacid", "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"}, nil)
	if len(rs) != 2 || rs[0].Status != filestore.StatusOtherError || !strings.HasPrefix(rs[0].ErrorMsg, "notacid: ") || rs[1].Status != filestore.StatusKeyNotFound {
		t.Fatalf("verify args: %+v %+v", rs[0], rs[1])
	}
	// remove-bad-blocks drops the references.
	listRes(t, n, "filestore/verify", nil, map[string]string{"remove-bad-blocks": "true"})
	if rs := listRes(t, n, "filestore/ls", nil, nil); len(rs) != 0 {
		t.Fatalf("after remove-bad-blocks: %d entries", len(rs))
	}
}

// Ensure dups, fscache and GC of references.
func TestFilestore_DupsFscacheGC(t *testing.T) {
	n := testutil.MustOpenNode(t)
	setConfigBool(t, n, "Experimental.FilestoreEnabled", true)
	data := noise(300 << 10)
	p := diskFile(t, n, "f.bin", data)
	root := addTree(t, n, map[string]string{"nocopy": "true"}, map[string]files.Node{"f.bin": pathNode(t, p)})
	// fscache: blocks already referenced are not stored again.
	mustCall(t, n, "add", nil, map[string]string{"fscache": "true", "raw-leaves": "true"}, files.NewMapDirectory(map[string]files.Node{"x": files.NewBytesFile(data)}))
	if d := mustCall(t, n, "filestore/dups", nil, nil, nil).Values; len(d) != 0 {
		t.Fatalf("dups after fscache add: %v", d)
	}
	// A plain add copies them: now they are duplicates.
	copyRoot := addTree(t, n, map[string]string{"raw-leaves": "true"}, map[string]files.Node{"x": files.NewBytesFile(data)})
	if copyRoot != root {
		t.Fatalf("copy %s, nocopy %s", copyRoot, root)
	}
	dups := mustCall(t, n, "filestore/dups", nil, nil, nil).Values
	if len(dups) != 2 {
		t.Fatalf("dups: %d", len(dups))
	}
	for _, d := range dups {
		if rw := d.(*commands.RefWrapper); !strings.HasPrefix(rw.Ref, "bafkrei") || rw.Err != "" {
			t.Fatalf("dup %+v", rw)
		}
	}
	// While pinned the references survive GC; unpinned they are collected.
	mustCall(t, n, "repo/gc", nil, nil, nil)
	if rs := listRes(t, n, "filestore/ls", nil, nil); len(rs) != 2 {
		t.Fatalf("after gc with pin: %d entries", len(rs))
	}
	mustCall(t, n, "pin/rm", []string{root}, nil, nil)
	mustCall(t, n, "repo/gc", nil, nil, nil)
	if rs := listRes(t, n, "filestore/ls", nil, nil); len(rs) != 0 {
		t.Fatalf("after gc without pin: %d entries", len(rs))
	}

	// --nocopy --to-files: MFS refers to the reference, copies nothing,
	// and keeps it through GC without a pin.
	sp := diskFile(t, n, "s.txt", []byte("small file"))
	mustCall(t, n, "add", nil, map[string]string{"nocopy": "true", "pin": "false", "to-files": "/s.txt"}, pathFile(t, "s.txt", sp))
	mustCall(t, n, "repo/gc", nil, nil, nil)
	if got := filesRead(t, n, "/s.txt", nil); string(got) != "small file" {
		t.Fatalf("/s.txt: %q", got)
	}
	if rs := listRes(t, n, "filestore/ls", nil, nil); len(rs) != 1 || rs[0].FilePath != "data/s.txt" {
		t.Fatalf("references after --to-files and gc: %+v", rs)
	}
	if d := mustCall(t, n, "filestore/dups", nil, nil, nil).Values; len(d) != 0 {
		t.Fatalf("MFS copied the referenced block: %v", d)
	}
}

// Ensure the HTTP path: a multipart part's Abspath header makes the
// reference, and filestore/ls streams Kubo's entry shape.
func TestFilestore_HTTP_Abspath(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	setConfigBool(t, n, "Experimental.FilestoreEnabled", true)
	data := noise(1000)
	p := diskFile(t, n, "small.bin", data)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="small.bin"`)
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Abspath-Encoded", url.QueryEscape(p))
	pw, _ := mw.CreatePart(h)
	pw.Write(data)
	mw.Close()
	resp := rpcPost(t, srv, "add", url.Values{"nocopy": {"true"}}, &body, mw.FormDataContentType())
	var ev node.AddEvent
	if err := json.Unmarshal(readAll(t, resp.Body), &ev); err != nil || !strings.HasPrefix(ev.Hash, "bafkrei") {
		t.Fatalf("add: %+v %v", ev, err)
	}
	resp = rpcPost(t, srv, "filestore/ls", nil, nil, "")
	want := `{"Status":0,"ErrorMsg":"","Key":{"/":"` + ev.Hash + `"},"FilePath":"data/small.bin","Offset":0,"Size":1000}` + "\n"
	if got := string(readAll(t, resp.Body)); got != want || resp.Header.Get("X-Chunked-Output") != "1" {
		t.Fatalf("filestore/ls: %q, want %q", got, want)
	}
	os.Remove(p)
	resp = rpcPost(t, srv, "filestore/verify", url.Values{"encoding": {"text"}}, nil, "")
	if got := string(readAll(t, resp.Body)); !strings.HasPrefix(got, "no-file ") || !strings.Contains(got, " data/small.bin 0") {
		t.Fatalf("verify text: %q", got)
	}
}

// Ensure urlstore add references a URL (a server on 127.0.0.1) and reads
// it back by byte ranges; errors follow Kubo's.
func TestUrlstore_Add(t *testing.T) {
	n := testutil.MustOpenNode(t)
	data := noise(700 << 10)
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/data.bin":
			http.ServeContent(w, r, "data.bin", time.Time{}, bytes.NewReader(data))
		case "/stall":
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	u := ts.URL + "/data.bin"
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("test server not on loopback: %s", u)
	}
	wantErr(t, callErr(t, n, "urlstore/add", []string{u}, nil, nil),
		"either the filestore or the urlstore must be enabled to use nocopy, see: https://github.com/ipfs/kubo/blob/master/docs/experimental-features.md#ipfs-filestore")
	setConfigBool(t, n, "Experimental.FilestoreEnabled", true)
	wantErr(t, callErr(t, n, "urlstore/add", []string{u}, nil, nil), "urlstore is not enabled")
	setConfigBool(t, n, "Experimental.UrlstoreEnabled", true)
	wantErr(t, callErr(t, n, "urlstore/add", []string{"ftp://x/y"}, nil, nil), "unsupported url syntax: ftp://x/y")
	wantErr(t, callErr(t, n, "urlstore/add", []string{ts.URL + "/missing"}, nil, nil), "got non-2XX status code 404: "+ts.URL+"/missing")

	st := mustCall(t, n, "urlstore/add", []string{u}, nil, nil).Values[0].(*commands.BlockStat)
	if st.Size != len(data) {
		t.Fatalf("size %d", st.Size)
	}
	want := addTree(t, n, map[string]string{"cid-version": "1", "only-hash": "true"}, map[string]files.Node{"x": files.NewBytesFile(data)})
	if st.Key != want {
		t.Fatalf("urlstore key %s, add --cid-version=1 %s", st.Key, want)
	}
	if ok, err := n.Pins().IsRecursive(context.Background(), cid.MustParse(st.Key)); err != nil || !ok {
		t.Fatalf("not pinned: %v", err)
	}
	hits.Store(0)
	if got := mustCall(t, n, "cat", []string{st.Key}, nil, nil).Bytes; !bytes.Equal(got, data) {
		t.Fatal("cat through the urlstore differs")
	}
	if h := hits.Load(); h != 3 {
		t.Fatalf("cat made %d range requests, want 3 (one per chunk)", h)
	}
	for _, r := range listRes(t, n, "filestore/verify", nil, nil) {
		if r.Status != filestore.StatusOk || r.FilePath != u {
			t.Fatalf("verify url entry: %+v", r)
		}
	}

	// Size cap and stall timeout.
	defer func(m int64, d time.Duration) { node.URLStoreMaxSize, node.URLStoreTimeout = m, d }(node.URLStoreMaxSize, node.URLStoreTimeout)
	node.URLStoreMaxSize = 1000
	wantErr(t, callErr(t, n, "urlstore/add", []string{u}, map[string]string{"pin": "false"}, nil),
		u+" is 716800 bytes, over the urlstore limit of 1000 bytes")
	node.URLStoreMaxSize = 16 << 30
	node.URLStoreTimeout = 200 * time.Millisecond
	start := time.Now()
	err := callErr(t, n, "urlstore/add", []string{ts.URL + "/stall"}, nil, nil)
	if !strings.Contains(err.Error(), "no data for 200ms") || time.Since(start) > 5*time.Second {
		t.Fatalf("stall: %v after %s", err, time.Since(start))
	}
}
