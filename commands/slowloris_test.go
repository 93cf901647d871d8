package commands_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/rpc"
)

// startGuarded serves n's RPC with o, treating only 127.0.0.1 as local:
// the other 127.0.0.x addresses stand for hosts of the LAN.
func startGuarded(t *testing.T, o rpc.ServerOptions) string {
	t.Helper()
	n := testutil.MustOpenNode(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.IsLocal = func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }
	env := &rpc.Env{Table: commands.DefaultTable, Shutdown: func() {}}
	srv := rpc.NewServer(n, commands.DefaultTable, env, o)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	return l.Addr().String()
}

// dialFrom opens a TCP connection to addr from the local address from.
func dialFrom(from, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
	return d.Dial("tcp", addr)
}

// silent opens n connections from each of the addresses and keeps them
// open, sending nothing (slow) or one header line a second (slowloris).
func silent(t *testing.T, addr string, from []string, n int, slow bool) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for _, f := range from {
		for i := 0; i < n; i++ {
			c, err := dialFrom(f, addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			if slow {
				go func() {
					fmt.Fprintf(c, "POST /api/v0/version HTTP/1.1\r\nHost: x\r\n")
					for {
						time.Sleep(time.Second)
						if _, err := fmt.Fprintf(c, "X-a: b\r\n"); err != nil {
							return
						}
					}
				}()
			}
		}
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// version calls /api/v0/version from the address from over a fresh
// connection, and returns the status and how long it took.
func version(t *testing.T, addr, from string) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	c, err := dialFrom(from, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "POST /api/v0/version HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("version from %s: %v", from, err)
	}
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, time.Since(start)
}

// Ensure hundreds of silent and slowloris connections from the LAN do not
// keep legitimate requests out: one host's connections beyond its share
// are refused at once (429), so other hosts and loopback are served; many
// hosts together cannot take the share kept for loopback.
func TestSlowloris_LegitimateRequestsServed(t *testing.T) {
	addr := startGuarded(t, rpc.ServerOptions{Concurrency: 64})
	// 300 silent sockets and 50 slowloris from one LAN host.
	silent(t, addr, []string{"127.0.0.2"}, 300, false)
	silent(t, addr, []string{"127.0.0.2"}, 50, true)
	time.Sleep(200 * time.Millisecond)
	for i := 0; i < 20; i++ {
		for _, from := range []string{"127.0.0.1", "127.0.0.3"} {
			if code, d := version(t, addr, from); code != 200 || d > 2*time.Second {
				t.Fatalf("version from %s with 350 idle connections of 127.0.0.2 open: %d after %v", from, code, d)
			}
		}
	}
	// Then 10 more hosts with 30 silent sockets each: the LAN's share is
	// full, loopback keeps its own.
	var hosts []string
	for i := 10; i < 20; i++ {
		hosts = append(hosts, fmt.Sprintf("127.0.0.%d", i))
	}
	silent(t, addr, hosts, 30, false)
	time.Sleep(200 * time.Millisecond)
	for i := 0; i < 20; i++ {
		if code, d := version(t, addr, "127.0.0.1"); code != 200 || d > 2*time.Second {
			t.Fatalf("version from loopback with 650 idle connections open: %d after %v", code, d)
		}
	}
	if code, _ := version(t, addr, "127.0.0.30"); code != 503 {
		t.Fatalf("a new LAN host while the LAN's share is taken: %d, want 503", code)
	}
}

// Ensure the refusals say why: 429 for one address over its limit.
func TestSlowloris_PerAddressRefusal(t *testing.T) {
	addr := startGuarded(t, rpc.ServerOptions{Concurrency: 64})
	silent(t, addr, []string{"127.0.0.2"}, 16, false)
	time.Sleep(100 * time.Millisecond)
	c, err := dialFrom("127.0.0.2", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(b), "HTTP/1.1 429 ") || !strings.Contains(string(b), "Too many connections from 127.0.0.2: at most 16 at once.") {
		t.Fatalf("17th connection of one address: %q", b)
	}
}

// Ensure a connection that sends no request, or a request head too
// slowly, is closed after the header timeout; one that stops sending its
// body after the idle timeout, while a slow but steady body is read.
func TestSlowloris_Deadlines(t *testing.T) {
	addr := startGuarded(t, rpc.ServerOptions{HeaderTimeout: 500 * time.Millisecond, IdleTimeout: time.Second})
	closedWithin := func(c net.Conn, d time.Duration) error {
		c.SetReadDeadline(time.Now().Add(d))
		_, err := io.Copy(io.Discard, c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return fmt.Errorf("still open after %v", d)
		}
		return nil
	}
	quiet := silent(t, addr, []string{"127.0.0.2"}, 1, false)[0]
	slow := silent(t, addr, []string{"127.0.0.2"}, 1, true)[0]
	var wg sync.WaitGroup
	for name, c := range map[string]net.Conn{"silent": quiet, "slowloris": slow} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := closedWithin(c, 3*time.Second); err != nil {
				t.Errorf("%s connection: %v", name, err)
			}
		}()
	}
	// A body whose rest (past the 8 KiB read with the head) trickles a
	// byte every 300 ms over 3 s is read whole (past both timeouts); one
	// that stops for 2 s is dropped.
	steady, err := dialFrom("127.0.0.2", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer steady.Close()
	body := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n" + strings.Repeat("a", 9000) + "\r\n--B--\r\n"
	fmt.Fprintf(steady, "POST /api/v0/block/put HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: %d\r\n\r\n", len(body))
	steady.Write([]byte(body[:8500]))
	for i := 8500; i < len(body); i++ {
		if i < 8510 {
			time.Sleep(300 * time.Millisecond)
		}
		if _, err := steady.Write([]byte{body[i]}); err != nil {
			t.Fatalf("steady body cut at byte %d: %v", i, err)
		}
	}
	steady.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(steady), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("steady body: %v %v", resp, err)
	}
	stalled, err := dialFrom("127.0.0.2", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "POST /api/v0/block/put HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:8500])
	if err := closedWithin(stalled, 4*time.Second); err != nil {
		t.Errorf("stalled body: %v", err)
	}
	wg.Wait()
}
