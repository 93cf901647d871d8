package commands_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"math/rand"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/klauspost/compress/gzip"
	mbase "github.com/multiformats/go-multibase"
)

// tarEntry is one entry read back from a tar stream.
type tarEntry struct {
	name, link string
	typ        byte
	mode       int64
	mtime      time.Time
	data       []byte
}

func readTar(t *testing.T, b []byte) []tarEntry {
	t.Helper()
	var out []tarEntry
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("tar: %v", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("tar %s: %v", h.Name, err)
		}
		out = append(out, tarEntry{name: h.Name, link: h.Linkname, typ: h.Typeflag, mode: h.Mode, mtime: h.ModTime, data: data})
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return out
}

func randBytes(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// testTree is the directory the get tests add: files, an empty and a
// non-empty subdirectory, and a symlink. big spans several blocks.
type testTree struct {
	small, big []byte
}

func newTestTree() testTree {
	return testTree{small: []byte("hello, tar\n"), big: randBytes(700_000, 1)}
}

func (tt testTree) node() files.Node {
	return files.NewMapDirectory(map[string]files.Node{
		"a.txt": files.NewBytesFile(tt.small),
		"sub": files.NewMapDirectory(map[string]files.Node{
			"big.bin": files.NewBytesFile(tt.big),
		}),
		"empty": files.NewMapDirectory(map[string]files.Node{}),
		"link":  files.NewLinkFile("a.txt", nil),
	})
}

// check compares the entries of a get of the tree (top entry root) with
// what was added: modes of directories and files (links are 0777), and
// the mtime of every entry (zero: about now).
func (tt testTree) check(t *testing.T, got []tarEntry, root string, dirMode, fileMode int64, mtime time.Time) {
	t.Helper()
	want := []tarEntry{
		{name: root, typ: tar.TypeDir, mode: dirMode},
		{name: root + "/a.txt", typ: tar.TypeReg, mode: fileMode, data: tt.small},
		{name: root + "/empty", typ: tar.TypeDir, mode: dirMode},
		{name: root + "/link", typ: tar.TypeSymlink, mode: 0o777, link: "a.txt"},
		{name: root + "/sub", typ: tar.TypeDir, mode: dirMode},
		{name: root + "/sub/big.bin", typ: tar.TypeReg, mode: fileMode, data: tt.big},
	}
	if len(got) != len(want) {
		names := []string{}
		for _, e := range got {
			names = append(names, e.name)
		}
		t.Fatalf("got %d entries %v, want %d", len(got), names, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.name != w.name || g.typ != w.typ || g.mode != w.mode || g.link != w.link || !bytes.Equal(g.data, w.data) {
			t.Errorf("entry %d: got %s type %c mode %o link %q (%d bytes), want %s type %c mode %o link %q (%d bytes)",
				i, g.name, g.typ, g.mode, g.link, len(g.data), w.name, w.typ, w.mode, w.link, len(w.data))
		}
		if mtime.IsZero() {
			if d := time.Since(g.mtime); d < -time.Minute || d > time.Minute {
				t.Errorf("entry %s: mtime %v, want about now", g.name, g.mtime)
			}
		} else if !g.mtime.Equal(mtime) {
			t.Errorf("entry %s: mtime %v, want %v", g.name, g.mtime, mtime)
		}
	}
}

func TestGet_File_Tar(t *testing.T) {
	n := testutil.MustOpenNode(t)
	data := randBytes(600_000, 2)
	c := addTree(t, n, nil, map[string]files.Node{"f.bin": files.NewBytesFile(data)})
	res := mustCall(t, n, "get", []string{c}, nil, nil)
	if res.Length != int64(len(data)) {
		t.Fatalf("length %d, want %d", res.Length, len(data))
	}
	got := readTar(t, res.Bytes)
	if len(got) != 1 || got[0].name != c || got[0].typ != tar.TypeReg || got[0].mode != 0o644 || !bytes.Equal(got[0].data, data) {
		t.Fatalf("tar: %+v", got)
	}
	// A path names the entry after its last component.
	res = mustCall(t, n, "get", []string{"/ipfs/" + c + "/"}, nil, nil)
	if got := readTar(t, res.Bytes); got[0].name != c {
		t.Fatalf("name %q, want %q", got[0].name, c)
	}
}

func TestGet_Dir_Tar(t *testing.T) {
	n := testutil.MustOpenNode(t)
	tt := newTestTree()
	for _, cidv := range []string{"0", "1"} {
		t.Run("cidv"+cidv, func(t *testing.T) {
			c := addTree(t, n, map[string]string{"cid-version": cidv}, map[string]files.Node{"tree": tt.node()})
			res := mustCall(t, n, "get", []string{c}, nil, nil)
			nd, err := n.DAG.Get(context.Background(), cid.MustParse(c))
			if err != nil {
				t.Fatal(err)
			}
			size, _ := nd.Size()
			if res.Length != int64(size) {
				t.Fatalf("length %d, want cumulative size %d", res.Length, size)
			}
			tt.check(t, readTar(t, res.Bytes), c, 0o755, 0o644, time.Time{})

			// A sub-path: the top entry is its last component.
			res = mustCall(t, n, "get", []string{c + "/sub"}, nil, nil)
			got := readTar(t, res.Bytes)
			if len(got) != 2 || got[0].name != "sub" || got[1].name != "sub/big.bin" || !bytes.Equal(got[1].data, tt.big) {
				t.Fatalf("sub: %+v", got)
			}
		})
	}
}

func TestGet_Dir_StoredModeAndMtime(t *testing.T) {
	n := testutil.MustOpenNode(t)
	tt := newTestTree()
	c := addTree(t, n, map[string]string{"mode": "0750", "mtime": "1600000000", "mtime-nsecs": "500"},
		map[string]files.Node{"tree": tt.node()})
	for _, archive := range []string{"false", "true"} {
		res := mustCall(t, n, "get", []string{c}, map[string]string{"archive": archive}, nil)
		got := readTar(t, res.Bytes)
		want := time.Unix(1600000000, 500)
		if archive == "true" {
			want = time.Unix(1600000000, 0) // USTAR keeps whole seconds
		}
		tt.check(t, got, c, 0o750, 0o750, want)
	}
}

func TestGet_CidAsTyped_Base36(t *testing.T) {
	n := testutil.MustOpenNode(t)
	c := addTree(t, n, map[string]string{"cid-version": "1"}, map[string]files.Node{"x": files.NewBytesFile([]byte("x"))})
	k, err := cid.MustParse(c).StringOfBase(mbase.Base36)
	if err != nil {
		t.Fatal(err)
	}
	res := mustCall(t, n, "get", []string{k}, nil, nil)
	if got := readTar(t, res.Bytes); len(got) != 1 || got[0].name != k || string(got[0].data) != "x" {
		t.Fatalf("tar: %+v", got)
	}
}

func TestGet_HAMTDir_LinkOrder(t *testing.T) {
	n := testutil.MustOpenNode(t)
	entries := map[string]files.Node{}
	for i := range 40 {
		entries["f"+strconv.Itoa(i)] = files.NewBytesFile([]byte("content " + strconv.Itoa(i)))
	}
	c := addTree(t, n, map[string]string{"max-directory-links": "4"}, map[string]files.Node{"h": files.NewMapDirectory(entries)})
	ctx := context.Background()
	nd, err := n.DAG.Get(ctx, cid.MustParse(c))
	if err != nil {
		t.Fatal(err)
	}
	fsn, err := ft.FSNodeFromBytes(nd.(*merkledag.ProtoNode).Data())
	if err != nil || fsn.Type() != ft.THAMTShard {
		t.Fatalf("root is not a HAMT shard (%v)", err)
	}
	res := mustCall(t, n, "get", []string{c}, nil, nil)
	got := readTar(t, res.Bytes)
	if len(got) != 41 {
		t.Fatalf("%d entries, want 41", len(got))
	}
	// Entries come in shard enumeration order (what boxo's directory
	// walk yields), not sorted.
	d, err := uio.NewDirectoryFromNode(n.DAG, nd)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	if err := d.ForEachLink(ctx, func(l *ipld.Link) error { order = append(order, l.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	for i, e := range got[1:] {
		if e.name != c+"/"+order[i] {
			t.Fatalf("entry %d: %s, want %s", i, e.name, c+"/"+order[i])
		}
		if string(e.data) != "content "+strings.TrimPrefix(order[i], "f") {
			t.Fatalf("entry %s: %q", e.name, e.data)
		}
	}
}

func TestGet_Gzip(t *testing.T) {
	n := testutil.MustOpenNode(t)
	tt := newTestTree()
	dir := addTree(t, n, nil, map[string]files.Node{"tree": tt.node()})
	file := addTree(t, n, nil, map[string]files.Node{"f": files.NewBytesFile(tt.big)})

	// compress without archive on a file: gzip of the bytes.
	res := mustCall(t, n, "get", []string{file}, map[string]string{"compress": "true"}, nil)
	if !bytes.Equal(gunzip(t, res.Bytes), tt.big) {
		t.Fatal("gzip of file differs")
	}
	if res.Length != int64(len(tt.big)) {
		t.Fatalf("length %d", res.Length)
	}
	// ... on a directory: an error.
	err := callErr(t, n, "get", []string{dir}, map[string]string{"compress": "true"}, nil)
	wantErr(t, err, "file is not regular")
	// archive + compress: a gzipped tar, any level.
	for _, lvl := range []string{"", "1", "9"} {
		opts := map[string]string{"compress": "true", "archive": "true"}
		if lvl != "" {
			opts["compression-level"] = lvl
		}
		res = mustCall(t, n, "get", []string{dir}, opts, nil)
		tt.check(t, readTar(t, gunzip(t, res.Bytes)), dir, 0o755, 0o644, time.Time{})
	}
	// A file with -a -C is a gzipped tar too.
	res = mustCall(t, n, "get", []string{file}, map[string]string{"compress": "true", "archive": "true"}, nil)
	if got := readTar(t, gunzip(t, res.Bytes)); len(got) != 1 || !bytes.Equal(got[0].data, tt.big) {
		t.Fatal("tar.gz of file differs")
	}
}

func TestGet_CompressionLevel_Errors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	c := addTree(t, n, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("abc"))})
	for _, lvl := range []string{"0", "10", "-1"} {
		err := callErr(t, n, "get", []string{c}, map[string]string{"compress": "true", "compression-level": lvl}, nil)
		wantErr(t, err, "compression level must be between 1 and 9")
	}
	// Without --compress the level is not looked at.
	res := mustCall(t, n, "get", []string{c}, map[string]string{"compression-level": "10"}, nil)
	if got := readTar(t, res.Bytes); len(got) != 1 || string(got[0].data) != "abc" {
		t.Fatalf("tar: %+v", got)
	}
}

func TestGet_BadPath_Error(t *testing.T) {
	n := testutil.MustOpenNode(t)
	err := callErr(t, n, "get", []string{"notacid"}, nil, nil)
	wantErrPrefix(t, err, `invalid path "notacid"`)
}

func TestGet_HTTP_Dir(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	tt := newTestTree()
	c := addTree(t, n, nil, map[string]files.Node{"tree": tt.node()})
	nd, err := n.DAG.Get(context.Background(), cid.MustParse(c))
	if err != nil {
		t.Fatal(err)
	}
	size, _ := nd.Size()

	resp := rpcPost(t, srv, "get", url.Values{"arg": {c}}, nil, "")
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-tar" {
		t.Fatalf("Content-Type %q", ct)
	}
	if resp.Header.Get("X-Stream-Output") != "1" {
		t.Fatal("no X-Stream-Output")
	}
	if l := resp.Header.Get("X-Content-Length"); l != strconv.FormatUint(size, 10) {
		t.Fatalf("X-Content-Length %q, want %d", l, size)
	}
	tt.check(t, readTar(t, body), c, 0o755, 0o644, time.Time{})

	resp = rpcPost(t, srv, "get", url.Values{"arg": {c}, "archive": {"true"}, "compress": {"true"}, "compression-level": {"3"}}, nil, "")
	body = readAll(t, resp.Body)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/gzip" {
		t.Fatalf("status %d Content-Type %q", resp.StatusCode, ct)
	}
	tt.check(t, readTar(t, gunzip(t, body)), c, 0o755, 0o644, time.Time{})

	resp = rpcPost(t, srv, "get", url.Values{"arg": {c}, "compress": {"true"}}, nil, "")
	wantErrorJSON(t, resp, 500, "file is not regular")

	resp = rpcPost(t, srv, "get", url.Values{"arg": {c}, "compress": {"true"}, "compression-level": {"11"}}, nil, "")
	wantErrorJSON(t, resp, 500, "compression level must be between 1 and 9")
}

func TestGet_HTTP_FileGzip(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	data := randBytes(300_000, 3)
	c := addTree(t, n, nil, map[string]files.Node{"f": files.NewBytesFile(data)})
	resp := rpcPost(t, srv, "get", url.Values{"arg": {c}, "compress": {"true"}}, nil, "")
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("X-Content-Length") != strconv.Itoa(len(data)) {
		t.Fatalf("X-Content-Length %q", resp.Header.Get("X-Content-Length"))
	}
	if !bytes.Equal(gunzip(t, body), data) {
		t.Fatal("content differs")
	}
}

func TestGet_HTTP_MissingBlock_Trailer(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	data := randBytes(600_000, 4)
	c := addTree(t, n, map[string]string{"cid-version": "1"}, map[string]files.Node{"d": files.NewMapDirectory(map[string]files.Node{
		"a": files.NewBytesFile([]byte("first")),
		"b": files.NewBytesFile(data),
	})})
	// Drop the last leaf of b.
	ctx := context.Background()
	root, err := n.DAG.Get(ctx, cid.MustParse(c))
	if err != nil {
		t.Fatal(err)
	}
	var bCid cid.Cid
	for _, l := range root.Links() {
		if l.Name == "b" {
			bCid = l.Cid
		}
	}
	bNode, err := n.DAG.Get(ctx, bCid)
	if err != nil {
		t.Fatal(err)
	}
	leaves := bNode.Links()
	if err := n.Blocks.DeleteBlock(ctx, leaves[len(leaves)-1].Cid); err != nil {
		t.Fatal(err)
	}
	if _, err := rpc.Call(ctx, n, commands.DefaultTable, "get", []string{c}, nil, nil); err == nil {
		t.Fatal("in-process get succeeded with a missing block")
	}
	resp := rpcPost(t, srv, "get", url.Values{"arg": {c}}, nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	body := readAll(t, resp.Body)
	if resp.Trailer.Get("X-Stream-Error") == "" {
		t.Fatalf("no X-Stream-Error trailer (%d bytes)", len(body))
	}
}

// ---- GetOutput (CLI side) ----

func getReq(arg string, opts map[string]any) *rpc.Request {
	return &rpc.Request{Args: []string{arg}, Opts: opts}
}

func TestGetOutput_Extract_Dir(t *testing.T) {
	n := testutil.MustOpenNode(t)
	tt := newTestTree()
	c := addTree(t, n, map[string]string{"mtime": "1500000000"}, map[string]files.Node{"tree": tt.node()})
	res := mustCall(t, n, "get", []string{c}, nil, nil)
	out := filepath.Join(t.TempDir(), "out")
	var stdout bytes.Buffer
	if err := commands.GetOutput(getReq(c, map[string]any{"output": out}), bytes.NewReader(res.Bytes), &stdout); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "Saving file(s) to "+out+"\n" {
		t.Fatalf("stdout %q", stdout.String())
	}
	for name, want := range map[string][]byte{"a.txt": tt.small, "sub/big.bin": tt.big} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %v (%d bytes)", name, err, len(got))
		}
		fi, _ := os.Stat(filepath.Join(out, name))
		if fi.Mode().Perm() != 0o644 || !fi.ModTime().Equal(time.Unix(1500000000, 0)) {
			t.Fatalf("%s: mode %v mtime %v", name, fi.Mode(), fi.ModTime())
		}
	}
	target, err := os.Readlink(filepath.Join(out, "link"))
	if err != nil || target != "a.txt" {
		t.Fatalf("link: %q %v", target, err)
	}
	for _, d := range []string{"", "sub", "empty"} {
		fi, err := os.Lstat(filepath.Join(out, d))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 || !fi.ModTime().Equal(time.Unix(1500000000, 0)) {
			t.Fatalf("dir %q: %v %v", d, fi, err)
		}
	}
}

func TestGetOutput_Extract_DefaultNameAndFile(t *testing.T) {
	n := testutil.MustOpenNode(t)
	c := addTree(t, n, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("file body"))})
	res := mustCall(t, n, "get", []string{c}, nil, nil)
	dir := t.TempDir()
	t.Chdir(dir)
	var stdout bytes.Buffer
	// No -o: the last component of the argument.
	if err := commands.GetOutput(getReq("/ipfs/"+c+"/", map[string]any{}), bytes.NewReader(res.Bytes), &stdout); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "Saving file(s) to "+c+"\n" {
		t.Fatalf("stdout %q", stdout.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, c)); err != nil || string(b) != "file body" {
		t.Fatalf("%q %v", b, err)
	}
	// -o naming an existing directory: the file goes inside it.
	sub := filepath.Join(dir, "into")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := commands.GetOutput(getReq(c, map[string]any{"output": sub}), bytes.NewReader(res.Bytes), io.Discard); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(sub, c)); err != nil || string(b) != "file body" {
		t.Fatalf("%q %v", b, err)
	}
	// /dev/null: nothing written.
	if err := commands.GetOutput(getReq(c, map[string]any{"output": os.DevNull}), bytes.NewReader(res.Bytes), io.Discard); err != nil {
		t.Fatal(err)
	}
}

func TestGetOutput_Archive_Names(t *testing.T) {
	body := []byte("opaque stream")
	dir := t.TempDir()
	for _, tc := range []struct {
		opts map[string]any
		out  string
		want string
	}{
		{map[string]any{"archive": true}, "x", "x.tar"},
		{map[string]any{"archive": true}, "x.tar", "x.tar"},
		{map[string]any{"compress": true}, "y", "y.gz"},
		{map[string]any{"archive": true, "compress": true}, "z", "z.tar.gz"},
		{map[string]any{"archive": true, "compress": true}, "w.tar.gz", "w.tar.gz"},
		{map[string]any{"compress": true, "compression-level": 4}, "v", "v.gz"},
	} {
		tc.opts["output"] = filepath.Join(dir, tc.out)
		var stdout bytes.Buffer
		if err := commands.GetOutput(getReq("QmX", tc.opts), bytes.NewReader(body), &stdout); err != nil {
			t.Fatalf("%v: %v", tc.opts, err)
		}
		want := filepath.Join(dir, tc.want)
		if stdout.String() != "Saving archive to "+want+"\n" {
			t.Fatalf("stdout %q, want %s", stdout.String(), want)
		}
		if b, err := os.ReadFile(want); err != nil || !bytes.Equal(b, body) {
			t.Fatalf("%s: %q %v", want, b, err)
		}
	}
	err := commands.GetOutput(getReq("QmX", map[string]any{"compress": true, "compression-level": 0, "output": filepath.Join(dir, "bad")}),
		bytes.NewReader(body), io.Discard)
	wantErr(t, err, "compression level must be between 1 and 9")
}

// craftTar builds a tar from headers (regular files get body "evil").
func craftTar(t *testing.T, hdrs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hdrs {
		if h.Typeflag == tar.TypeReg {
			h.Size = 4
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte("evil"))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGetOutput_Extract_RefusesEscapes(t *testing.T) {
	dir := func(name string) *tar.Header { return &tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755} }
	file := func(name string) *tar.Header { return &tar.Header{Name: name, Typeflag: tar.TypeReg} }
	link := func(name, target string) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: target}
	}
	for _, tc := range []struct {
		name string
		tar  []*tar.Header
		err  string
	}{
		{"dotdot root", []*tar.Header{file("..")}, "tar has invalid root"},
		{"nested root", []*tar.Header{file("a/../../evil")}, "root name contains multiple components"},
		{"absolute root", []*tar.Header{file("/tmp/evil")}, "root name contains multiple components"},
		{"dotdot entry", []*tar.Header{dir("r"), file("r/../../evil")}, `path contains ".."`},
		{"absolute entry", []*tar.Header{dir("r"), file("/evil")}, "path starts with '/'"},
		{"other root", []*tar.Header{dir("r"), file("s/evil")}, "contains more than one root"},
		{"through symlink", []*tar.Header{dir("r"), link("r/l", ".."), file("r/l/evil")}, "cannot traverse symlinks"},
		{"through abs symlink", []*tar.Header{dir("r"), link("r/l", "/"), dir("r/l/x")}, "cannot traverse symlinks"},
		{"dir onto symlink", []*tar.Header{dir("r"), link("r/l", ".."), dir("r/l")}, "cannot extract to symlink"},
		{"file root then more", []*tar.Header{file("f"), file("f/evil")}, "the root was not a directory"},
		{"hard link", []*tar.Header{dir("r"), {Name: "r/h", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}}, "unrecognized tar header type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			out := filepath.Join(base, "in", "out")
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				t.Fatal(err)
			}
			err := commands.GetOutput(getReq("x", map[string]any{"output": out}), bytes.NewReader(craftTar(t, tc.tar...)), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			// Nothing named evil anywhere, and nothing outside in/.
			filepath.Walk(base, func(p string, fi os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				if fi.Name() == "evil" {
					t.Errorf("%s was written", p)
				}
				if p != base && !strings.HasPrefix(p, filepath.Join(base, "in")) {
					t.Errorf("%s written outside the output", p)
				}
				return nil
			})
		})
	}
}

func TestGetOutput_Extract_SymlinkNotFollowed(t *testing.T) {
	// A symlink entry replacing an existing file is created as a link;
	// writing a later file at the link's path replaces the link, not its
	// target.
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("safe"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "out")
	tarb := craftTar(t,
		&tar.Header{Name: "r", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "r/l", Typeflag: tar.TypeSymlink, Linkname: victim},
		&tar.Header{Name: "r/l", Typeflag: tar.TypeReg},
	)
	if err := commands.GetOutput(getReq("x", map[string]any{"output": out}), bytes.NewReader(tarb), io.Discard); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "safe" {
		t.Fatalf("victim overwritten: %q", b)
	}
	fi, err := os.Lstat(filepath.Join(out, "l"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("r/l: %v %v", fi, err)
	}
}
