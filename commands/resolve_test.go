package commands_test

import (
	"fmt"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

// resolveOne runs resolve and returns its Path.
func resolveOne(t *testing.T, n *node.Node, arg string, opts map[string]string) string {
	t.Helper()
	res := blkCall(t, n, "resolve", []string{arg}, opts, nil)
	if len(res.Values) != 1 {
		t.Fatalf("resolve %s: %d values", arg, len(res.Values))
	}
	return res.Values[0].(*commands.ResolvedPath).Path
}

func TestResolve_IPFSPaths(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "d", files.NewMapDirectory(map[string]files.Node{
		"sub":   files.NewMapDirectory(map[string]files.Node{"f.txt": files.NewBytesFile([]byte("hello"))}),
		"a.txt": files.NewBytesFile([]byte("a")),
	}), nil)
	sub := lsKey(t, n, root+"/sub")
	f := lsKey(t, n, root+"/sub/f.txt")
	for _, tc := range []struct{ arg, want string }{
		{"/ipfs/" + root, "/ipfs/" + root},
		{root, "/ipfs/" + root},
		{"/ipfs/" + root + "/sub", "/ipfs/" + sub},
		{root + "/sub/f.txt", "/ipfs/" + f},
		{"/ipfs/" + root + "/sub/f.txt/", "/ipfs/" + f},
	} {
		if got := resolveOne(t, n, tc.arg, nil); got != tc.want {
			t.Errorf("resolve %s = %s, want %s", tc.arg, got, tc.want)
		}
	}
	// --cid-base re-encodes (CIDv0 upgraded), the argument's base is kept otherwise.
	c, _ := cid.Decode(f)
	b32 := cid.NewCidV1(c.Type(), c.Hash()).String()
	if got := resolveOne(t, n, "/ipfs/"+root+"/sub/f.txt", map[string]string{"cid-base": "base32"}); got != "/ipfs/"+b32 {
		t.Errorf("cid-base base32: %s", got)
	}
	rc, _ := cid.Decode(root)
	root1 := cid.NewCidV1(rc.Type(), rc.Hash()).String()
	if got := resolveOne(t, n, "/ipfs/"+root1+"/sub/f.txt", nil); got != "/ipfs/"+b32 {
		t.Errorf("v1 argument: %s, want %s", got, "/ipfs/"+b32)
	}
	// Errors as Kubo's.
	msg := blkCallErr(t, n, "resolve", []string{"/ipfs/" + root + "/nope"}, nil, nil)
	if want := fmt.Sprintf("no link named %q under %s", "nope", root); msg != want {
		t.Errorf("missing link: %q, want %q", msg, want)
	}
	if msg := blkCallErr(t, n, "resolve", []string{"/ipfs/notacid"}, nil, nil); !strings.Contains(msg, "invalid") {
		t.Errorf("bad CID: %q", msg)
	}
	if msg := blkCallErr(t, n, "resolve", []string{"/foo/" + root}, nil, nil); !strings.Contains(msg, "invalid path") {
		t.Errorf("bad namespace: %q", msg)
	}
}

func TestResolve_HAMTAndDagCbor(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Import.UnixFSHAMTDirectorySizeThreshold": "100B"})
	entries := map[string]files.Node{"zdir": files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile([]byte("in"))})}
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("f%02d", i)
		entries[name] = files.NewBytesFile([]byte(name))
	}
	root := blkAdd(t, n, "h", files.NewMapDirectory(entries), map[string]string{"max-hamt-fanout": "8"})
	for _, p := range []string{"f07", "zdir/f"} {
		want := "/ipfs/" + lsKey(t, n, root+"/"+p)
		if got := resolveOne(t, n, "/ipfs/"+root+"/"+p, nil); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		}
	}
	// A path inside a dag-cbor node stops at the node and keeps the rest.
	leaf := dagPutJSON(t, n, `{"x":{"y":1}}`, nil)
	top := dagPutJSON(t, n, `{"l":{"/":"`+leaf+`"}}`, nil)
	if got, want := resolveOne(t, n, "/ipfs/"+top+"/l/x/y", nil), "/ipfs/"+leaf+"/x/y"; got != want {
		t.Errorf("dag-cbor: %s, want %s", got, want)
	}
}

func TestResolve_Text(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "d", files.NewMapDirectory(map[string]files.Node{"a": files.NewBytesFile([]byte("a"))}), nil)
	srv := testutil.StartServer(t, n)
	resp := rpcPost(t, srv, "resolve", map[string][]string{"arg": {"/ipfs/" + root + "/a"}}, nil, "")
	if got, want := strings.TrimSpace(string(readAll(t, resp.Body))), `{"Path":"/ipfs/`+lsKey(t, n, root+"/a")+`"}`; got != want {
		t.Errorf("wire: %s, want %s", got, want)
	}
}
