package gateway_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn/gateway"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
	carv2 "github.com/ipld/go-car/v2"
	mh "github.com/multiformats/go-multihash"
)

// site is content added to a node behind a running gateway.
type site struct {
	url  string
	n    *node.Node
	root cid.Cid // a directory: a.txt, big.bin, sub/index.html, empty/
	big  []byte
}

// newSite adds the test tree to an offline node and serves its gateway
// on 127.0.0.1:0 until cleanup, with config keys kv set first.
func newSite(t *testing.T, kv map[string]any) *site {
	t.Helper()
	n := testutil.MustOpenNode(t)
	if kv != nil {
		testutil.SetConfig(t, n, kv)
	}
	s := addTree(t, n)
	s.url = serve(t, n, gatewayOptionsOffline)
	return s
}

// addTree adds the test tree to n.
func addTree(t *testing.T, n *node.Node) *site {
	t.Helper()
	big := make([]byte, 3<<20+12345)
	rand.Read(big)
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{Pin: true}, func(node.AddEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	roots, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{"site": files.NewMapDirectory(map[string]files.Node{
		"a.txt":   files.NewBytesFile([]byte("hello\n")),
		"big.bin": files.NewBytesFile(big),
		"sub":     files.NewMapDirectory(map[string]files.Node{"index.html": files.NewBytesFile([]byte("<h1>hi</h1>\n"))}),
		"empty":   files.NewMapDirectory(map[string]files.Node{"x y.txt": files.NewBytesFile([]byte("x"))}),
	})}))
	if err != nil {
		t.Fatal(err)
	}
	return &site{n: n, root: roots[0], big: big}
}

// serve serves n's gateway on 127.0.0.1:0 until cleanup and returns its
// URL.
func serve(t *testing.T, n *node.Node, o gateway.Options) string {
	t.Helper()
	srv, err := gateway.New(n, o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	return "http://" + l.Addr().String()
}

var gatewayOptionsOffline = gateway.Options{Offline: true}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (s *site) do(t *testing.T, method, path string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return s.send(t, method, path, nil, hdr...)
}

// send is do with a request body.
func (s *site) send(t *testing.T, method, path string, body []byte, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func (s *site) cidOf(t *testing.T, p string) cid.Cid {
	t.Helper()
	res, err := s.n.Dag().Resolve(context.Background(), "/ipfs/"+s.root.String()+p)
	if err != nil {
		t.Fatal(err)
	}
	return res.Cid
}

func wantHeaders(t *testing.T, resp *http.Response, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: got %q, want %q", k, got, v)
		}
	}
}

func TestGateway_File(t *testing.T) {
	s := newSite(t, nil)
	r := s.root.String()
	file := s.cidOf(t, "/a.txt")
	resp, body := s.do(t, "GET", "/ipfs/"+r+"/a.txt")
	if resp.StatusCode != 200 || string(body) != "hello\n" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	wantHeaders(t, resp, map[string]string{
		"Content-Type":                "text/plain; charset=utf-8",
		"Content-Length":              "6",
		"Etag":                        `"` + file.String() + `"`,
		"Cache-Control":               "public, max-age=29030400, immutable",
		"Accept-Ranges":               "bytes",
		"X-Ipfs-Roots":                r + "," + file.String(),
		"Ipfs-Uri":                    "ipfs://" + cid.NewCidV1(cid.DagProtobuf, s.root.Hash()).String() + "/a.txt",
		"Access-Control-Allow-Origin": "*",
	})
	if got := resp.Header.Values("Access-Control-Allow-Methods"); strings.Join(got, ",") != "GET,HEAD,OPTIONS" {
		t.Errorf("Access-Control-Allow-Methods: got %q", got)
	}

	// A file of many blocks streams whole, and HEAD gives its length only.
	resp, body = s.do(t, "GET", "/ipfs/"+r+"/big.bin")
	if resp.StatusCode != 200 || !bytes.Equal(body, s.big) {
		t.Fatalf("big.bin: got %d, %d bytes (want %d)", resp.StatusCode, len(body), len(s.big))
	}
	resp, body = s.do(t, "HEAD", "/ipfs/"+r+"/big.bin")
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != int64(len(s.big)) {
		t.Fatalf("HEAD big.bin: got %d, %d bytes, Content-Length %d", resp.StatusCode, len(body), resp.ContentLength)
	}
}

func TestGateway_Filename(t *testing.T) {
	s := newSite(t, nil)
	resp, _ := s.do(t, "GET", "/ipfs/"+s.root.String()+"/a.txt?filename=test%D1%82%D0%B5%D1%81%D1%82.pdf")
	wantHeaders(t, resp, map[string]string{
		"Content-Disposition": `inline; filename="test____.pdf"; filename*=UTF-8''test%D1%82%D0%B5%D1%81%D1%82.pdf`,
		"Content-Type":        "application/pdf",
	})
	resp, _ = s.do(t, "GET", "/ipfs/"+s.root.String()+"/a.txt?filename=test%D1%82%D0%B5%D1%81%D1%82.mp4&download=true")
	wantHeaders(t, resp, map[string]string{
		"Content-Disposition": `attachment; filename="test____.mp4"; filename*=UTF-8''test%D1%82%D0%B5%D1%81%D1%82.mp4`,
	})
}

func TestGateway_Range(t *testing.T) {
	s := newSite(t, nil)
	p := "/ipfs/" + s.root.String() + "/big.bin"
	size := len(s.big)
	mid := size / 2

	resp, body := s.do(t, "GET", p, "Range", "bytes=1000000-1999999")
	if resp.StatusCode != 206 || !bytes.Equal(body, s.big[1000000:2000000]) {
		t.Fatalf("one range: got %d, %d bytes", resp.StatusCode, len(body))
	}
	wantHeaders(t, resp, map[string]string{"Content-Range": "bytes 1000000-1999999/" + itoa(size), "Content-Length": "1000000"})

	resp, body = s.do(t, "GET", p, "Range", "bytes=-100")
	if resp.StatusCode != 206 || !bytes.Equal(body, s.big[size-100:]) {
		t.Fatalf("suffix range: got %d, %d bytes", resp.StatusCode, len(body))
	}

	// Several ranges: a multipart/byteranges body, one part per range.
	resp, body = s.do(t, "GET", p, "Range", "bytes=0-9,"+itoa(mid)+"-"+itoa(mid+99))
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != 206 || err != nil || mt != "multipart/byteranges" {
		t.Fatalf("multi-range: got %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("multi-range: Content-Length %d, body %d", resp.ContentLength, len(body))
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for i, want := range []struct {
		rng  string
		data []byte
	}{{"bytes 0-9/" + itoa(size), s.big[:10]}, {"bytes " + itoa(mid) + "-" + itoa(mid+99) + "/" + itoa(size), s.big[mid : mid+100]}} {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		got, _ := io.ReadAll(part)
		if part.Header.Get("Content-Range") != want.rng || part.Header.Get("Content-Type") != "application/octet-stream" || !bytes.Equal(got, want.data) {
			t.Errorf("part %d: %q %q, %d bytes", i, part.Header.Get("Content-Range"), part.Header.Get("Content-Type"), len(got))
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after the parts: %v, want EOF", err)
	}

	resp, body = s.do(t, "GET", p, "Range", "bytes="+itoa(size)+"-")
	if resp.StatusCode != 416 || resp.Header.Get("Content-Range") != "bytes */"+itoa(size) || string(body) != "invalid range: failed to overlap\n" {
		t.Errorf("past the end: got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Range"), body)
	}
	resp, body = s.do(t, "GET", p, "Range", "bytes=x-")
	if resp.StatusCode != 400 || string(body) != "invalid range request: invalid range\n" {
		t.Errorf("bad range: got %d %q", resp.StatusCode, body)
	}
}

func TestGateway_Directory(t *testing.T) {
	s := newSite(t, nil)
	r := s.root.String()

	resp, _ := s.do(t, "GET", "/ipfs/"+r+"/sub?query=to-remember")
	if resp.StatusCode != 301 || resp.Header.Get("Location") != "/ipfs/"+r+"/sub/?query=to-remember" {
		t.Fatalf("no slash: got %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// index.html is the directory's page; the ETag is the directory's.
	resp, body := s.do(t, "GET", "/ipfs/"+r+"/sub/")
	if resp.StatusCode != 200 || string(body) != "<h1>hi</h1>\n" {
		t.Fatalf("index.html: got %d %q", resp.StatusCode, body)
	}
	wantHeaders(t, resp, map[string]string{"Content-Type": "text/html", "Etag": `"` + s.cidOf(t, "/sub").String() + `"`})

	// Without one, a listing with links to each entry.
	resp, body = s.do(t, "GET", "/ipfs/"+r+"/")
	if resp.StatusCode != 200 {
		t.Fatalf("listing: got %d", resp.StatusCode)
	}
	etag := resp.Header.Get("Etag")
	wantHeaders(t, resp, map[string]string{"Content-Type": "text/html", "Cache-Control": "public, max-age=604800, stale-while-revalidate=2678400"})
	if !strings.HasPrefix(etag, `"DirIndex-`) || !strings.HasSuffix(etag, "_CID-"+r+`"`) {
		t.Errorf("listing Etag %q", etag)
	}
	for _, want := range []string{`href="/ipfs/` + r + `/a.txt"`, `href="/ipfs/` + r + `/empty"`, `href="/ipfs/` + s.cidOf(t, "/big.bin").String() + `?filename=big.bin"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("listing lacks %s", want)
		}
	}
	resp, body = s.do(t, "GET", "/ipfs/"+r+"/empty/")
	if !strings.Contains(string(body), `href="/ipfs/`+r+`/empty/x%20y.txt"`) || !strings.Contains(string(body), `href="/ipfs/`+r+`/empty/.."`) {
		t.Errorf("sub-listing: %d %s", resp.StatusCode, body)
	}

	// The listing's ETag and the directory's CID both answer 304.
	for _, inm := range []string{etag, `"` + r + `"`} {
		resp, body = s.do(t, "GET", "/ipfs/"+r+"/", "If-None-Match", inm)
		if resp.StatusCode != 304 || len(body) != 0 {
			t.Errorf("If-None-Match %s: got %d", inm, resp.StatusCode)
		}
	}
	resp, body = s.do(t, "HEAD", "/ipfs/"+r+"/")
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Etag") != etag {
		t.Errorf("HEAD listing: got %d, Etag %q", resp.StatusCode, resp.Header.Get("Etag"))
	}
}

func TestGateway_Errors(t *testing.T) {
	s := newSite(t, nil)
	r := s.root.String()
	missing := "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	for _, tc := range []struct {
		name, method, path string
		code               int
		body               string
	}{
		{"no such entry", "GET", "/ipfs/" + r + "/nope", 404,
			`failed to resolve /ipfs/` + r + `/nope: no link named "nope" under ` + r + "\n"},
		{"bad CID", "GET", "/ipfs/QmInvalid/x", 400, `invalid path "/ipfs/QmInvalid/x": invalid cid: selected encoding not supported` + "\n"},
		{"block not stored (offline)", "GET", "/ipfs/" + missing, 404,
			"failed to resolve /ipfs/" + missing + ": block was not found locally (offline): ipld: could not find " + missing +
				": retrieval: no providers found for the CID (phase: path resolution)\n"},
		{"RPC", "POST", "/api/v0/id", 404, "404 page not found\n"},
		{"RPC by GET", "GET", "/api/v0/cat?arg=" + r, 404, "404 page not found\n"},
		{"write", "POST", "/ipfs/" + r, 405, "Method POST not allowed: read only access\n"},
		{"PUT", "PUT", "/ipfs/" + r, 405, "Method PUT not allowed: read only access\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := s.do(t, tc.method, tc.path)
			if resp.StatusCode != tc.code || string(body) != tc.body {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, tc.code, tc.body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	resp, body := s.do(t, "GET", "/ipfs/"+r+"/nope", "Accept", "text/html,*/*")
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "text/html" || !strings.Contains(string(body), "no link named") {
		t.Errorf("HTML error: got %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestGateway_Raw(t *testing.T) {
	s := newSite(t, nil)
	c := s.cidOf(t, "/a.txt")
	blk, err := s.n.Block().Get(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, hdr := range [][]string{nil, {"Accept", "application/vnd.ipld.raw"}} {
		q := "?format=raw"
		if hdr != nil {
			q = ""
		}
		resp, body := s.do(t, "GET", "/ipfs/"+c.String()+q, hdr...)
		if resp.StatusCode != 200 || !bytes.Equal(body, blk.RawData()) {
			t.Fatalf("raw %v: got %d, %d bytes", hdr, resp.StatusCode, len(body))
		}
		wantHeaders(t, resp, map[string]string{
			"Content-Type":           "application/vnd.ipld.raw",
			"Etag":                   `"` + c.String() + `.raw"`,
			"X-Content-Type-Options": "nosniff",
			"Content-Disposition":    `attachment; filename="` + c.String() + `.bin"; filename*=UTF-8''` + c.String() + ".bin",
		})
		if hdr != nil && resp.Header.Get("Content-Location") != "/ipfs/"+c.String()+"?format=raw" {
			t.Errorf("Content-Location %q", resp.Header.Get("Content-Location"))
		}
	}
}

func TestGateway_Car(t *testing.T) {
	s := newSite(t, nil)
	r := s.root
	resp, body := s.do(t, "GET", "/ipfs/"+r.String()+"?format=car")
	if resp.StatusCode != 200 {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	wantHeaders(t, resp, map[string]string{
		"Content-Type":  "application/vnd.ipld.car; version=1; order=dfs; dups=n",
		"Accept-Ranges": "none",
		"X-Ipfs-Roots":  r.String(),
	})
	br, err := carv2.NewBlockReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(br.Roots) != 1 || !br.Roots[0].Equals(r) {
		t.Fatalf("roots %v", br.Roots)
	}
	n := 0
	var total int
	for {
		blk, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && !blk.Cid().Equals(r) {
			t.Errorf("first block %s, want the root", blk.Cid())
		}
		n++
		total += len(blk.RawData())
	}
	if total < len(s.big) {
		t.Errorf("CAR holds %d bytes in %d blocks, less than big.bin", total, n)
	}
	resp, body = s.do(t, "GET", "/ipfs/"+r.String()+"?format=car&car-version=2")
	if resp.StatusCode != 400 || !strings.Contains(string(body), "only version=1 is supported") {
		t.Errorf("version 2: got %d %q", resp.StatusCode, body)
	}
}

// Ensure the CARs of paths and names answer as Kubo 0.43.1's: the root
// is the path's last node and X-Ipfs-Roots lists every node on the way;
// a path naming an entry that does not exist is 200 with the blocks that
// show it, rooted at the empty identity CID; an /ipns/ name is resolved
// first and its CAR is cacheable for the record's TTL.
func TestGateway_CarOfPathsAndNames(t *testing.T) {
	s := newSite(t, nil)
	r, sub, idx := s.root, s.cidOf(t, "/sub"), s.cidOf(t, "/sub/index.html")
	roots := func(body []byte) []cid.Cid {
		br, err := carv2.NewBlockReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return br.Roots
	}
	resp, body := s.do(t, "GET", "/ipfs/"+r.String()+"/sub?format=car")
	wantHeaders(t, resp, map[string]string{"X-Ipfs-Roots": r.String() + "," + sub.String()})
	if got := roots(body); resp.StatusCode != 200 || len(got) != 1 || !got[0].Equals(sub) {
		t.Errorf("/sub: %d, roots %v, want %s", resp.StatusCode, got, sub)
	}
	if got := carBlocks(t, body); fmt.Sprint(got) != fmt.Sprint([]cid.Cid{r, sub, idx}) {
		t.Errorf("/sub: blocks %v", got)
	}
	resp, body = s.do(t, "GET", "/ipfs/"+r.String()+"/sub/nope?format=car")
	wantHeaders(t, resp, map[string]string{"X-Ipfs-Roots": r.String(), "Content-Type": "application/vnd.ipld.car; version=1; order=dfs; dups=n"})
	if got := roots(body); resp.StatusCode != 200 || len(got) != 1 || got[0].String() != "bafkqaaa" {
		t.Errorf("/sub/nope: %d, roots %v, want bafkqaaa", resp.StatusCode, got)
	}
	if got := carBlocks(t, body); fmt.Sprint(got) != fmt.Sprint([]cid.Cid{r, sub}) {
		t.Errorf("/sub/nope: blocks %v, want the two directories", got)
	}

	ttl := 2 * time.Minute
	name, err := s.n.Names().Publish(context.Background(), path.FromCid(r), node.PublishOptions{Lifetime: time.Hour, TTL: &ttl, AllowOffline: true})
	if err != nil {
		t.Fatal(err)
	}
	resp, body = s.do(t, "GET", "/ipns/"+name.String()+"/sub?format=car")
	wantHeaders(t, resp, map[string]string{
		"Cache-Control":       "public, max-age=120",
		"X-Ipfs-Roots":        r.String() + "," + sub.String(),
		"Ipfs-Uri":            "ipns://" + name.String() + "/sub",
		"Content-Disposition": `attachment; filename="` + r.String() + `_sub.car"; filename*=UTF-8''` + r.String() + "_sub.car",
	})
	if got := carBlocks(t, body); resp.StatusCode != 200 || fmt.Sprint(got) != fmt.Sprint([]cid.Cid{r, sub, idx}) {
		t.Errorf("/ipns/<name>/sub: %d, blocks %v", resp.StatusCode, got)
	}
	ipfsResp, _ := s.do(t, "GET", "/ipfs/"+r.String()+"/sub?format=car")
	if e := resp.Header.Get("Etag"); e == "" || e != ipfsResp.Header.Get("Etag") {
		t.Errorf("the name's CAR has Etag %q, the path's %q: want the same", e, ipfsResp.Header.Get("Etag"))
	}
}

func TestGateway_RootRedirectAndVersion(t *testing.T) {
	s := newSite(t, map[string]any{"Gateway.RootRedirect": "/ipfs/bafkqaaa"})
	resp, _ := s.do(t, "GET", "/")
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "/ipfs/bafkqaaa" {
		t.Errorf("root: got %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := s.do(t, "GET", "/version")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Client Version: cairn/") {
		t.Errorf("version: got %d %q", resp.StatusCode, body)
	}
}

func TestGateway_HTTPHeaders(t *testing.T) {
	s := newSite(t, map[string]any{"Gateway.HTTPHeaders": map[string]any{"X-Board": []any{"pi"}, "Access-Control-Allow-Origin": []any{"https://example.net"}}})
	resp, _ := s.do(t, "GET", "/ipfs/"+s.root.String()+"/a.txt")
	wantHeaders(t, resp, map[string]string{"X-Board": "pi", "Access-Control-Allow-Origin": "https://example.net"})
}

func itoa(i int) string { return strconv.Itoa(i) }

// Online, a block the node lacks comes from a peer over bitswap; under
// Gateway.NoFetch it does not (404); a block no peer has is 504 once
// Gateway.RetrievalTimeout has passed.
func TestGateway_Online(t *testing.T) {
	a := testutil.MustOnlineNode(t, "none", nil)
	s := addTree(t, a)
	fetching := testutil.MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Gateway.RetrievalTimeout", "500ms")
	})
	noFetch := testutil.MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Gateway.NoFetch", true)
	})
	testutil.Connect(t, fetching, a)
	testutil.Connect(t, noFetch, a)

	s.url = serve(t, fetching, gateway.Options{})
	resp, body := s.do(t, "GET", "/ipfs/"+s.root.String()+"/big.bin")
	if resp.StatusCode != 200 || !bytes.Equal(body, s.big) {
		t.Fatalf("fetched over bitswap: got %d, %d bytes", resp.StatusCode, len(body))
	}
	nobody, err := cid.Prefix{Version: 1, Codec: cid.Raw, MhType: mh.SHA2_256, MhLength: -1}.Sum([]byte("no peer has this"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, body = s.do(t, "GET", "/ipfs/"+nobody.String())
	if resp.StatusCode != 504 {
		t.Errorf("a block nobody has: got %d %q", resp.StatusCode, body)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a block nobody has took %s", d)
	}

	s.url = serve(t, noFetch, gateway.Options{})
	resp, body = s.do(t, "GET", "/ipfs/"+s.root.String()+"/a.txt")
	if resp.StatusCode != 404 {
		t.Errorf("NoFetch: got %d %q", resp.StatusCode, body)
	}
}

// Ensure the canonical redirects: a browser's ipfs:// and ipns:// protocol
// handler (?uri=) gets a permanent redirect to the content path, a bad
// one a 400; an IPNS key written as a peer ID (ed25519 or an RSA key's
// base58 multihash) a 302 to its CIDv1 in base36, the rest of the path
// kept, and a DNSLink name or a CID no redirect.
func TestGateway_CanonicalRedirects(t *testing.T) {
	s := newSite(t, nil)
	for _, tc := range []struct {
		path string
		code int
		loc  string
	}{
		{"/ipfs/?uri=" + url.QueryEscape("ipfs://bafkqaaa/wiki/a.html"), 301, "/ipfs/bafkqaaa/wiki/a.html"},
		{"/ipns/?uri=" + url.QueryEscape("ipns://en.wikipedia-on-ipfs.org"), 301, "/ipns/en.wikipedia-on-ipfs.org"},
		{"/ipfs/?uri=" + url.QueryEscape("https://example.com/"), 400, ""},
		{"/ipns/12D3KooWRBy97UB99e3J6hiPesre1MZeuNQvfan4gBziswrRJsNK/root2/", 302, "/ipns/k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8/root2/"},
		{"/ipns/QmcJM7PRfkSbcM5cf1QugM5R37TLRKyJGgBEhXjLTB8uA2/root2/", 302, "/ipns/k2k4r8ol4m8kkcqz509c1rcjwunebj02gcnm5excpx842u736nja8ger/root2/"},
	} {
		resp, _ := s.do(t, "GET", tc.path)
		if resp.StatusCode != tc.code || resp.Header.Get("Location") != tc.loc {
			t.Errorf("%s: %d %q, want %d %q", tc.path, resp.StatusCode, resp.Header.Get("Location"), tc.code, tc.loc)
		}
	}
	for _, p := range []string{"/ipns/k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8/", "/ipns/example.org/"} {
		if resp, _ := s.do(t, "GET", p); resp.StatusCode == 302 || resp.StatusCode == 301 {
			t.Errorf("%s: redirected to %q", p, resp.Header.Get("Location"))
		}
	}
}
