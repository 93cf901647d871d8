package commands_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
)

// Ensure cat of a symlink answers its target text, as Kubo (boxo's
// files.Symlink is a readable File), and that a zero-byte cat (empty
// file, offset at or past the end, length=0) is a byte stream as Kubo's:
// text/plain, X-Stream-Output: 1, X-Content-Length: 0.
func TestCat_SymlinkAndZeroBytes_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root := addTree(t, n, nil, map[string]files.Node{"d": files.NewMapDirectory(map[string]files.Node{
		"a.txt": files.NewBytesFile([]byte("hello")),
		"empty": files.NewBytesFile(nil),
		"link":  files.NewLinkFile("a.txt", nil),
	})})
	resp := rpcPost(t, srv, "cat", url.Values{"arg": {root + "/link"}}, nil, "")
	if b := readAll(t, resp.Body); resp.StatusCode != 200 || string(b) != "a.txt" || resp.Header.Get("X-Content-Length") != "5" {
		t.Fatalf("cat of a symlink: %d %q X-Content-Length %q", resp.StatusCode, b, resp.Header.Get("X-Content-Length"))
	}
	for _, q := range []url.Values{
		{"arg": {root + "/empty"}},
		{"arg": {root + "/a.txt"}, "offset": {"5"}},
		{"arg": {root + "/a.txt"}, "offset": {"9"}},
		{"arg": {root + "/a.txt"}, "length": {"0"}},
		{"arg": {root + "/a.txt", root + "/empty"}, "offset": {"7"}},
	} {
		resp := rpcPost(t, srv, "cat", q, nil, "")
		b := readAll(t, resp.Body)
		h := resp.Header
		if resp.StatusCode != 200 || len(b) != 0 || h.Get("Content-Type") != "text/plain" || h.Get("X-Stream-Output") != "1" ||
			h.Get("X-Content-Length") != "0" || h.Get("X-Chunked-Output") != "" {
			t.Fatalf("cat %v: %d %q headers %v", q, resp.StatusCode, b, h)
		}
	}
}

// Ensure a block missing in the middle of a file ends a cat with a
// truncated body and the X-Stream-Error trailer, not a 500.
func TestCat_MissingBlockMidStream(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	data := make([]byte, 1<<20)
	rand.Read(data)
	root := addBytes(t, n, data, nil)
	nd, err := n.DAG.Get(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	links := nd.Links()
	if len(links) != 4 {
		t.Fatalf("got %d links, want 4", len(links))
	}
	if err := n.Blocks.DeleteBlock(context.Background(), links[2].Cid); err != nil {
		t.Fatal(err)
	}
	resp, body := testutil.PostURL(t, srv.URL+"/api/v0/cat?arg="+root.String(), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := resp.Header.Get("X-Content-Length"); got != "1048576" {
		t.Errorf("X-Content-Length %q", got)
	}
	if len(body) != 2*262144 || !bytes.Equal(body, data[:len(body)]) {
		t.Errorf("got %d bytes, want the first 524288 bytes intact", len(body))
	}
	if tr := resp.Trailer.Get("X-Stream-Error"); !strings.Contains(tr, links[2].Cid.String()) {
		t.Errorf("trailer %q does not name the missing block %s", tr, links[2].Cid)
	}
	if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatal(errs)
	}
}

// Ensure cat of a directory is Kubo's error.
func TestCat_Directory(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	dir := files.NewMapDirectory(map[string]files.Node{"d": files.NewMapDirectory(map[string]files.Node{"a": files.NewBytesFile([]byte("a"))})})
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Values[len(res.Values)-1].(*node.AddEvent).Hash
	resp, body := testutil.PostURL(t, srv.URL+"/api/v0/cat?arg="+d, nil)
	if resp.StatusCode != 500 || !strings.Contains(string(body), `"this dag node is a directory"`) {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
}

// Ensure a client that goes away in the middle of a cat stops the command
// and leaves the server serving.
func TestCat_ClientDisconnectMidStream(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	data := make([]byte, 8<<20)
	rand.Read(data)
	root := addBytes(t, n, data, nil)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("POST /api/v0/cat?arg=" + root.String() + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"))
	buf := make([]byte, 64<<10)
	if _, err := io.ReadAtLeast(c, buf, len(buf)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for i := 0; i < 5; i++ {
		resp, body := testutil.PostURL(t, srv.URL+"/api/v0/cat?arg="+root.String()+"&length=10", nil)
		if resp.StatusCode != 200 || !bytes.Equal(body, data[:10]) {
			t.Fatalf("after disconnect: %d %q", resp.StatusCode, body)
		}
	}
	if errs := n.Store.Check(storage.CheckOptions{}); len(errs) > 0 {
		t.Fatal(errs)
	}
}
