package connlimit_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"cairn/internal/connlimit"
)

// listen serves g on 127.0.0.1:0 and hands each admitted connection to
// the returned channel (the receiver closes it).
func listen(t *testing.T, g *connlimit.Guard) (string, <-chan net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	gl := g.Listener(l)
	conns := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := gl.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	return l.Addr().String(), conns
}

// dial connects with a small receive buffer, so that a peer that does
// not read stalls the server's writes soon.
func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tc := c.(*net.TCPConn)
	if err := tc.SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	return tc
}

// A write that waits WriteIdle for a peer that reads nothing fails with
// a timeout; the connection's Close then resets it, so that the peer sees
// the end at once instead of the data still queued.
func TestConn_Write_WriteIdleDropsStalledPeer(t *testing.T) {
	g := connlimit.New(connlimit.Limits{Capacity: 4, WriteIdle: 100 * time.Millisecond})
	addr, conns := listen(t, g)
	client := dial(t, addr)
	srv := <-conns
	chunk := make([]byte, 64<<10)
	var err error
	for i := 0; i < 4096 && err == nil; i++ { // at most 256 MiB
		_, err = srv.Write(chunk)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write to a peer that reads nothing: %v, want a deadline error", err)
	}
	srv.Close()
	if n := g.Open(); n != 0 {
		t.Errorf("open after Close: %d, want 0", n)
	}
	client.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, client)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the dropped connection still delivers its queued data")
	}
	if err == nil {
		t.Error("the dropped connection ended with a clean EOF, want a reset")
	}
}

// A peer that keeps reading is never dropped, however long the whole
// answer takes: the deadline is renewed before every write.
func TestConn_Write_WriteIdleRenewed(t *testing.T) {
	const idle = 250 * time.Millisecond
	g := connlimit.New(connlimit.Limits{Capacity: 4, WriteIdle: idle})
	addr, conns := listen(t, g)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	srv := <-conns
	t.Cleanup(func() { srv.Close() })
	const size = 16 << 20
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		chunk := make([]byte, 64<<10)
		var err error
		for sent := 0; sent < size && err == nil; sent += len(chunk) {
			_, err = srv.Write(chunk)
		}
		done <- err
	}()
	// Read in steps with short pauses, well under WriteIdle each.
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	buf := make([]byte, 64<<10)
	for read := 0; read < size; {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("after %d bytes: %v", read, err)
		}
		read += n
		time.Sleep(5 * time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatalf("a reading peer was dropped: %v", err)
	}
	if took := time.Since(start); took < idle {
		t.Logf("the answer took %v, under WriteIdle: the renewal was not exercised", took)
	}
}

// Past the per-address limit a connection is answered 429, past the
// capacity for other hosts 503, before any of its bytes is read.
func TestGuard_Accept_Limits(t *testing.T) {
	g := connlimit.New(connlimit.Limits{Capacity: 4, LocalReserve: 1, PerAddr: 2, IsLocal: func(netip.Addr) bool { return false }})
	addr, conns := listen(t, g)
	for i := 0; i < 2; i++ {
		dial(t, addr)
		c := <-conns
		t.Cleanup(func() { c.Close() })
	}
	status := func() (int, string) {
		c := dial(t, addr)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := status(); code != 429 || !strings.Contains(body, "at most 2 at once") {
		t.Errorf("third connection of one address: %d %q, want 429", code, body)
	}
	if g.Refused() != 1 || g.Open() != 2 {
		t.Errorf("refused %d, open %d; want 1 and 2", g.Refused(), g.Open())
	}
}
