//go:build interop

// harness_test.go: the daemons every interop test starts, and the RPC
// calls they share.

package interop

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/internal/daemon"
)

var cairnBin, kuboBin string

func TestMain(m *testing.M) {
	// Everything below runs in a network namespace with only loopback.
	daemon.EnterNetNS()
	if err := daemon.LoopbackOnly(); err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(1)
	}
	cairnBin = daemon.EnvOr("CAIRN_BIN", "../../bin/cairn")
	kuboBin = daemon.EnvOr("KUBO_BIN", filepath.Join(daemon.KuboDir(), "ipfs"))
	for _, b := range []string{cairnBin, kuboBin} {
		if _, err := os.Stat(b); err != nil {
			fmt.Fprintf(os.Stderr, "interop: %v (make interop builds both)\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// startCairn starts an online cairn daemon on a fresh test-profile repo,
// stopped at cleanup.
func startCairn(t *testing.T, o daemon.Options) *daemon.Daemon {
	t.Helper()
	d, err := daemon.StartCairn(cairnBin, filepath.Join(t.TempDir(), "cairn"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, d) })
	return d
}

// startKubo starts an online Kubo daemon on a fresh test-profile repo,
// stopped at cleanup.
func startKubo(t *testing.T, o daemon.Options) *daemon.Daemon {
	t.Helper()
	d, err := daemon.StartKubo(kuboBin, filepath.Join(t.TempDir(), "kubo"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, d) })
	return d
}

func stop(t *testing.T, d *daemon.Daemon) {
	d.Stop()
	if t.Failed() {
		t.Logf("%s log:\n%s", d.Name, d.Log())
	}
}

// peerInfo is the part of `id` the tests use.
type peerInfo struct {
	ID        string
	Addresses []string
}

func id(t *testing.T, d *daemon.Daemon) peerInfo {
	t.Helper()
	var p peerInfo
	if err := d.JSON("id", nil, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// loopbackAddr is d's /ip4/127.0.0.1/tcp/... address with its /p2p/ part.
func loopbackAddr(t *testing.T, d *daemon.Daemon) string {
	t.Helper()
	p := id(t, d)
	for _, a := range p.Addresses {
		if strings.HasPrefix(a, "/ip4/127.0.0.1/tcp/") && !strings.Contains(a, "/ws") {
			if !strings.Contains(a, "/p2p/") {
				a += "/p2p/" + p.ID
			}
			return a
		}
	}
	t.Fatalf("%s has no loopback TCP address: %v", d.Name, p.Addresses)
	return ""
}

// connect dials b from a and waits until each lists the other as a peer.
func connect(t *testing.T, a, b *daemon.Daemon) {
	t.Helper()
	if _, err := a.Post("swarm/connect", url.Values{"arg": {loopbackAddr(t, b)}}, nil, ""); err != nil {
		t.Fatal(err)
	}
	bid, aid := id(t, b).ID, id(t, a).ID
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if hasPeer(t, a, bid) && hasPeer(t, b, aid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s and %s do not list each other as peers", a.Name, b.Name)
}

func hasPeer(t *testing.T, d *daemon.Daemon, pid string) bool {
	var out struct{ Peers []struct{ Peer string } }
	if err := d.JSON("swarm/peers", nil, &out); err != nil {
		t.Fatal(err)
	}
	for _, p := range out.Peers {
		if p.Peer == pid {
			return true
		}
	}
	return false
}

// file is one part of a multipart add: a file (Data != nil) or a
// directory.
type file struct {
	Path string
	Data []byte
}

// add posts files to d's add with the query, and returns the events
// (Name -> Hash) and the last one's hash.
func add(t *testing.T, d *daemon.Daemon, q url.Values, files ...file) (map[string]string, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range files {
		h := make(map[string][]string)
		if f.Data == nil {
			h["Content-Type"] = []string{"application/x-directory"}
		} else {
			h["Content-Type"] = []string{"application/octet-stream"}
		}
		h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="file"; filename=%q`, url.PathEscape(f.Path))}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.Data)
	}
	mw.Close()
	b, err := d.Post("add", q, &body, mw.FormDataContentType())
	if err != nil {
		t.Fatal(err)
	}
	events := map[string]string{}
	var last string
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var ev struct{ Name, Hash string }
		if err := dec.Decode(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s add: %v: %s", d.Name, err, b)
		}
		if ev.Hash != "" {
			events[ev.Name] = ev.Hash
			last = ev.Hash
		}
	}
	if last == "" {
		t.Fatalf("%s add answered no hash: %s", d.Name, b)
	}
	return events, last
}

// cat reads /ipfs/<c> (or a path) through d, within the timeout.
func cat(t *testing.T, d *daemon.Daemon, path string) []byte {
	t.Helper()
	b, err := d.Post("cat", url.Values{"arg": {path}, "timeout": {"60s"}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
