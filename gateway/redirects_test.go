package gateway_test

import (
	"context"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

// A _redirects file at the root of a subdomain site: redirects,
// rewrites and custom 404 pages for missing paths only.
func TestGateway_Redirects(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{}, func(node.AddEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	roots, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{"site": files.NewMapDirectory(map[string]files.Node{
		"_redirects": files.NewBytesFile([]byte("/old /new.txt 301\n/app/* /index.html 200\n/* /404.html 404\n")),
		"new.txt":    files.NewBytesFile([]byte("new")),
		"index.html": files.NewBytesFile([]byte("app")),
		"404.html":   files.NewBytesFile([]byte("gone")),
	})}))
	if err != nil {
		t.Fatal(err)
	}
	s := &site{n: n, root: roots[0], url: serve(t, n, gatewayOptionsOffline)}
	port := s.url[strings.LastIndex(s.url, ":")+1:]
	host := cid.NewCidV1(s.root.Type(), s.root.Hash()).String() + ".ipfs.localhost:" + port
	for _, tc := range []struct {
		path, body, location string
		code                 int
	}{
		{"/new.txt", "new", "", 200},
		{"/old?x=1", "", "/new.txt?x=1", 301},
		{"/app/a/b", "app", "", 200},
		{"/nothing", "gone", "", 404},
	} {
		resp, body := s.do(t, "GET", tc.path, "Host", host)
		if resp.StatusCode != tc.code || (tc.body != "" && string(body) != tc.body) || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s: got %d %q Location %q, want %d %q %q", tc.path, resp.StatusCode, body, resp.Header.Get("Location"), tc.code, tc.body, tc.location)
		}
	}
	// On the path gateway the file is just a file.
	resp, _ := s.do(t, "GET", "/ipfs/"+s.root.String()+"/old")
	if resp.StatusCode != 404 {
		t.Errorf("path gateway: got %d", resp.StatusCode)
	}
}
