package gateway_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/gateway"
	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

// addLarge adds size random bytes to n and returns the file's CID: more
// than the socket buffers of a loopback connection hold, so a client
// that stops reading holds its answer in flight.
func addLarge(t *testing.T, n *node.Node, size int) cid.Cid {
	t.Helper()
	data := make([]byte, size)
	rand.Read(data)
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{Pin: true}, func(node.AddEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	roots, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{"large": files.NewBytesFile(data)}))
	if err != nil {
		t.Fatal(err)
	}
	return roots[0]
}

// stalled sends GET path on a connection with a small receive buffer and
// reads nothing: the answer stays in flight until the server gives up.
func stalled(t *testing.T, url, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// Past Gateway.MaxConcurrentRequests, a request is answered 429 with
// Retry-After at once; the slot comes back when the answer in flight
// ends.
func TestGateway_RequestCap_429(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Gateway.MaxConcurrentRequests": 1})
	large := addLarge(t, n, 32<<20)
	s := addTree(t, n)
	s.url = serve(t, n, gatewayOptionsOffline)

	held := stalled(t, s.url, "/ipfs/"+large.String())
	// The stalled answer holds the one slot once its head is out.
	br := bufio.NewReader(held)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("held request: %v %v", resp, err)
	}
	resp, body := s.do(t, "GET", "/ipfs/"+s.root.String()+"/a.txt")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" || string(body) != "Too Many Requests\n" {
		t.Fatalf("second request: got %d, Retry-After %q, %q; want 429", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// The client goes away: its answer ends, and its slot is free again.
	held.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body = s.do(t, "GET", "/ipfs/"+s.root.String()+"/a.txt")
		if resp.StatusCode == 200 && string(body) == "hello\n" {
			break
		}
		if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after the held client left: got %d %q", resp.StatusCode, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client that stops reading is dropped once a write has waited
// Options.WriteTimeout (connlimit's WriteIdle): its answer is cut, and
// the request's slot comes back.
func TestGateway_WriteTimeout_DropsStalledReader(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Gateway.MaxConcurrentRequests": 1})
	const size = 32 << 20
	large := addLarge(t, n, size)
	s := addTree(t, n)
	s.url = serve(t, n, gateway.Options{Offline: true, WriteTimeout: 200 * time.Millisecond})

	c := stalled(t, s.url, "/ipfs/"+large.String())
	// The stalled answer must hold the slot before the other request
	// asks for it, or that request could take it first and the stalled
	// one get a 429 on a connection kept open.
	br := bufio.NewReader(c)
	head, err := http.ReadResponse(br, nil)
	if err != nil || head.StatusCode != 200 {
		t.Fatalf("stalled request: %v %v", head, err)
	}
	// While this client reads nothing, the server's write waits past
	// WriteTimeout and the server drops the connection; the other
	// request then gets the slot.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, _ := s.do(t, "GET", "/ipfs/"+s.root.String()+"/a.txt")
		if resp.StatusCode == 200 {
			break
		}
		if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("while a client stalls: got %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// What the stalled client then reads is a cut answer: the buffered
	// part and the end of the connection, never the whole file.
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.Copy(io.Discard, br)
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the stalled connection was not closed (read %d bytes)", got)
	}
	if got >= size {
		t.Errorf("the stalled client read %d bytes, the whole file", got)
	}
}
