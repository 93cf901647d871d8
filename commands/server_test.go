package commands_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

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

// Ensure a client that goes away mid-upload leaves the store consistent
// and the server serving.
func TestAdd_ClientDisconnectMidUpload(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	head := "POST /api/v0/add HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nTransfer-Encoding: chunked\r\n\r\n"
	part := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big\"\r\n\r\n"
	c.Write([]byte(head))
	chunk := func(b []byte) {
		c.Write([]byte(strings.ToUpper(strconvHex(len(b))) + "\r\n"))
		c.Write(b)
		c.Write([]byte("\r\n"))
	}
	chunk([]byte(part))
	buf := make([]byte, 64<<10)
	for i := 0; i < 20; i++ {
		rand.Read(buf)
		chunk(buf)
	}
	c.Close()
	time.Sleep(200 * time.Millisecond)
	if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatal(errs)
	}
	resp, _ := testutil.PostURL(t, srv.URL+"/api/v0/version", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("server after disconnect: %d", resp.StatusCode)
	}
}

func strconvHex(n int) string {
	const digits = "0123456789abcdef"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 16 {
		b = append([]byte{digits[n%16]}, b...)
	}
	return string(b)
}

// Ensure a multi-file add streams events before the upload ends and
// wrap-with-directory ends with the wrapper.
func TestAdd_WrapTwoFiles(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, name := range []string{"a.txt", "b.txt"} {
		w, _ := mw.CreateFormFile("file", name)
		w.Write([]byte(name))
	}
	mw.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/api/v0/add?wrap-with-directory=true", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var names []string
	for {
		var ev node.AddEvent
		if err := dec.Decode(&ev); err != nil {
			break
		}
		names = append(names, ev.Name)
	}
	if strings.Join(names, ",") != "a.txt,b.txt," {
		t.Fatalf("events %q", names)
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
