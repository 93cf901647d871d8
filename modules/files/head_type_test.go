package files_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/modules/files"
	"cairn/node"

	bfiles "github.com/ipfs/boxo/files"
)

func head(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := client.Head(url)
	if err != nil {
		t.Fatalf("HEAD %s: %v", url, err)
	}
	resp.Body.Close()
	return resp
}

// Ensure HEAD of a streamed (over 64 KiB) file gets headers.
func TestServe_Head_BigFile(t *testing.T) {
	u := serveApp(t, map[string]any{"GET /*": files.Serve(files.Options{Path: tree(t)})})
	for _, p := range []string{"/files/big.bin", "/files/a.txt"} {
		resp := head(t, u+p)
		want := map[string]string{"/files/big.bin": strconv.Itoa(200 << 10), "/files/a.txt": "5"}[p]
		if resp.StatusCode != 200 || resp.Header.Get("Content-Length") != want || resp.Header.Get("Etag") == "" {
			t.Errorf("HEAD %s: %d %v, want 200 with Content-Length %s", p, resp.StatusCode, resp.Header, want)
		}
	}
	// The connection is still good for a GET after the HEADs.
	if r := get(t, u+"/files/big.bin"); r.code != 200 || len(r.body) != 200<<10 {
		t.Errorf("GET after HEAD: %d %d", r.code, len(r.body))
	}
}

// Ensure serve("<file>") on an exact route types the file by
// its own name, and mime_map wins over the built-in map.
func TestServe_ExactFile_TypeAndMimeMap(t *testing.T) {
	root := tree(t)
	u := serveApp(t, map[string]any{
		"GET /a":     files.Serve(files.Options{Path: root + "/a.txt"}),
		"GET /style": files.Serve(files.Options{Path: root + "/style.css", MimeMap: map[string]string{"css": "text/x-mine"}}),
		"GET /big":   files.Serve(files.Options{Path: root + "/big.bin"}),
		"GET /m/*":   files.Serve(files.Options{Path: root, MimeMap: map[string]string{"txt": "text/plain; charset=utf-8"}}),
	})
	for p, want := range map[string]string{
		"/files/a":           "text/plain",
		"/files/style":       "text/x-mine",
		"/files/m/a.txt":     "text/plain; charset=utf-8",
		"/files/m/page.html": "text/html",
	} {
		if r := get(t, u+p); r.code != 200 || r.h.Get("Content-Type") != want {
			t.Errorf("%s: %d type %q, want %q", p, r.code, r.h.Get("Content-Type"), want)
		}
	}
	if resp := head(t, u+"/files/big"); resp.StatusCode != 200 || resp.Header.Get("Content-Length") != strconv.Itoa(200<<10) {
		t.Errorf("HEAD of an exact big file: %d %v", resp.StatusCode, resp.Header)
	}
}

// serve() of the node's /ipfs/ types nameless content by sniffing, with
// nosniff, and HEAD of a big block-backed file answers.
func TestServe_IPFS_SniffAndHead(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{Pin: true, Wrap: true}, func(node.AddEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 300<<10)
	roots, err := a.AddAll(bfiles.NewMapDirectory(map[string]bfiles.Node{
		"page":    bfiles.NewBytesFile([]byte("<!DOCTYPE html><html><body>hi</body></html>")),
		"pic.png": bfiles.NewBytesFile([]byte("not really a png")),
		"big":     bfiles.NewBytesFile(big),
	}))
	if err != nil {
		t.Fatal(err)
	}
	root := roots[0].String()
	u := serveApp(t, map[string]any{"GET /*": files.Serve(files.Options{Path: "/ipfs", Node: modules.ViewOf(n)})})
	for p, want := range map[string]string{"page": "text/html; charset=utf-8", "pic.png": "image/png", "big": "application/octet-stream"} {
		r := get(t, u+"/files/"+root+"/"+p)
		if r.code != 200 || r.h.Get("Content-Type") != want || r.h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d type %q nosniff %q, want %q", p, r.code, r.h.Get("Content-Type"), r.h.Get("X-Content-Type-Options"), want)
		}
	}
	if resp := head(t, u+"/files/"+root+"/big"); resp.StatusCode != 200 || resp.Header.Get("Content-Length") != strconv.Itoa(300<<10) {
		t.Errorf("HEAD of a big /ipfs/ file: %d %v", resp.StatusCode, resp.Header)
	}
}
