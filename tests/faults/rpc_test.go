//go:build faults

// rpc_test.go: a node on a repo inside the test's file system, its RPC
// server on 127.0.0.1, and the calls the tests make.

package faults

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/storage"
)

// daemon is a node whose repo lives in a test file system, served on
// 127.0.0.1.
type daemon struct {
	*testutil.Server
	t testing.TB
}

// startDaemon inits a test-profile repo under dir and opens its node and
// RPC server (both closed at cleanup, before the file system goes).
func startDaemon(t testing.TB, dir string) *daemon {
	t.Helper()
	return startDaemonWith(t, dir, nil)
}

// startDaemonWith is startDaemon with the store options so (nil: the
// defaults).
func startDaemonWith(t testing.TB, dir string, so *storage.Options) *daemon {
	t.Helper()
	repo := filepath.Join(dir, "repo")
	if _, err := node.Init(repo, "test"); err != nil {
		t.Fatalf("init: %v", err)
	}
	n, err := node.New(repo, &node.Options{Store: so})
	if err != nil {
		t.Fatalf("open node: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	return &daemon{Server: testutil.StartServer(t, n), t: t}
}

// startOnline is startDaemon with the network layer started: the test
// profile's loopback-only swarm, no bootstrap, no mDNS, no routing.
func startOnline(t testing.TB, dir string) *daemon {
	t.Helper()
	d := startDaemon(t, dir)
	if err := d.Node.StartNet(context.Background(), node.NetOptions{UserAgent: "cairn-faults", Routing: "none"}); err != nil {
		t.Fatalf("start net: %v", err)
	}
	cfg := d.Node.Config()
	if len(cfg.Bootstrap) != 0 || cfg.Discovery.MDNS.Enabled {
		t.Fatal("test node config reaches beyond loopback")
	}
	for _, a := range d.Node.Net.Host.Addrs() {
		if s := a.String(); !strings.HasPrefix(s, "/ip4/127.0.0.1/") && !strings.HasPrefix(s, "/ip6/::1/") {
			t.Fatalf("test node listens on %s, not loopback", s)
		}
	}
	return d
}

// answer is an RPC answer: its status, body and stream error trailer.
type answer struct {
	status int
	body   string
	trail  string
}

// errText is the error the client sees: the JSON Message of an error
// answer, else the stream error trailer ("" when none).
func (a answer) errText() string {
	if a.status != 200 {
		var e struct{ Message string }
		if json.Unmarshal([]byte(a.body), &e) == nil && e.Message != "" {
			return e.Message
		}
		return a.body
	}
	return a.trail
}

// key is the "Key" of a block/put answer.
func (a answer) key(t testing.TB) string {
	t.Helper()
	var k struct{ Key string }
	if err := json.Unmarshal([]byte(a.body), &k); err != nil || k.Key == "" {
		t.Fatalf("block/put answer %q: no key (%v)", a.body, err)
	}
	return k.Key
}

// call posts an RPC command with args and, when not nil, a multipart
// body of one file.
func (d *daemon) call(path string, args []string, opts url.Values, file []byte) answer {
	d.t.Helper()
	q := url.Values{}
	for k, v := range opts {
		q[k] = v
	}
	for _, a := range args {
		q.Add("arg", a)
	}
	var body io.Reader
	ctype := ""
	if file != nil {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		w, _ := mw.CreateFormFile("file", "f.bin")
		w.Write(file)
		mw.Close()
		body, ctype = &b, mw.FormDataContentType()
	}
	req, _ := http.NewRequest("POST", d.URL+"/api/v0/"+path+"?"+q.Encode(), body)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s: no answer (the daemon is down?): %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatalf("%s: reading the answer: %v", path, err)
	}
	return answer{status: resp.StatusCode, body: string(b), trail: resp.Trailer.Get("X-Stream-Error")}
}

// add adds data (pinned) and returns its CID, or the error text.
func (d *daemon) add(data []byte) (string, string) {
	d.t.Helper()
	a := d.call("add", nil, url.Values{"quiet": {"true"}}, data)
	if e := a.errText(); e != "" {
		return "", e
	}
	if strings.Contains(a.body, `"Message"`) {
		return "", a.body
	}
	var ev struct{ Hash string }
	lines := strings.Split(strings.TrimSpace(a.body), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Hash == "" {
		return "", fmt.Sprintf("add answered %q", a.body)
	}
	return ev.Hash, ""
}

// addUnpinned adds data without pinning it and returns its CID.
func (d *daemon) addUnpinned(data []byte) string {
	d.t.Helper()
	a := d.call("add", nil, url.Values{"pin": {"false"}}, data)
	var ev struct{ Hash string }
	if a.errText() != "" || json.Unmarshal([]byte(a.body), &ev) != nil || ev.Hash == "" {
		d.t.Fatalf("add: %q %s", a.errText(), a.body)
	}
	return ev.Hash
}

// mustAdd adds data and fails the test on an error.
func (d *daemon) mustAdd(data []byte) string {
	d.t.Helper()
	c, e := d.add(data)
	if e != "" {
		d.t.Fatalf("add: %s", e)
	}
	return c
}

// wantCat checks that cat of c answers exactly data.
func (d *daemon) wantCat(c string, data []byte) {
	d.t.Helper()
	a := d.call("cat", []string{c}, nil, nil)
	if a.errText() != "" || a.body != string(data) {
		d.t.Fatalf("cat %s: %d bytes, error %q; want the %d bytes added", c, len(a.body), a.errText(), len(data))
	}
}

// wantUp checks that the daemon answers id.
func (d *daemon) wantUp() {
	d.t.Helper()
	if a := d.call("id", nil, nil, nil); a.status != 200 {
		d.t.Fatalf("id: %d %s", a.status, a.body)
	}
}

// wantRepoVerify runs repo verify over the RPC and fails on any
// complaint.
func (d *daemon) wantRepoVerify() {
	d.t.Helper()
	a := d.call("repo/verify", nil, nil, nil)
	if a.errText() != "" || !strings.Contains(a.body, "verify complete, all blocks validated.") {
		d.t.Fatalf("repo verify: %s %s", a.errText(), a.body)
	}
}

// wantVerified runs repo verify and storage's Check (hashes included),
// which commits what the index lacks, and fails on any complaint.
func (d *daemon) wantVerified() {
	d.t.Helper()
	d.wantRepoVerify()
	if errs := d.Node.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		d.t.Fatalf("storage check: %v", errs)
	}
}

// wantFault checks the store fault gauge of the metrics.
func (d *daemon) wantFault(on bool) {
	d.t.Helper()
	want := "cairn_store_fault 0"
	if on {
		want = "cairn_store_fault 1"
	}
	resp, err := http.Get(d.URL + "/debug/metrics/prometheus")
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), want+"\n") {
		d.t.Fatalf("metrics lack %q", want)
	}
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}
