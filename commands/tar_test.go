package commands_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	dag "github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"
)

// tarOf writes entries with Go's archive/tar (as GNU tar would lay
// them out: directories before their content).
func tarOf(t *testing.T, entries []tar.Header, content map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		h := h
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(content[h.Name]))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(content[h.Name]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarAdd(t *testing.T, n *node.Node, data []byte, opts map[string]string) *node.AddEvent {
	t.Helper()
	dir := files.NewSliceDirectory([]files.DirEntry{files.FileEntry("files.tar", files.NewBytesFile(data))})
	res := mustCall(t, n, "tar/add", nil, opts, dir)
	if len(res.Values) != 1 {
		t.Fatalf("tar add: %d values", len(res.Values))
	}
	return res.Values[0].(*node.AddEvent)
}

func TestTarAddCat_RoundTrip(t *testing.T) {
	n := testutil.MustOpenNode(t)
	mt := time.Unix(1700000000, 0)
	big := blkPattern(700000) // several rabin chunks
	content := map[string][]byte{"foo/a": blkPattern(10000), "foo/bar/baz": []byte("baz\n"), "foo/script": []byte("exit\n"), "foo/big": big, "foo/empty": nil}
	entries := []tar.Header{
		{Name: "foo/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mt},
		{Name: "foo/a", Typeflag: tar.TypeReg, Mode: 0o644, ModTime: mt},
		{Name: "foo/bar/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mt},
		{Name: "foo/bar/baz", Typeflag: tar.TypeReg, Mode: 0o644, ModTime: mt},
		{Name: "foo/bar/link", Typeflag: tar.TypeSymlink, Linkname: "../a", Mode: 0o777, ModTime: mt},
		{Name: "foo/big", Typeflag: tar.TypeReg, Mode: 0o600, ModTime: mt},
		{Name: "foo/empty", Typeflag: tar.TypeReg, Mode: 0o644, ModTime: mt},
		{Name: "foo/script", Typeflag: tar.TypeReg, Mode: 0o755, ModTime: mt},
	}
	in := tarOf(t, entries, content)
	ev := tarAdd(t, n, in, nil)
	if ev.Name != "files.tar" || !strings.HasPrefix(ev.Hash, "Qm") {
		t.Fatalf("tar add: %+v", ev)
	}
	// Same input, same DAG; --cid-base applies.
	if again := tarAdd(t, n, in, map[string]string{"cid-base": "base32"}); again.Hash != cid.NewCidV1(cid.DagProtobuf, cid.MustParse(ev.Hash).Hash()).String() {
		t.Fatalf("tar add --cid-base=base32: %s", again.Hash)
	}
	txt, _ := objText(t, "tar/add", nil, nil, []any{ev})
	wantEq(t, "tar add text", txt, ev.Hash+"\n")

	// tar cat gives the input back, without the end-of-archive blocks.
	out := mustCall(t, n, "tar/cat", []string{ev.Hash}, nil, nil).Bytes
	want := bytes.TrimRight(in, "\x00")
	if len(out) < len(want) || !bytes.Equal(out[:len(want)], want) || len(bytes.TrimRight(out[len(want):], "\x00")) != 0 || len(out)%512 != 0 {
		t.Fatalf("tar cat: %d bytes, input %d", len(out), len(in))
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for _, h := range entries {
		got, err := tr.Next()
		if err != nil || got.Name != h.Name || got.Typeflag != h.Typeflag || got.Linkname != h.Linkname || got.Mode != h.Mode {
			t.Fatalf("entry %s: %+v %v", h.Name, got, err)
		}
	}

	// The DAG: root Data "ipfs/tar", entries under "-" names, content in
	// a UnixFS file under "data".
	root := mustCall(t, n, "object/get", []string{ev.Hash}, nil, nil).Values[0].(*commands.ObjectNode)
	if root.Data != "ipfs/tar" || len(root.Links) != 1 || root.Links[0].Name != "-foo" {
		t.Fatalf("root %+v", root)
	}
	res := mustCall(t, n, "cat", []string{ev.Hash + "/-foo/-big/data"}, nil, nil)
	if !bytes.Equal(res.Bytes, big) {
		t.Fatal("content of foo/big differs")
	}

	// Over HTTP: a byte stream.
	srv := testutil.StartServer(t, n)
	resp := rpcPost(t, srv, "tar/cat", url.Values{"arg": {ev.Hash}}, nil, "")
	if b := readAll(t, resp.Body); resp.Header.Get("X-Stream-Output") != "1" || !bytes.Equal(b, out) {
		t.Fatalf("HTTP tar cat: %v %d bytes", resp.Header, len(b))
	}
}

func TestTarAddCat_Errors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	before := blockCount(t, n)
	// A damaged tar: nothing of it stays stored.
	good := tarOf(t, []tar.Header{{Name: "x", Typeflag: tar.TypeReg, Mode: 0o644}}, map[string][]byte{"x": blkPattern(5000)})
	dir := files.NewSliceDirectory([]files.DirEntry{files.FileEntry("", files.NewBytesFile(good[:2000]))})
	if _, err := rpc.Call(context.Background(), n, commands.DefaultTable, "tar/add", nil, nil, dir); err == nil {
		t.Fatal("truncated tar added")
	}
	if after := blockCount(t, n); after != before {
		t.Fatalf("blocks %d -> %d after a refused tar", before, after)
	}
	empty := objHash(t, n, "object/new", []string{"unixfs-dir"}, nil, nil)
	wantErr(t, callErr(t, n, "tar/cat", []string{empty}, nil, nil), "not an IPFS tarchive")
	raw := dagPutJSON(t, n, `{"a":1}`, nil)
	wantErr(t, callErr(t, n, "tar/cat", []string{raw}, nil, nil), dag.ErrNotProtobuf.Error())
}

// Shapes and text of Kubo's sharness t0200-unixfs-ls.sh (its random files
// replaced by fixed content, so the CIDs differ).
func TestFileLs_ShapeAndText(t *testing.T) {
	n := testutil.MustOpenNode(t)
	res := mustCall(t, n, "add", nil, nil, files.NewMapDirectory(map[string]files.Node{"testData": files.NewMapDirectory(map[string]files.Node{
		"f1": files.NewBytesFile([]byte("test\n")),
		"f2": files.NewBytesFile([]byte("data\n")),
		"d1": files.NewMapDirectory(map[string]files.Node{"a": files.NewBytesFile([]byte("hello\n")), "128": files.NewBytesFile(blkPattern(128))}),
		"d2": files.NewMapDirectory(map[string]files.Node{"a": files.NewBytesFile([]byte("world\n")), "1024": files.NewBytesFile(blkPattern(1024))}),
	})}))
	h := map[string]string{}
	for _, v := range res.Values {
		ev := v.(*node.AddEvent)
		h[ev.Name] = ev.Hash
	}
	wantEq(t, "d1/a", h["testData/d1/a"], "QmZULkCELmmk5XNfCgTnCyFgAVxBRBXyDHGGMVoLFLiXEN")
	wantEq(t, "f1", h["testData/f1"], "QmeomffUNfmQy76CQGy9NdmqEnnHU9soCexBnGU3ezPHVH")
	top, d1, d2, f1024, f128 := h["testData"], h["testData/d1"], h["testData/d2"], h["testData/d2/1024"], h["testData/d1/128"]

	ls := func(args ...string) ([]any, string) {
		t.Helper()
		res := mustCall(t, n, "file/ls", args, nil, nil)
		txt, err := objText(t, "file/ls", args, nil, res.Values)
		if err != nil {
			t.Fatal(err)
		}
		return res.Values, txt
	}
	_, txt := ls(d2)
	wantEq(t, "one dir", txt, "1024\na\n")
	_, txt = ls(top, d2, d1)
	// Directories come sorted by argument, separated by a blank line.
	blocksByArg := map[string]string{d2: d2 + ":\n1024\na\n", d1: d1 + ":\n128\na\n", top: top + ":\nd1\nd2\nf1\nf2\n"}
	args := []string{top, d2, d1}
	sort.Strings(args)
	var want []string
	for _, a := range args {
		want = append(want, blocksByArg[a])
	}
	wantEq(t, "three dirs", txt, strings.Join(want, "\n"))
	_, txt = ls("/ipfs/"+d2+"/1024", f128)
	wantEq(t, "files", txt, "/ipfs/"+d2+"/1024\n"+f128+"\n")
	vals, txt := ls("/ipfs/"+top+"/d1", "/ipfs/"+d1, "/ipfs/"+d2+"/1024", "/ipfs/"+f1024)
	files2 := []string{"/ipfs/" + d2 + "/1024", "/ipfs/" + f1024}
	sort.Strings(files2)
	dirs2 := []string{"/ipfs/" + d1, "/ipfs/" + top + "/d1"}
	sort.Strings(dirs2)
	wantEq(t, "duplicates", txt, files2[0]+"\n"+files2[1]+"\n\n"+dirs2[0]+":\n"+dirs2[1]+":\n128\na\n")
	b, _ := json.Marshal(vals[0])
	argMap := map[string]string{"/ipfs/" + d1: d1, "/ipfs/" + d2 + "/1024": f1024, "/ipfs/" + f1024: f1024, "/ipfs/" + top + "/d1": d1}
	objs := map[string]json.RawMessage{
		d1:    json.RawMessage(`{"Hash":"` + d1 + `","Size":0,"Type":"Directory","Links":[{"Name":"128","Hash":"` + f128 + `","Size":128,"Type":"File"},{"Name":"a","Hash":"QmZULkCELmmk5XNfCgTnCyFgAVxBRBXyDHGGMVoLFLiXEN","Size":6,"Type":"File"}]}`),
		f1024: json.RawMessage(`{"Hash":"` + f1024 + `","Size":1024,"Type":"File","Links":null}`),
	}
	ab, _ := json.Marshal(argMap)
	ob, _ := json.Marshal(objs)
	wantEq(t, "duplicates JSON", string(b), `{"Arguments":`+string(ab)+`,"Objects":`+string(ob)+`}`)

	// Subdirectories show their link size; raw leaves are files.
	vals, _ = ls(top)
	obj := vals[0].(*commands.FileLsOutput).Objects[top]
	if obj.Links[0].Name != "d1" || obj.Links[0].Type != "Directory" || obj.Links[0].Size == 0 {
		t.Fatalf("top links %+v", obj.Links)
	}
	rawFile := addTree(t, n, map[string]string{"cid-version": "1"}, map[string]files.Node{"r": files.NewBytesFile([]byte("raw leaf"))})
	vals, _ = ls(rawFile)
	if o := vals[0].(*commands.FileLsOutput).Objects[rawFile]; o.Type != "File" || o.Size != 8 {
		t.Fatalf("raw file %+v", o)
	}
	link := addTree(t, n, map[string]string{"wrap-with-directory": "true"}, map[string]files.Node{"l": files.NewLinkFile("target", nil)})
	wantErr(t, callErr(t, n, "file/ls", []string{link + "/l"}, nil, nil), "cannot list symlinks yet")
}

// FuzzTarAdd feeds arbitrary bytes to tar/add.
func FuzzTarAdd(f *testing.F) {
	n, check := fuzzNode(f)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "d/a", Typeflag: tar.TypeReg, Mode: 0o644, Size: 5})
	tw.Write([]byte("hello"))
	tw.WriteHeader(&tar.Header{Name: "d/l", Typeflag: tar.TypeSymlink, Linkname: "a"})
	tw.Close()
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:700])
	f.Add(sparseTar(1 << 20))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		before := pinCount(t, n)
		_, err := rpc.Call(context.Background(), n, commands.DefaultTable, "tar/add", nil, nil, oneFile("in.tar", data))
		check(t, err, before)
	})
}

// Ensure a command whose client hangs up stops its work: tar/add of a
// sparse 4 GiB tar (2 KiB sent) stops within a second of the hang-up,
// leaves no goroutine behind and writes no more blocks.
func TestHangup_StopsTarAdd(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	// One request first, so that the server's own goroutines exist.
	testutil.PostURL(t, srv.URL+"/api/v0/version", nil)
	time.Sleep(100 * time.Millisecond)
	base := runtime.NumGoroutine()

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "sparse.tar")
	w.Write(sparseTar(4 << 30))
	mw.Close()
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /api/v0/tar/add HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", mw.FormDataContentType(), body.Len())
	c.Write(body.Bytes())
	time.Sleep(300 * time.Millisecond) // the import is under way
	c.Close()
	waitStopped(t, "ImportTar", 2*time.Second)
	used, cpu := n.Store.BlockBytes(), cpuTime(t)
	time.Sleep(time.Second)
	if now := n.Store.BlockBytes(); now != used {
		t.Fatalf("blocks still written after the client left: %d then %d bytes", used, now)
	}
	if d := cpuTime(t) - cpu; d > 300*time.Millisecond {
		t.Fatalf("%v of CPU in the second after the command stopped", d)
	}
	if g := runtime.NumGoroutine(); g > base+2 {
		t.Fatalf("%d goroutines after the client left, %d before", g, base)
	}
}
