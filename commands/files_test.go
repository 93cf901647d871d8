package commands_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/mfs"
	"github.com/ipfs/go-cid"
)

func dataArg(b []byte) files.Directory {
	return files.NewMapDirectory(map[string]files.Node{"": files.NewBytesFile(b)})
}

func filesWrite(t *testing.T, n *node.Node, p string, b []byte, opts map[string]string) {
	t.Helper()
	mustCall(t, n, "files/write", []string{p}, opts, dataArg(b))
}

func filesRead(t *testing.T, n *node.Node, p string, opts map[string]string) []byte {
	t.Helper()
	return mustCall(t, n, "files/read", []string{p}, opts, nil).Bytes
}

func filesStat(t *testing.T, n *node.Node, p string) *commands.FilesStatOutput {
	t.Helper()
	return mustCall(t, n, "files/stat", []string{p}, nil, nil).Values[0].(*commands.FilesStatOutput)
}

func noise(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

var create = map[string]string{"create": "true"}

// Ensure files write and read honour offset, count, truncate and create,
// and that writing past the end fills the gap with zeros.
func TestFiles_WriteRead_Offsets(t *testing.T) {
	n := testutil.MustOpenNode(t)
	filesWrite(t, n, "/f", []byte("hello"), create)
	if got := filesRead(t, n, "/f", nil); string(got) != "hello" {
		t.Fatalf("read %q", got)
	}
	if got := filesRead(t, n, "/f", map[string]string{"offset": "1", "count": "3"}); string(got) != "ell" {
		t.Fatalf("read offset 1 count 3: %q", got)
	}
	if got := filesRead(t, n, "/f", map[string]string{"offset": "5"}); len(got) != 0 {
		t.Fatalf("read at end: %q", got)
	}
	wantErr(t, callErr(t, n, "files/read", []string{"/f"}, map[string]string{"offset": "6"}, nil), "offset was past end of file (6 > 5)")
	wantErr(t, callErr(t, n, "files/read", []string{"/f"}, map[string]string{"offset": "-1"}, nil), "cannot specify negative offset")
	wantErr(t, callErr(t, n, "files/read", []string{"/f"}, map[string]string{"count": "-1"}, nil), "cannot specify negative 'count'")
	wantErr(t, callErr(t, n, "files/read", []string{"/nope"}, nil, nil), "/nope: file does not exist")

	// Overwrite in the middle, then past the end without truncate.
	filesWrite(t, n, "/f", []byte("EL"), map[string]string{"offset": "1"})
	if got := filesRead(t, n, "/f", nil); string(got) != "hELlo" {
		t.Fatalf("overwrite: %q", got)
	}
	filesWrite(t, n, "/f", []byte("XY"), map[string]string{"offset": "8"})
	if got := filesRead(t, n, "/f", nil); string(got) != "hELlo\x00\x00\x00XY" {
		t.Fatalf("write past end: %q", got)
	}
	// Past the end with truncate: the old content is gone, the gap is zeros.
	filesWrite(t, n, "/f", []byte("AB"), map[string]string{"offset": "2", "truncate": "true"})
	if got := filesRead(t, n, "/f", nil); string(got) != "\x00\x00AB" {
		t.Fatalf("truncate + offset: %q", got)
	}
	// count limits what is taken from the input.
	filesWrite(t, n, "/f", []byte("0123456789"), map[string]string{"truncate": "true", "count": "4"})
	if got := filesRead(t, n, "/f", nil); string(got) != "0123" {
		t.Fatalf("count: %q", got)
	}
	wantErr(t, callErr(t, n, "files/write", []string{"/f"}, map[string]string{"offset": "-1"}, dataArg(nil)), "cannot have negative write offset")
	wantErr(t, callErr(t, n, "files/write", []string{"/f"}, map[string]string{"count": "-1"}, dataArg(nil)), "cannot have negative byte count")
	wantErr(t, callErr(t, n, "files/write", []string{"/f"}, nil, files.NewMapDirectory(nil)), "expected a file argument")

	// A file bigger than a chunk, read in ranges across chunk borders.
	big := noise(700 << 10)
	filesWrite(t, n, "/big", big, create)
	if got := filesRead(t, n, "/big", nil); !bytes.Equal(got, big) {
		t.Fatalf("big read: %d bytes differ", len(got))
	}
	got := filesRead(t, n, "/big", map[string]string{"offset": "262000", "count": "300000"})
	if !bytes.Equal(got, big[262000:562000]) {
		t.Fatalf("big range read differs")
	}
	if st := filesStat(t, n, "/big"); st.Size != uint64(len(big)) || st.Type != "file" {
		t.Fatalf("big stat %+v", st)
	}
}

// Ensure create and parents behave as Kubo's: no create, no file; no
// parents, no directories.
func TestFiles_Write_CreateParents(t *testing.T) {
	n := testutil.MustOpenNode(t)
	wantErr(t, callErr(t, n, "files/write", []string{"/missing"}, nil, dataArg([]byte("x"))), "file does not exist")
	wantErr(t, callErr(t, n, "files/write", []string{"/d/e/f"}, create, dataArg([]byte("x"))), "file does not exist")
	filesWrite(t, n, "/d/e/f", []byte("x"), map[string]string{"create": "true", "parents": "true"})
	if got := filesRead(t, n, "/d/e/f", nil); string(got) != "x" {
		t.Fatalf("read %q", got)
	}
	wantErr(t, callErr(t, n, "files/write", []string{"/d"}, nil, dataArg([]byte("x"))), "/d was not a file")
	// CIDv1 files get raw leaves; a hash other than sha2-256 implies v1.
	filesWrite(t, n, "/v1", []byte("data"), map[string]string{"create": "true", "cid-version": "1"})
	if c, err := cid.Decode(filesStat(t, n, "/v1").Hash); err != nil || c.Version() != 1 {
		t.Fatalf("cid-version=1 file hash %s %v", c, err)
	}
	filesWrite(t, n, "/b3", []byte("data"), map[string]string{"create": "true", "hash": "blake2b-256"})
	c, err := cid.Decode(filesStat(t, n, "/b3").Hash)
	if err != nil || c.Version() != 1 || c.Prefix().MhType != 0xb220 {
		t.Fatalf("blake2b file %s %v", c, err)
	}
	wantErr(t, callErr(t, n, "files/write", []string{"/h"}, map[string]string{"create": "true", "hash": "nope"}, dataArg(nil)), `unrecognized hash function: "nope"`)
}

// Ensure MFS paths are checked: absolute, and no ".." anywhere.
func TestFiles_Paths_Refused(t *testing.T) {
	n := testutil.MustOpenNode(t)
	mustCall(t, n, "files/mkdir", []string{"/a"}, nil, nil)
	for _, tc := range []struct{ cmd, path, err string }{
		{"files/mkdir", "/a/../b", `invalid path "/a/../b": ".." is not allowed in MFS paths`},
		{"files/mkdir", "/..", `invalid path "/..": ".." is not allowed in MFS paths`},
		{"files/ls", "/a/..", `invalid path "/a/..": ".." is not allowed in MFS paths`},
		{"files/stat", "/../a", `invalid path "/../a": ".." is not allowed in MFS paths`},
		{"files/read", "/a/../../etc/passwd", `invalid path "/a/../../etc/passwd": ".." is not allowed in MFS paths`},
		{"files/mkdir", "a", "paths must start with a leading slash"},
		{"files/stat", "", "paths must not be empty"},
	} {
		err := callErr(t, n, tc.cmd, []string{tc.path}, nil, nil)
		wantErr(t, err, tc.err)
	}
	wantErr(t, callErr(t, n, "files/write", []string{"/a/../x"}, create, dataArg([]byte("x"))),
		`invalid path "/a/../x": ".." is not allowed in MFS paths`)
	wantErr(t, callErr(t, n, "files/cp", []string{"/a", "/a/../b"}, nil, nil),
		`invalid path "/a/../b": ".." is not allowed in MFS paths`)
	wantErr(t, callErr(t, n, "files/mv", []string{"/a/..", "/b"}, nil, nil),
		`invalid path "/a/..": ".." is not allowed in MFS paths`)
	// Nothing was created by the refused commands.
	ls := mustCall(t, n, "files/ls", []string{"/"}, nil, nil).Values[0].(*commands.FilesLsOutput)
	if len(ls.Entries) != 1 || ls.Entries[0].Name != "a" {
		t.Fatalf("ls / after refusals: %+v", ls.Entries)
	}
}

// Ensure mkdir, ls, mv and rm work and fail as Kubo's do.
func TestFiles_MkdirLsMvRm(t *testing.T) {
	n := testutil.MustOpenNode(t)
	mustCall(t, n, "files/mkdir", []string{"/a"}, nil, nil)
	wantErr(t, callErr(t, n, "files/mkdir", []string{"/a"}, nil, nil), "file already exists")
	mustCall(t, n, "files/mkdir", []string{"/a"}, map[string]string{"parents": "true"}, nil)
	wantErr(t, callErr(t, n, "files/mkdir", []string{"/x/y"}, nil, nil), "file does not exist")
	wantErr(t, callErr(t, n, "files/mkdir", []string{"/"}, nil, nil), "cannot create directory '/': Already exists")
	mustCall(t, n, "files/mkdir", []string{"/x/y/z"}, map[string]string{"p": "true"}, nil)
	filesWrite(t, n, "/a/f.txt", []byte("12345"), create)

	ls := mustCall(t, n, "files/ls", []string{"/"}, nil, nil).Values[0].(*commands.FilesLsOutput)
	if len(ls.Entries) != 2 || ls.Entries[0] != (mfs.NodeListing{Name: "a"}) || ls.Entries[1] != (mfs.NodeListing{Name: "x"}) {
		t.Fatalf("ls /: %+v", ls.Entries)
	}
	ls = mustCall(t, n, "files/ls", []string{"/a"}, map[string]string{"long": "true"}, nil).Values[0].(*commands.FilesLsOutput)
	st := filesStat(t, n, "/a/f.txt")
	if len(ls.Entries) != 1 || ls.Entries[0] != (mfs.NodeListing{Name: "f.txt", Type: 0, Size: 5, Hash: st.Hash}) {
		t.Fatalf("ls -l /a: %+v (stat %s)", ls.Entries, st.Hash)
	}
	ls = mustCall(t, n, "files/ls", []string{"/"}, map[string]string{"l": "true"}, nil).Values[0].(*commands.FilesLsOutput)
	if ls.Entries[0].Type != 1 || ls.Entries[0].Hash != filesStat(t, n, "/a").Hash {
		t.Fatalf("ls -l /: %+v", ls.Entries)
	}
	// A file lists itself.
	ls = mustCall(t, n, "files/ls", []string{"/a/f.txt"}, nil, nil).Values[0].(*commands.FilesLsOutput)
	if len(ls.Entries) != 1 || ls.Entries[0] != (mfs.NodeListing{Name: "f.txt"}) {
		t.Fatalf("ls file: %+v", ls.Entries)
	}
	wantErr(t, callErr(t, n, "files/ls", []string{"/nope"}, nil, nil), "file does not exist")

	mustCall(t, n, "files/mv", []string{"/a/f.txt", "/x/g.txt"}, nil, nil)
	if got := filesRead(t, n, "/x/g.txt", nil); string(got) != "12345" {
		t.Fatalf("after mv: %q", got)
	}
	wantErr(t, callErr(t, n, "files/read", []string{"/a/f.txt"}, nil, nil), "/a/f.txt: file does not exist")
	// mv into a directory keeps the name.
	mustCall(t, n, "files/mv", []string{"/x/g.txt", "/a"}, nil, nil)
	if got := filesRead(t, n, "/a/g.txt", nil); string(got) != "12345" {
		t.Fatalf("mv into dir: %q", got)
	}

	wantErr(t, callErr(t, n, "files/rm", []string{"/x"}, nil, nil), "can't remove some files")
	wantErr(t, callErr(t, n, "files/rm", []string{"/nope"}, nil, nil), "can't remove some files")
	wantErr(t, callErr(t, n, "files/rm", []string{"/"}, nil, nil), "can't remove some files")
	wantErr(t, callErr(t, n, "files/rm", []string{"/a/g.txt"}, map[string]string{"flush": "false"}, nil),
		"files rm always flushes for safety. The --flush flag cannot be set to false for this command")
	mustCall(t, n, "files/rm", []string{"/nope", "/nope/deeper"}, map[string]string{"force": "true"}, nil)
	mustCall(t, n, "files/rm", []string{"/x"}, map[string]string{"r": "true"}, nil)
	mustCall(t, n, "files/rm", []string{"/a/g.txt"}, nil, nil)
	ls = mustCall(t, n, "files/ls", []string{"/"}, nil, nil).Values[0].(*commands.FilesLsOutput)
	if len(ls.Entries) != 1 || ls.Entries[0].Name != "a" {
		t.Fatalf("ls / after rm: %+v", ls.Entries)
	}
	if st := filesStat(t, n, "/a"); st.Hash != "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn" || st.Blocks != 0 {
		t.Fatalf("emptied /a: %+v", st)
	}
}

// Ensure cp copies from /ipfs/ paths and within MFS, lazily and with
// Kubo's errors.
func TestFiles_Cp(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := addTree(t, n, map[string]string{"pin": "false"}, map[string]files.Node{"d": files.NewMapDirectory(map[string]files.Node{
		"a.txt": files.NewBytesFile([]byte("aaa")),
	})})
	mustCall(t, n, "files/cp", []string{"/ipfs/" + root, "/copy"}, nil, nil)
	if got := filesRead(t, n, "/copy/a.txt", nil); string(got) != "aaa" {
		t.Fatalf("read copied: %q", got)
	}
	if st := filesStat(t, n, "/copy"); st.Hash != root || st.Type != "directory" || st.Blocks != 1 {
		t.Fatalf("stat copy %+v, want hash %s", st, root)
	}
	// Within MFS; a destination ending in / takes the source's name.
	mustCall(t, n, "files/mkdir", []string{"/dst"}, nil, nil)
	mustCall(t, n, "files/cp", []string{"/copy/a.txt", "/dst/"}, nil, nil)
	if got := filesRead(t, n, "/dst/a.txt", nil); string(got) != "aaa" {
		t.Fatalf("read /dst/a.txt: %q", got)
	}
	wantErr(t, callErr(t, n, "files/cp", []string{"/copy/a.txt", "/dst/a.txt"}, nil, nil),
		"cp: cannot put node in path /dst/a.txt: directory already has entry by that name")
	filesWrite(t, n, "/other", []byte("other"), create)
	mustCall(t, n, "files/cp", []string{"/other", "/dst/a.txt"}, map[string]string{"force": "true"}, nil)
	if got := filesRead(t, n, "/dst/a.txt", nil); string(got) != "other" {
		t.Fatalf("cp --force: %q", got)
	}
	wantErrPrefix(t, callErr(t, n, "files/cp", []string{"/nope", "/x"}, nil, nil), "cp: cannot get node from path /nope: file does not exist")
	wantErr(t, callErr(t, n, "files/cp", []string{"/copy", "/p/q/r"}, nil, nil), "cp: cannot put node in path /p/q/r: file does not exist")
	mustCall(t, n, "files/cp", []string{"/copy", "/p/q/r"}, map[string]string{"parents": "true"}, nil)
	if got := filesRead(t, n, "/p/q/r/a.txt", nil); string(got) != "aaa" {
		t.Fatalf("cp -p: %q", got)
	}
	// Not UnixFS: a dag-cbor block.
	blk := mustCall(t, n, "block/put", nil, map[string]string{"cid-codec": "dag-cbor"}, files.NewMapDirectory(map[string]files.Node{
		"b": files.NewBytesFile([]byte{0xa0})})).Values[0].(*commands.BlockStat)
	wantErr(t, callErr(t, n, "files/cp", []string{"/ipfs/" + blk.Key, "/cbor"}, nil, nil),
		"cp: source must be a valid UnixFS (dag-pb or raw codec)")
}

// Ensure stat's JSON shape, format tokens and conflicting options.
func TestFiles_Stat_Format(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	filesWrite(t, n, "/f", []byte("hello"), create)
	st := filesStat(t, n, "/f")
	if st.Size != 5 || st.Type != "file" || st.CumulativeSize == 0 || st.WithLocality || st.Mode != "" {
		t.Fatalf("stat %+v", st)
	}
	root := filesStat(t, n, "/")
	if root.Type != "directory" || root.Blocks != 1 {
		t.Fatalf("stat / %+v", root)
	}

	resp := rpcPost(t, srv, "files/stat", url.Values{"arg": {"/f"}, "format": {"<hash> <size> <cumulsize> <type> <childs>"}, "encoding": {"text"}}, nil, "")
	if got := string(readAll(t, resp.Body)); got != fmt.Sprintf("%s 5 %d file %d\n", st.Hash, st.CumulativeSize, st.Blocks) {
		t.Fatalf("format text %q", got)
	}
	resp = rpcPost(t, srv, "files/stat", url.Values{"arg": {"/f"}, "hash": {"true"}, "encoding": {"text"}}, nil, "")
	if got := string(readAll(t, resp.Body)); got != st.Hash+"\n" {
		t.Fatalf("--hash text %q", got)
	}
	resp = rpcPost(t, srv, "files/stat", url.Values{"arg": {"/"}, "encoding": {"text"}}, nil, "")
	want := fmt.Sprintf("%s\nSize: 0\nCumulativeSize: %d\nChildBlocks: 1\nType: directory\nMode: not set (not set)\nMtime: not set\n", root.Hash, root.CumulativeSize)
	if got := string(readAll(t, resp.Body)); got != want {
		t.Fatalf("default text %q, want %q", got, want)
	}
	resp = rpcPost(t, srv, "files/stat", url.Values{"arg": {"/f"}}, nil, "")
	if got := string(readAll(t, resp.Body)); got != fmt.Sprintf(`{"Hash":"%s","Size":5,"CumulativeSize":%d,"Blocks":%d,"Type":"file"}`+"\n", st.Hash, st.CumulativeSize, st.Blocks) {
		t.Fatalf("json %s", got)
	}
	resp = rpcPost(t, srv, "files/stat", url.Values{"arg": {"/f"}, "hash": {"true"}, "size": {"true"}}, nil, "")
	wantErrorJSON(t, resp, 400, "invalid parameters: format was set by multiple options. Only one format option is allowed")

	loc := mustCall(t, n, "files/stat", []string{"/"}, map[string]string{"with-local": "true"}, nil).Values[0].(*commands.FilesStatOutput)
	if !loc.WithLocality || !loc.Local || loc.SizeLocal != root.CumulativeSize {
		t.Fatalf("with-local %+v (cumulative %d)", loc, root.CumulativeSize)
	}
	// An /ipfs/ path is resolved through the DAG, not MFS.
	c := addTree(t, n, nil, map[string]files.Node{"x": files.NewBytesFile([]byte("xyz"))})
	if st := filesStat(t, n, "/ipfs/"+c); st.Hash != c || st.Size != 3 {
		t.Fatalf("stat /ipfs/: %+v", st)
	}
	// cid-base applies.
	v1 := mustCall(t, n, "files/stat", []string{"/f"}, map[string]string{"cid-base": "base32"}, nil).Values[0].(*commands.FilesStatOutput)
	if !strings.HasPrefix(v1.Hash, "bafy") {
		t.Fatalf("cid-base=base32: %s", v1.Hash)
	}
}

// Ensure flush returns the root, chcid changes a directory's CID format,
// and the MFS root itself cannot be changed.
func TestFiles_FlushChcid(t *testing.T) {
	n := testutil.MustOpenNode(t)
	mustCall(t, n, "files/mkdir", []string{"/d"}, nil, nil)
	filesWrite(t, n, "/d/f", []byte("x"), create)
	fl := mustCall(t, n, "files/flush", nil, nil, nil).Values[0].(*commands.FilesFlushOutput)
	if fl.Cid != filesStat(t, n, "/").Hash {
		t.Fatalf("flush %s, stat / %s", fl.Cid, filesStat(t, n, "/").Hash)
	}
	wantErr(t, callErr(t, n, "files/chcid", []string{"/"}, map[string]string{"cid-version": "1"}, nil),
		"cannot change CID format of the MFS root; use 'ipfs config Import.CidVersion' and 'ipfs config Import.HashFunction' instead")
	wantErr(t, callErr(t, n, "files/chcid", nil, map[string]string{"cid-version": "1"}, nil),
		"cannot change CID format of the MFS root; use 'ipfs config Import.CidVersion' and 'ipfs config Import.HashFunction' instead")
	before := filesStat(t, n, "/d").Hash
	mustCall(t, n, "files/chcid", []string{"/d"}, nil, nil)
	if h := filesStat(t, n, "/d").Hash; h != before {
		t.Fatalf("chcid without options changed %s to %s", before, h)
	}
	mustCall(t, n, "files/chcid", []string{"/d"}, map[string]string{"cid-version": "1"}, nil)
	if h := filesStat(t, n, "/d").Hash; !strings.HasPrefix(h, "bafy") {
		t.Fatalf("chcid v1: %s", h)
	}
	wantErr(t, callErr(t, n, "files/chcid", []string{"/d/f"}, map[string]string{"cid-version": "1"}, nil), "can only update directories")
	// The root published at /local/filesroot follows.
	m, err := n.MFS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Published().String(); got != filesStat(t, n, "/").Hash {
		t.Fatalf("published %s, stat / %s", got, filesStat(t, n, "/").Hash)
	}
}

// Ensure flush=false defers publishing, is limited as Kubo's, and that a
// later flush publishes everything.
func TestFiles_NoFlush(t *testing.T) {
	n := testutil.MustOpenNode(t)
	m, err := n.MFS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := m.Published()
	filesWrite(t, n, "/f", []byte("x"), map[string]string{"create": "true", "flush": "false"})
	if m.Published() != start {
		t.Fatal("flush=false published the root")
	}
	if got := filesRead(t, n, "/f", nil); string(got) != "x" {
		t.Fatalf("read unflushed: %q", got)
	}
	defer func(v int64) { node.MFSNoFlushLimit = v }(node.MFSNoFlushLimit)
	node.MFSNoFlushLimit = 2
	mustCall(t, n, "files/mkdir", []string{"/d"}, map[string]string{"flush": "false"}, nil)
	err = callErr(t, n, "files/mkdir", []string{"/e"}, map[string]string{"flush": "false"}, nil)
	wantErrPrefix(t, err, "reached limit of 2 unflushed MFS operations.")
	fl := mustCall(t, n, "files/flush", []string{"/"}, nil, nil).Values[0].(*commands.FilesFlushOutput)
	if m.Published().String() != fl.Cid || fl.Cid == start.String() {
		t.Fatalf("after flush: published %s, flush %s (start %s)", m.Published(), fl.Cid, start)
	}
	mustCall(t, n, "files/mkdir", []string{"/e"}, map[string]string{"flush": "false"}, nil)
}

// Ensure the MFS root survives closing and reopening the repo, and a GC.
func TestFiles_Root_PersistsAcrossRestartAndGC(t *testing.T) {
	dir := testutil.MustInitRepo(t)
	ctx := context.Background()
	n, err := node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := noise(600 << 10)
	filesWrite(t, n, "/docs/big.bin", big, map[string]string{"create": "true", "parents": "true"})
	filesWrite(t, n, "/docs/small", []byte("small"), create)
	filesWrite(t, n, "/gone", noise(300<<10), create)
	mustCall(t, n, "files/rm", []string{"/gone"}, nil, nil)
	rootHash := filesStat(t, n, "/").Hash
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n, err = node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if h := filesStat(t, n, "/").Hash; h != rootHash {
		t.Fatalf("root after restart %s, want %s", h, rootHash)
	}
	// Nothing is pinned: only the MFS root keeps the files.
	res, err := n.Storage().CollectGarbage(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed == 0 {
		t.Fatal("gc removed nothing: the removed file's blocks should go")
	}
	if got := filesRead(t, n, "/docs/big.bin", nil); !bytes.Equal(got, big) {
		t.Fatal("big.bin differs after gc")
	}
	if got := filesRead(t, n, "/docs/small", nil); string(got) != "small" {
		t.Fatalf("small after gc: %q", got)
	}
	// Every block of the tree is still stored.
	var bad []string
	if err := n.Dag().Verify(ctx, cid.MustParse(rootHash), func(c cid.Cid, err error) { bad = append(bad, c.String()+": "+err.Error()) }); err != nil || len(bad) > 0 {
		t.Fatalf("verify after gc: %v %v", bad, err)
	}
	// A second collection finds nothing more.
	if res, err := n.Storage().CollectGarbage(ctx, nil); err != nil || res.Removed != 0 {
		t.Fatalf("second gc removed %d (%v)", res.Removed, err)
	}
}

// Ensure a repo without a root gets an empty one, and GC during MFS
// writes never takes blocks a write is building.
func TestFiles_GCDuringWrites(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	if st := filesStat(t, n, "/"); st.Hash != "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn" {
		t.Fatalf("fresh root %s", st.Hash)
	}
	want := map[string][]byte{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := n.Storage().CollectGarbage(ctx, nil); err != nil && err != node.ErrGCRunning {
				t.Errorf("gc: %v", err)
				return
			}
		}
	}()
	for i := 0; i < 20; i++ {
		b := noise(100<<10 + i)
		p := fmt.Sprintf("/g/f%d", i)
		want[p] = b
		filesWrite(t, n, p, b, map[string]string{"create": "true", "parents": "true"})
	}
	close(stop)
	wg.Wait()
	if _, err := n.Storage().CollectGarbage(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for p, b := range want {
		if got := filesRead(t, n, p, nil); !bytes.Equal(got, b) {
			t.Fatalf("%s differs after concurrent gc", p)
		}
	}
}

// Ensure concurrent writes to different files (same and different
// directories) do not corrupt each other.
func TestFiles_Write_Concurrent(t *testing.T) {
	dir := testutil.MustInitRepo(t)
	ctx := context.Background()
	n, err := node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, n, "files/mkdir", []string{"/shared"}, nil, nil)
	const workers = 8
	want := make([][]byte, workers)
	paths := make([]string, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := 0; i < workers; i++ {
		want[i] = noise(300<<10 + i*1000)
		if i%2 == 0 {
			paths[i] = fmt.Sprintf("/shared/f%d", i)
		} else {
			paths[i] = fmt.Sprintf("/own%d/f", i)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Each file is written in pieces, at increasing offsets.
			b := want[i]
			for off := 0; off < len(b); off += 64 << 10 {
				end := min(off+64<<10, len(b))
				opts := map[string]string{"create": "true", "parents": "true", "offset": fmt.Sprint(off)}
				if _, err := rpc.Call(ctx, n, commands.DefaultTable, "files/write", []string{paths[i]}, opts, dataArg(b[off:end])); err != nil {
					errs <- fmt.Errorf("%s: %w", paths[i], err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check := func(n *node.Node) {
		for i, p := range paths {
			if got := filesRead(t, n, p, nil); !bytes.Equal(got, want[i]) {
				t.Fatalf("%s: %d bytes read, want %d, content differs", p, len(got), len(want[i]))
			}
		}
		ls := mustCall(t, n, "files/ls", []string{"/shared"}, nil, nil).Values[0].(*commands.FilesLsOutput)
		if len(ls.Entries) != workers/2 {
			t.Fatalf("/shared has %d entries", len(ls.Entries))
		}
	}
	check(n)
	root := filesStat(t, n, "/").Hash
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// The published root holds every file.
	n, err = node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if h := filesStat(t, n, "/").Hash; h != root {
		t.Fatalf("root after reopen %s, want %s", h, root)
	}
	check(n)
}

// Ensure the wire shapes: empty 200 for write, JSON for ls (null
// entries for an empty directory), a byte stream for read.
func TestFiles_HTTP_Shapes(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)

	resp := rpcPost(t, srv, "files/ls", url.Values{"arg": {"/"}}, nil, "")
	if got := string(readAll(t, resp.Body)); got != `{"Entries":null}`+"\n" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("ls empty root: %q %v", got, resp.Header)
	}

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "")
	fw.Write([]byte("hello\n"))
	mw.Close()
	resp = rpcPost(t, srv, "files/write", url.Values{"arg": {"/a/b"}, "create": {"true"}, "parents": {"true"}}, &body, mw.FormDataContentType())
	if got := readAll(t, resp.Body); resp.StatusCode != 200 || len(got) != 0 || resp.Header.Get("X-Chunked-Output") != "1" {
		t.Fatalf("write: %d %q %v", resp.StatusCode, got, resp.Header)
	}
	resp = rpcPost(t, srv, "files/ls", url.Values{"arg": {"/a"}}, nil, "")
	if got := string(readAll(t, resp.Body)); got != `{"Entries":[{"Name":"b","Type":0,"Size":0,"Hash":""}]}`+"\n" {
		t.Fatalf("ls /a: %q", got)
	}
	resp = rpcPost(t, srv, "files/read", url.Values{"arg": {"/a/b"}, "offset": {"1"}}, nil, "")
	if got := string(readAll(t, resp.Body)); got != "ello\n" || resp.Header.Get("X-Stream-Output") != "1" || resp.Header.Get("X-Content-Length") != "" {
		t.Fatalf("read: %q %v", got, resp.Header)
	}
	resp = rpcPost(t, srv, "files/ls", url.Values{"arg": {"/"}, "long": {"true"}, "encoding": {"text"}}, nil, "")
	if got := string(readAll(t, resp.Body)); !strings.HasPrefix(got, "a/\tQm") || !strings.HasSuffix(got, "\t0\n") {
		t.Fatalf("ls -l text: %q", got)
	}
	resp = rpcPost(t, srv, "files/mkdir", url.Values{"arg": {"/a"}}, nil, "")
	wantErrorJSON(t, resp, 500, "file already exists")
	resp = rpcPost(t, srv, "files/write", url.Values{"arg": {"/x"}}, nil, "")
	if got := readAll(t, resp.Body); resp.StatusCode != http.StatusBadRequest || string(got) != "file argument 'data' is required\n" {
		t.Fatalf("write without body: %d %q", resp.StatusCode, got)
	}
}

// Ensure add --to-files puts each added entry into MFS, with Kubo's
// errors, which come after the entry's events (the entry stays added and
// pinned), as Kubo answers them.
func TestAdd_ToFiles(t *testing.T) {
	n := testutil.MustOpenNode(t)
	two := func() files.Directory {
		return files.NewMapDirectory(map[string]files.Node{
			"a.txt": files.NewBytesFile([]byte("aaa")),
			"b.txt": files.NewBytesFile([]byte("bbb")),
		})
	}
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil, map[string]string{"to-files": "/dir/"}, two())
	wantErrPrefix(t, err, `to-files: MFS destination directory "/dir/" does not exist: `)
	if len(res.Values) != 1 || res.Values[0].(*node.AddEvent).Name != "a.txt" {
		t.Fatalf("events before the to-files error: %+v", res.Values)
	}
	if _, ok := pinState(t, testutil.StartServer(t, n))[res.Values[0].(*node.AddEvent).Hash]; !ok {
		t.Fatal("the entry added before the to-files error is not pinned")
	}
	mustCall(t, n, "files/mkdir", []string{"/dir"}, nil, nil)
	res = mustCall(t, n, "add", nil, map[string]string{"to-files": "/dir/"}, two())
	if len(res.Values) != 2 {
		t.Fatalf("events %d", len(res.Values))
	}
	for _, v := range res.Values {
		ev := v.(*node.AddEvent)
		if got := filesStat(t, n, "/dir/"+ev.Name).Hash; got != ev.Hash {
			t.Fatalf("/dir/%s is %s, added %s", ev.Name, got, ev.Hash)
		}
	}
	// A file destination takes one entry only.
	err = callErr(t, n, "add", nil, map[string]string{"to-files": "/single"}, two())
	wantErr(t, err, `to-files: MFS destination is a file: only one entry can be copied to "/single"`)
	if got := filesRead(t, n, "/single", nil); string(got) != "aaa" {
		t.Fatalf("/single: %q", got)
	}
	// An empty value is the root.
	mustCall(t, n, "add", nil, map[string]string{"to-files": ""}, files.NewMapDirectory(map[string]files.Node{
		"top": files.NewBytesFile([]byte("top"))}))
	if got := filesRead(t, n, "/top", nil); string(got) != "top" {
		t.Fatalf("/top: %q", got)
	}
	wantErr(t, callErr(t, n, "add", nil, map[string]string{"to-files": "/single/"}, two()), `to-files: MFS destination "/single/" is not a directory`)
	wantErrPrefix(t, callErr(t, n, "add", nil, map[string]string{"to-files": "/no/such"}, two()),
		`to-files: MFS destination parent "/no/such" "/no" does not exist: `)
	wantErr(t, callErr(t, n, "add", nil, map[string]string{"to-files": "rel"}, two()), "to-files: paths must start with a leading slash")
	wantErr(t, callErr(t, n, "add", nil, map[string]string{"to-files": "/x", "only-hash": "true"}, two()), "only-hash and to-files options are not compatible")
	wantErr(t, callErr(t, n, "add", nil, map[string]string{"to-files": "/x", "wrap-with-directory": "true"}, two()), "wrap-with-directory and to-files options are not compatible")
	wantErr(t, callErr(t, n, "add", nil, map[string]string{"to-files": "/x"}, files.NewMapDirectory(map[string]files.Node{
		"": files.NewBytesFile([]byte("stdin"))})), "to-files: cannot add unnamed files to MFS")
	// A directory goes in whole.
	mustCall(t, n, "add", nil, map[string]string{"to-files": "/tree"}, files.NewMapDirectory(map[string]files.Node{
		"d": files.NewMapDirectory(map[string]files.Node{"x": files.NewBytesFile([]byte("x"))})}))
	if got := filesRead(t, n, "/tree/x", nil); string(got) != "x" {
		t.Fatalf("/tree/x: %q", got)
	}
}

// Ensure files commands stream big reads without loading the whole file
// (a reader sees the bytes as they come) and honour client cancellation.
func TestFiles_Read_Streams(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	big := noise(2 << 20)
	filesWrite(t, n, "/big", big, create)
	resp := rpcPost(t, srv, "files/read", url.Values{"arg": {"/big"}}, nil, "")
	head := make([]byte, 1000)
	if _, err := io.ReadFull(resp.Body, head); err != nil || !bytes.Equal(head, big[:1000]) {
		t.Fatalf("first bytes: %v", err)
	}
	rest := readAll(t, resp.Body)
	if !bytes.Equal(append(head, rest...), big) {
		t.Fatal("stream differs")
	}
}

// Ensure MFS writes count against Datastore.StorageMax: a write that
// does not fit fails, and what fitted before stays readable.
func TestFiles_Write_StorageMax(t *testing.T) {
	n := testutil.MustOpenNode(t)
	mustCall(t, n, "config", []string{"Datastore.StorageMax", "1MB"}, nil, nil)
	small := noise(100 << 10)
	filesWrite(t, n, "/small", small, create)
	err := callErr(t, n, "files/write", []string{"/big"}, create, dataArg(noise(2<<20)))
	if !strings.Contains(err.Error(), "storage limit reached") {
		t.Fatalf("big write: %v", err)
	}
	if got := filesRead(t, n, "/small", nil); !bytes.Equal(got, small) {
		t.Fatal("/small differs after the refused write")
	}
	if used, _ := n.Storage().Usage(); used > 1000000 {
		t.Fatalf("usage %d over the cap", used)
	}
}

// Ensure files/rm of paths it cannot remove answers as Kubo: 200, one
// JSON string per path, and the trailer "can't remove some files".
func TestFilesRm_Errors_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	mustCall(t, n, "files/mkdir", []string{"/dir"}, nil, nil)
	resp := rpcPost(t, srv, "files/rm", url.Values{"arg": {"/nope", "/dir", "/"}}, nil, "")
	b := readAll(t, resp.Body)
	want := `"/nope: file does not exist"` + "\n" + `"/dir: path is a directory, use -r to remove directories"` + "\n" + `"/: cannot delete root"` + "\n"
	if resp.StatusCode != 200 || string(b) != want || resp.Trailer.Get("X-Stream-Error") != "can't remove some files" {
		t.Fatalf("files/rm: %d %q trailer %q", resp.StatusCode, b, resp.Trailer.Get("X-Stream-Error"))
	}
}

// Ensure files/write with count reads the whole upload before it
// answers: a large body cut short by count reset the connection under
// the client (kubo-rpc-client saw ECONNRESET).
func TestFilesWrite_Count_ReadsWholeBody(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, _ := mw.CreateFormFile("file", "")
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for i := 0; i < 32; i++ {
			if _, err := w.Write(chunk); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		mw.Close()
		pw.Close()
	}()
	q := url.Values{"arg": {"/big"}, "create": {"true"}, "count": {"10"}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v0/files/write?"+q.Encode(), pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("files/write of 32 MiB with count=10: %v", err)
	}
	readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	st := mustCall(t, n, "files/stat", []string{"/big"}, nil, nil).Values[0].(*commands.FilesStatOutput)
	if st.Size != 10 {
		t.Fatalf("size %d", st.Size)
	}
}
