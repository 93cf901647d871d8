package rpc_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
)

// testTable is the command table of the framework's tests: a few commands
// with the shapes of Kubo's (a single value, a stream, a byte stream, file
// arguments, an error before output, a stream that runs until its context
// ends), so that the server is tested without the command families.
var testTable = rpc.NewTable([]rpc.Option{
	{Names: []string{"encoding", "enc"}, Type: rpc.String},
	{Names: []string{"stream-channels"}, Type: rpc.Bool},
	{Names: []string{"timeout"}, Type: rpc.String},
}, []*rpc.Command{
	{Path: "version", NoRepo: true, Output: rpc.OutSingle, Run: func(r *rpc.Request, e rpc.Emitter) error {
		return e.Emit(map[string]string{"Version": node.Version})
	}},
	{Path: "version/deps", NoRepo: true, Output: rpc.OutStream, Run: func(r *rpc.Request, e rpc.Emitter) error {
		return e.Emit(map[string]string{"Path": "cairn"})
	}},
	{Path: "id", Output: rpc.OutSingle, Run: func(r *rpc.Request, e rpc.Emitter) error {
		return e.Emit(map[string]string{"ID": r.Node.PeerID.String()})
	}},
	{Path: "commands", NoRepo: true, Output: rpc.OutSingle, Run: func(r *rpc.Request, e rpc.Emitter) error {
		return e.Emit(map[string]string{"Name": "cairn"})
	}},
	// cat answers catData for the argument "big"; for "cut", its first
	// MiB in 256 KiB writes, then 100 bytes in small writes, then an
	// error; an error before any output for any other.
	{Path: "cat", Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true}}, Output: rpc.OutBytes,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			data := catData()
			if r.Args[0] == "cut" {
				for off := 0; off < 1<<20; off += 256 << 10 {
					if _, err := e.Write(data[off : off+256<<10]); err != nil {
						return err
					}
				}
				for off := 1 << 20; off < 1<<20+100; off += 10 {
					if _, err := e.Write(data[off : off+10]); err != nil {
						return err
					}
				}
				return errors.New("the disk failed")
			}
			if r.Args[0] != "big" {
				return fmt.Errorf("invalid path %q", r.Args[0])
			}
			e.SetLength(uint64(len(data)))
			for off := 0; off < len(data); off += 256 << 10 {
				if _, err := e.Write(data[off : off+256<<10]); err != nil {
					return err
				}
			}
			return nil
		}},
	// ls answers one value of lsEntries links, about 100 KB of JSON.
	{Path: "ls", Output: rpc.OutSingle, Run: func(r *rpc.Request, e rpc.Emitter) error {
		type link struct{ Name, Hash string }
		links := make([]link, lsEntries)
		for i := range links {
			links[i] = link{Name: fmt.Sprintf("file-with-a-long-name-%04d", i), Hash: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"}
		}
		return e.Emit(map[string]any{"Objects": []map[string]any{{"Links": links}}})
	}},
	// log/tail sends its headers and runs until its context ends.
	{Path: "log/tail", Output: rpc.OutStream, Run: func(r *rpc.Request, e rpc.Emitter) error {
		if err := rpc.StartStream(e); err != nil {
			return err
		}
		<-r.Ctx.Done()
		return nil
	}},
	// block/put reads its file arguments whole and answers their size.
	{Path: "block/put", Args: []rpc.Arg{{Name: "data", Kind: rpc.ArgFile, Required: true, Variadic: true}}, Output: rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			var size int64
			it := r.Files.Entries()
			for it.Next() {
				f, ok := it.Node().(files.File)
				if !ok {
					continue
				}
				n, err := io.Copy(io.Discard, f)
				if err != nil {
					return err
				}
				size += n
			}
			if it.Err() != nil {
				return it.Err()
			}
			return e.Emit(map[string]int64{"Size": size})
		}},
})

// lsEntries is how many links testTable's ls answers.
const lsEntries = 800

// catData is what testTable's cat answers for "big": 4 MiB of random bytes.
var catData = sync.OnceValue(func() []byte {
	b := make([]byte, 4<<20)
	rand.Read(b)
	return b
})

// startServer serves testTable for n with o on 127.0.0.1:0 until cleanup;
// wrap, if not nil, wraps the listener.
func startServer(t *testing.T, n *node.Node, o rpc.ServerOptions, wrap func(net.Listener) net.Listener) *testutil.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if wrap != nil {
		l = wrap(l)
	}
	env := &rpc.Env{Table: testTable, Shutdown: func() {}}
	srv := rpc.NewServer(n, testTable, env, o)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	return &testutil.Server{URL: "http://" + addr, Addr: addr, Node: n, Srv: srv}
}

// Ensure timeout cancels a command and bad durations are a 400.
func TestServer_Timeout(t *testing.T) {
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{}, nil)
	resp, body := testutil.PostURL(t, srv.URL+"/api/v0/version?timeout=bogus", nil)
	if resp.StatusCode != 400 || !strings.HasPrefix(string(body), "invalid timeout") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	resp, _ = testutil.PostURL(t, srv.URL+"/api/v0/version?timeout=30s", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("got %d", resp.StatusCode)
	}
}

// Ensure AfterLong runs when a command that ran LongRequest or longer
// returns, before its answer ends, and not after a short one.
func TestServer_AfterLong(t *testing.T) {
	var calls atomic.Int32
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{
		AfterLong: func() { calls.Add(1) }, LongRequest: 100 * time.Millisecond}, nil)
	if resp, _ := testutil.PostURL(t, srv.URL+"/api/v0/version", nil); resp.StatusCode != 200 || calls.Load() != 0 {
		t.Fatalf("version: status %d, AfterLong called %d times; want 200 and none", resp.StatusCode, calls.Load())
	}
	// log/tail runs until its timeout ends it; the body is read whole.
	if resp, _ := testutil.PostURL(t, srv.URL+"/api/v0/log/tail?timeout=300ms", nil); resp.StatusCode != 200 || calls.Load() != 1 {
		t.Fatalf("log/tail for 300ms: status %d, AfterLong called %d times by the answer's end; want 200 and once", resp.StatusCode, calls.Load())
	}
}

// Shutdown stops the commands still running (here log/tail, which runs
// until its context ends): the open answer ends and Shutdown returns
// without waiting for its timeout.
func TestServer_ShutdownStopsRunningCommand(t *testing.T) {
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{}, nil)
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

// Ensure a non-canonical path answers 307, which clients follow with the
// same POST (after a 301 they sent a GET and got 405).
func TestRedirect_307KeepsPost(t *testing.T) {
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{}, nil)
	for _, p := range []string{"/api/v0//version", "/api/v0/x/../version"} {
		resp, err := http.Post(srv.URL+p, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"Version"`)) {
			t.Fatalf("POST %s followed: %d %s", p, resp.StatusCode, b)
		}
	}
}

// startGuarded serves testTable for a fresh node with o, treating only
// 127.0.0.1 as local: the other 127.0.0.x addresses stand for hosts of
// the LAN.
func startGuarded(t *testing.T, o rpc.ServerOptions) string {
	t.Helper()
	o.IsLocal = func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }
	return startServer(t, testutil.MustOpenNode(t), o, nil).Addr
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
