package files_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/modules/events"
	"cairn/modules/files"
	"cairn/modules/httpapp"
	"cairn/modules/modapi"

	"cairn/node"
	bfiles "github.com/ipfs/boxo/files"
)

func serveApp(t *testing.T, routes map[string]any) string {
	t.Helper()
	s, err := httpapp.NewServer(httpapp.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(&httpapp.App{Module: "http_files", Routes: routes}); err != nil {
		t.Fatal(err)
	}
	l, err := s.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return l.URL()
}

var client = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type result struct {
	code int
	body string
	h    http.Header
}

func get(t *testing.T, url string, hdr ...string) result {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, string(b), resp.Header}
}

// tree makes root/{a.txt, page.html, style.css, noext, data.zzunknown,
// sub/{b.txt}, site/{index.html}, .hidden} and a secret beside root.
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for p, c := range map[string]string{
		"a.txt": "alpha", "page.html": "<p>page</p>", "style.css": "p{}", "noext": "n", "data.zzunknown": "z",
		"sub/b.txt": "beta", "site/index.html": "<h1>site</h1>", ".hidden": "h", "big.bin": strings.Repeat("B", 200<<10),
	} {
		fp := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestServe_NotModified_304(t *testing.T) {
	u := serveApp(t, map[string]any{"GET /*": files.Serve(files.Options{Path: tree(t)})})
	r := get(t, u+"/files/a.txt")
	etag, lm := r.h.Get("Etag"), r.h.Get("Last-Modified")
	if r.code != 200 || r.body != "alpha" || !strings.HasPrefix(etag, `"`) || lm == "" || r.h.Get("Content-Type") != "text/plain" {
		t.Fatalf("first GET: %d %q %v", r.code, r.body, r.h)
	}
	for _, tc := range []struct {
		hdr  []string
		code int
	}{
		{[]string{"If-None-Match", etag}, 304},
		{[]string{"If-None-Match", "W/" + etag}, 200},
		{[]string{"If-None-Match", etag + ", \"x\""}, 200},
		{[]string{"If-Modified-Since", lm}, 304},
		{[]string{"If-Modified-Since", "Sat, 01 Jan 2050 00:00:00 GMT"}, 200},
		{[]string{"If-None-Match", `"other"`, "If-Modified-Since", lm}, 200},
	} {
		r := get(t, u+"/files/a.txt", tc.hdr...)
		if r.code != tc.code {
			t.Errorf("%v: got %d, want %d", tc.hdr, r.code, tc.code)
		}
		if tc.code == 304 && (r.body != "" || r.h.Get("Etag") != etag || r.h.Get("Last-Modified") != lm) {
			t.Errorf("%v: 304 with body %q / headers %v", tc.hdr, r.body, r.h)
		}
	}
}

func TestServe_Traversal_Refused(t *testing.T) {
	u := serveApp(t, map[string]any{"GET /*": files.Serve(files.Options{Path: tree(t), DirectoryIndex: false})})
	for _, p := range []string{
		"/files/../secret",
		"/files/%2e%2e/secret",
		"/files/%2E%2E/secret",
		"/files/%252e%252e/secret",
		"/files/..%2Fsecret",
		"/files/a%2F..%2F..%2Fsecret",
		"/files/sub/..%2F..%2Fsecret",
		"/files/a%252Fb",
		"/files/%252F..%252Fsecret",
		"/files/x%2500",
		"/files/..",
		"/files/sub/../../secret",
	} {
		r := get(t, u+p)
		if r.code != 400 || strings.Contains(r.body, "SECRET") {
			t.Errorf("%s: got %d %q, want 400", p, r.code, r.body)
		}
	}
	if r := get(t, u+"/files/sub/../a.txt"); r.code != 200 || r.body != "alpha" {
		t.Errorf("/files/sub/../a.txt: got %d %q, want alpha", r.code, r.body)
	}
	if r := get(t, u+"/files/missing.txt"); r.code != 404 {
		t.Errorf("missing: got %d", r.code)
	}
}

func TestServe_Directory_RedirectIndexListing(t *testing.T) {
	root := tree(t)
	bus := &events.Bus{}
	lst := new(files.DirListing)
	if err := lst.Load(&modapi.Context{Name: "http_dir_listing", HTTPEvents: bus, Settings: &modapi.Settings{Version: "test"}}); err != nil {
		t.Fatal(err)
	}
	u := serveApp(t, map[string]any{
		"GET /*":      files.Serve(files.Options{Path: root}),
		"GET /list/*": files.Serve(files.Options{Path: root, DirectoryIndex: true, Events: bus}),
		"GET /one":    files.Serve(files.Options{Path: filepath.Join(root, "a.txt")}),
	})
	for _, tc := range []struct {
		path, loc string
		code      int
		body      string
	}{
		{path: "/files/sub?q=1", code: 301, loc: "/files/sub/"},
		{path: "/files?q=1", code: 301, loc: "/files/?q=1"},
		{path: "/files/site/", code: 200, body: "<h1>site</h1>"},
		{path: "/files/sub/", code: 403},
		{path: "/files/list/sub/", code: 200, body: `<a href="b.txt" type="text/plain">b.txt</a>`},
		{path: "/files/list/", code: 200, body: "Index of /files/list/"},
		{path: "/files/one", code: 200, body: "alpha"},
		{path: "/files/.hidden", code: 200, body: "h"},
	} {
		r := get(t, u+tc.path)
		if r.code != tc.code || r.h.Get("Location") != tc.loc || !strings.Contains(r.body, tc.body) {
			t.Errorf("%s: got %d loc %q body %.120q, want %d %q %q", tc.path, r.code, r.h.Get("Location"), r.body, tc.code, tc.loc, tc.body)
		}
	}
	r := get(t, u+"/files/list/")
	if strings.Contains(r.body, ".hidden") || !strings.Contains(r.body, `href="sub/"`) || !strings.Contains(r.body, `rel="up"`) {
		t.Errorf("listing: %s", r.body)
	}
	if r := get(t, u+"/files/big.bin"); r.code != 200 || len(r.body) != 200<<10 || r.h.Get("Content-Length") != "204800" {
		t.Errorf("streamed file: %d, %d bytes, %v", r.code, len(r.body), r.h)
	}
}

func TestTypeOf_MimeMap(t *testing.T) {
	for name, want := range map[string]string{"a.html": "text/html", "a.css": "text/css", "a.svg": "image/svg+xml", "noext": "", "dir.d/noext": ""} {
		if got := files.TypeOf(name); got != want {
			t.Errorf("TypeOf(%q) = %q, want %q", name, got, want)
		}
	}
	unknown := files.TypeOf("x.zzunknown")
	if _, err := os.Stat("/etc/mime.types"); err == nil && unknown != "application/octet-stream" {
		t.Errorf("unknown extension with mime.types: %q", unknown)
	} else if err != nil && unknown != "" {
		t.Errorf("unknown extension without mime.types: %q", unknown)
	}
}

func TestServe_IPFS_FromStorage(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{Pin: true, Wrap: true}, func(node.AddEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	roots, err := a.AddAll(bfiles.NewMapDirectory(map[string]bfiles.Node{
		"hello.txt": bfiles.NewBytesFile([]byte("hello ipfs")),
		"www":       bfiles.NewMapDirectory(map[string]bfiles.Node{"index.html": bfiles.NewBytesFile([]byte("<b>home</b>"))}),
		"big.bin":   bfiles.NewBytesFile([]byte(strings.Repeat("Z", 300<<10))),
	}))
	if err != nil {
		t.Fatal(err)
	}
	root := roots[0].String()
	bus := &events.Bus{}
	lst := new(files.DirListing)
	_ = lst.Load(&modapi.Context{Name: "http_dir_listing", HTTPEvents: bus, Settings: &modapi.Settings{}})
	view := modules.ViewOf(n)
	u := serveApp(t, map[string]any{
		"GET /gw/*":   files.Serve(files.Options{Path: "/ipfs", Node: view, DirectoryIndex: true, Events: bus}),
		"GET /site/*": files.Serve(files.Options{Path: "/ipfs/" + root + "/www", Node: view}),
	})
	r := get(t, u+"/files/gw/"+root+"/hello.txt")
	if r.code != 200 || r.body != "hello ipfs" || !strings.Contains(r.h.Get("Cache-Control"), "immutable") || r.h.Get("Content-Type") != "text/plain" {
		t.Fatalf("file: %d %q %v", r.code, r.body, r.h)
	}
	if r2 := get(t, u+"/files/gw/"+root+"/hello.txt", "If-None-Match", r.h.Get("Etag")); r2.code != 304 {
		t.Errorf("If-None-Match on a CID: got %d", r2.code)
	}
	if r := get(t, u+"/files/site/"); r.code != 200 || r.body != "<b>home</b>" {
		t.Errorf("site index: %d %q", r.code, r.body)
	}
	if r := get(t, u+"/files/gw/"+root+"/"); r.code != 200 || !strings.Contains(r.body, `href="hello.txt"`) || !strings.Contains(r.body, `href="www/"`) {
		t.Errorf("listing: %d %q", r.code, r.body)
	}
	if r := get(t, u+"/files/gw/"+root+"/big.bin"); r.code != 200 || len(r.body) != 300<<10 {
		t.Errorf("big: %d %d", r.code, len(r.body))
	}
	for _, p := range []string{"/files/gw/" + root + "/nope", "/files/gw/notacid/x", "/files/gw/"} {
		if r := get(t, u+p); r.code != 404 {
			t.Errorf("%s: got %d, want 404", p, r.code)
		}
	}
	if r := get(t, u+"/files/gw/%2e%2e/x"); r.code != 400 {
		t.Errorf("traversal on /ipfs: got %d", r.code)
	}
}
