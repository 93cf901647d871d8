package httprpc_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/httprpc"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

func postURL(t *testing.T, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
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

func addBytes(t *testing.T, n *node.Node, data []byte, opts map[string]string) cid.Cid {
	t.Helper()
	dir := files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile(data)})
	res, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "add", nil, opts, dir)
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
	resp, body := postURL(t, srv.URL+"/api/v0/cat?arg="+root.String(), nil)
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
	res, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "add", nil, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Values[len(res.Values)-1].(*node.AddEvent).Hash
	resp, body := postURL(t, srv.URL+"/api/v0/cat?arg="+d, nil)
	if resp.StatusCode != 500 || !strings.Contains(string(body), `"this dag node is a directory"`) {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
}

// Ensure timeout cancels a command and bad durations are a 400.
func TestServer_Timeout(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	resp, body := postURL(t, srv.URL+"/api/v0/version?timeout=bogus", nil)
	if resp.StatusCode != 400 || !strings.HasPrefix(string(body), "invalid timeout") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	resp, _ = postURL(t, srv.URL+"/api/v0/version?timeout=30s", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("got %d", resp.StatusCode)
	}
}

// Ensure preflights follow spec 5.3 and allowed origins get CORS headers.
func TestServer_CORS(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	_, port, _ := net.SplitHostPort(srv.Addr)
	origin := "http://localhost:" + port
	req, _ := http.NewRequest("OPTIONS", srv.URL+"/api/v0/version", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != origin ||
		resp.Header.Get("Access-Control-Allow-Methods") != "POST" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	req.Header.Set("Access-Control-Request-Headers", "authorization")
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight asking for authorization got ACAO %q", resp.Header.Get("Access-Control-Allow-Origin"))
	}
	r2, _ := postURL(t, srv.URL+"/api/v0/version", map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0"})
	if r2.StatusCode != 200 || r2.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("allowed origin: %d %v", r2.StatusCode, r2.Header)
	}
	r3, _ := postURL(t, srv.URL+"/api/v0/version", map[string]string{"User-Agent": "Mozilla/5.0 Electron"})
	if r3.StatusCode != 200 {
		t.Errorf("Electron UA: %d", r3.StatusCode)
	}
}

// Ensure API.Authorizations gates every path but /api/v0/version itself
// (spec 5.4).
func TestServer_Authorizations(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"API.Authorizations": map[string]*config.RPCAuthScope{
		"alice": {AuthSecret: "bearer:s3cret", AllowedPaths: []string{"/api/v0/cat"}},
		"bob":   {AuthSecret: "basic:bob:pw", AllowedPaths: []string{"/api/v0"}},
	}})
	srv := testutil.StartServer(t, n)
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/api/v0/version", "", 403},
		{"/api/v0/version", "Bearer wrong", 403},
		{"/api/v0/version", "Bearer s3cret", 200},
		{"/api/v0/version/deps", "Bearer s3cret", 403}, // Kubo: only /api/v0/version itself
		{"/api/v0/version/deps", "Basic Ym9iOnB3", 200},
		{"/api/v0/id", "Bearer s3cret", 403},
		{"/api/v0/cat?arg=QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", "Bearer s3cret", 500},
		{"/api/v0/commands", "Basic Ym9iOnB3", 200},
	} {
		resp, body := postURL(t, srv.URL+tc.path, map[string]string{"Authorization": tc.auth})
		if resp.StatusCode != tc.want {
			t.Errorf("%s with %q: got %d, want %d (%s)", tc.path, tc.auth, resp.StatusCode, tc.want, body)
		}
		if tc.want == 403 && !strings.HasPrefix(string(body), "Kubo RPC Access Denied") {
			t.Errorf("403 body %q", body)
		}
	}
}

// Ensure the ipfs-companion extension origins are always allowed, as in
// Kubo 0.42 (spec 5.2), and other extensions are not.
func TestServer_CompanionOrigins(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"chrome-extension://nibjojkomfdiaoajekhjakgkdhaomnch", 200},
		{"chrome-extension://hjoieblefckbooibpepigmacodalfndh", 200},
		{"chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 403},
	} {
		resp, body := postURL(t, srv.URL+"/api/v0/id", map[string]string{"Origin": tc.origin})
		if resp.StatusCode != tc.want {
			t.Errorf("Origin %s: got %d, want %d (%s)", tc.origin, resp.StatusCode, tc.want, body)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); tc.want == 200 && got != tc.origin {
			t.Errorf("Origin %s: Access-Control-Allow-Origin %q", tc.origin, got)
		}
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
	resp, _ := postURL(t, srv.URL+"/api/v0/version", nil)
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
		resp, body := postURL(t, srv.URL+"/api/v0/cat?arg="+root.String()+"&length=10", nil)
		if resp.StatusCode != 200 || !bytes.Equal(body, data[:10]) {
			t.Fatalf("after disconnect: %d %q", resp.StatusCode, body)
		}
	}
	if errs := n.Store.Check(storage.CheckOptions{}); len(errs) > 0 {
		t.Fatal(errs)
	}
}

// Shutdown stops the commands still running (here log/tail, which runs
// until its context ends): the open answer ends and Shutdown returns
// without waiting for its timeout.
func TestServer_ShutdownStopsRunningCommand(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "POST /api/v0/log/tail HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil) // the stream's headers come at once
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	start := time.Now()
	if err := srv.Srv.Shutdown(5 * time.Second); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Shutdown took %v: the running command was not stopped", d)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, resp.Body); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading the stream's end: %v", err)
	}
}
