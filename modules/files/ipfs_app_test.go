package files_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/node"
	"cairn/node/config"

	bfiles "github.com/ipfs/boxo/files"
)

// The http_ipfs app is the node's HTTP gateway on the module ports: its
// Range, formats, listing and errors are the gateway's, and its answers
// keep the module ports' opaque origin.
func TestIPFSApp_ServesThroughGateway(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{Pin: true}, func(node.AddEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	roots, err := a.AddAll(bfiles.NewMapDirectory(map[string]bfiles.Node{"dir": bfiles.NewMapDirectory(map[string]bfiles.Node{
		"hello.txt": bfiles.NewBytesFile([]byte("hello, gateway\n")),
		"sub":       bfiles.NewMapDirectory(map[string]bfiles.Node{"x.txt": bfiles.NewBytesFile([]byte("x"))}),
	})}))
	if err != nil {
		t.Fatal(err)
	}
	root := roots[0].String()
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_ipfs"}
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler), Gateway: testutil.Gateway(t, n)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if f := h.Failed()["http_ipfs"]; f != nil {
		t.Fatal(f)
	}
	u := h.Listeners()[0].URL() + "/ipfs/" + root
	for _, tc := range []struct {
		name, path string
		hdr        []string
		code       int
		body, ty   string
	}{
		{"file", "/hello.txt", nil, 200, "hello, gateway\n", "text/plain; charset=utf-8"},
		{"range", "/hello.txt", []string{"Range", "bytes=7-13"}, 206, "gateway", "text/plain; charset=utf-8"},
		{"listing", "/", nil, 200, `class="ipfs-hash"`, "text/html"},
		{"raw block", "?format=raw", nil, 200, "", "application/vnd.ipld.raw"},
		{"tar", "/hello.txt?format=tar", nil, 200, "hello, gateway", "application/x-tar"},
		{"missing", "/nope.txt", nil, 404, "", "text/plain; charset=utf-8"},
	} {
		r := get(t, u+tc.path, tc.hdr...)
		if r.code != tc.code || !strings.Contains(r.body, tc.body) || r.h.Get("Content-Type") != tc.ty {
			t.Errorf("%s: got %d %q %.80q, want %d %q %q", tc.name, r.code, r.h.Get("Content-Type"), r.body, tc.code, tc.ty, tc.body)
		}
		if r.h.Get("Content-Security-Policy") != "sandbox allow-scripts allow-forms allow-popups allow-modals" || r.h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: CSP %q, nosniff %q", tc.name, r.h.Get("Content-Security-Policy"), r.h.Get("X-Content-Type-Options"))
		}
		if r.h.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", tc.name)
		}
	}
	if r := get(t, u+"/sub"); r.code != 301 || r.h.Get("Location") != "/ipfs/"+root+"/sub/" {
		t.Errorf("directory without its slash: got %d %q", r.code, r.h.Get("Location"))
	}
	if resp := head(t, u+"/hello.txt"); resp.StatusCode != 200 || resp.Header.Get("Content-Length") != "15" || resp.Header.Get("Etag") == "" {
		t.Errorf("HEAD: got %d %v", resp.StatusCode, resp.Header)
	}
}

// Without the node's gateway, http_ipfs does not load (there is no other
// /ipfs/ code to serve with).
func TestIPFSApp_NeedsGateway(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_ipfs"}
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if f := h.Failed()["http_ipfs"]; f == nil || !strings.Contains(f.Error(), "gateway") {
		t.Errorf("loaded without a gateway: %v", f)
	}
}
