package rpc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"
)

// countingListener counts the writes made on its connections: each is a
// syscall, and on loopback a wake-up of the reader.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// startCounted serves testTable for a fresh node on a listener that
// counts writes.
func startCounted(t *testing.T) (*testutil.Server, *atomic.Int64) {
	t.Helper()
	writes := new(atomic.Int64)
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{ServerHeader: "cairn/" + node.Version},
		func(l net.Listener) net.Listener { return countingListener{Listener: l, writes: writes} })
	return srv, writes
}

// postOn sends one request on c and reads its answer whole, trailer
// included.
func postOn(t *testing.T, c net.Conn, br *bufio.Reader, path string) (*http.Response, []byte) {
	t.Helper()
	if _, err := io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp, body
}

// A small answer (version, id, ...) keeps Kubo's framing (chunked, the
// declared X-Stream-Error trailer) and goes out in one write, not three
// (headers with the chunk, the last chunk, the trailer), on a kept-alive
// connection.
func TestWrites_SmallAnswerOneWrite(t *testing.T) {
	srv, writes := startCounted(t)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		before := writes.Load()
		resp, body := postOn(t, c, br, "/api/v0/version")
		if w := writes.Load() - before; w != 1 {
			t.Errorf("answer %d: %d writes, want 1", i, w)
		}
		if resp.StatusCode != 200 || !strings.HasPrefix(string(body), `{"Version":"`) || !strings.HasSuffix(string(body), "}\n") {
			t.Fatalf("answer %d: status %d, body %q", i, resp.StatusCode, body)
		}
		if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
			t.Errorf("Transfer-Encoding %v, want chunked", resp.TransferEncoding)
		}
		// net/http moves the declared trailer names into resp.Trailer.
		if _, ok := resp.Trailer["X-Stream-Error"]; !ok || len(resp.Trailer) != 1 {
			t.Errorf("trailers %v, want X-Stream-Error declared", resp.Trailer)
		}
		if resp.Header.Get("X-Chunked-Output") != "" || resp.Header.Get("X-Stream-Output") != "" {
			t.Errorf("a single value marked as a stream: %v", resp.Header)
		}
	}
}

// A large byte stream goes out in few writes, the bytes intact and the
// answer followed by a second one on the same connection.
func TestWrites_StreamBatched(t *testing.T) {
	srv, writes := startCounted(t)
	data := catData()
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	before := writes.Load()
	resp, body := postOn(t, c, br, "/api/v0/cat?arg=big")
	w := writes.Load() - before
	if !bytes.Equal(body, data) {
		t.Fatalf("cat: %d bytes, want the %d added", len(body), len(data))
	}
	if resp.Header.Get("X-Stream-Output") != "1" || resp.Header.Get("X-Content-Length") != "4194304" {
		t.Errorf("headers %v", resp.Header)
	}
	if max := int64(len(data) / (64 << 10)); w > max {
		t.Errorf("%d writes for %d bytes, want at most %d (64 KiB each)", w, len(data), max)
	}
	if _, body := postOn(t, c, br, "/api/v0/version"); !strings.HasPrefix(string(body), `{"Version":"`) {
		t.Errorf("next answer on the connection: %q", body)
	}
}

// A command's large writes go out as chunks of their own size, not
// fasthttp's 4 KiB ones; small writes after them still arrive, and an
// error after output is the X-Stream-Error trailer.
func TestWrites_LargeWritesWholeChunks(t *testing.T) {
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{}, nil)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "POST /api/v0/cat?arg=cut HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	tp := textproto.NewReader(br)
	if _, err := tp.ReadLine(); err != nil { // status line
		t.Fatal(err)
	}
	if _, err := tp.ReadMIMEHeader(); err != nil {
		t.Fatal(err)
	}
	var body []byte
	var sizes []int
	for {
		line, err := tp.ReadLine()
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(line, 16, 64)
		if err != nil {
			t.Fatalf("chunk size line %q: %v", line, err)
		}
		if n == 0 {
			break
		}
		sizes = append(sizes, int(n))
		chunk := make([]byte, n+2)
		if _, err := io.ReadFull(br, chunk); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(chunk, []byte("\r\n")) {
			t.Fatalf("chunk of %d bytes not followed by CRLF", n)
		}
		body = append(body, chunk[:n]...)
	}
	trailer, err := tp.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	if want := catData()[:1<<20+100]; !bytes.Equal(body, want) {
		t.Fatalf("%d bytes, want the first %d of catData", len(body), len(want))
	}
	if len(sizes) < 5 || sizes[0] != 256<<10 || sizes[3] != 256<<10 {
		t.Errorf("chunk sizes %v, want four of 256 KiB first", sizes)
	}
	if got := trailer.Get("X-Stream-Error"); got != "the disk failed" {
		t.Errorf("trailer %v, want X-Stream-Error: the disk failed", trailer)
	}
}

// A single value larger than what is kept in memory (testTable's ls, 800
// links, about 100 KB of JSON) is streamed as before: one JSON
// document, no stream header, every entry there.
func TestWrites_LargeSingleAnswer(t *testing.T) {
	srv, _ := startCounted(t)
	resp, body := testutil.PostURL(t, srv.URL+"/api/v0/ls", nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Chunked-Output") != "" || len(body) < 64<<10 {
		t.Fatalf("status %d, headers %v, %d bytes", resp.StatusCode, resp.Header, len(body))
	}
	var out struct {
		Objects []struct{ Links []struct{ Name string } }
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Objects) != 1 || len(out.Objects[0].Links) != lsEntries {
		t.Fatalf("%d objects, want 1 with 800 links", len(out.Objects))
	}
}

// An answer without an error after output ends as Kubo's does: the last
// chunk and an empty trailer section ("0\r\n\r\n"), no X-Stream-Error
// line with an empty value; the trailer is still declared. So does an
// error answered as the body (500 and its JSON).
func TestWrites_NoEmptyTrailerLine(t *testing.T) {
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{}, nil)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 4096)
	for i, path := range []string{"version", "version", "cat?arg=QmNotACid"} {
		if _, err := io.WriteString(c, "POST /api/v0/"+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n := 0
		for !bytes.HasSuffix(buf[:n], []byte("}\n\r\n0\r\n\r\n")) {
			m, err := c.Read(buf[n:])
			if err != nil {
				t.Fatalf("answer %d: %v after %q", i, err, buf[:n])
			}
			n += m
		}
		head, _, _ := bytes.Cut(buf[:n], []byte("\r\n\r\n"))
		if !bytes.Contains(head, []byte("\r\nTrailer: X-Stream-Error\r\n")) && !bytes.HasSuffix(head, []byte("\r\nTrailer: X-Stream-Error")) {
			t.Errorf("answer %d: trailer not declared: %q", i, head)
		}
		if bytes.Count(buf[:n], []byte("X-Stream-Error")) != 1 {
			t.Errorf("answer %d: an X-Stream-Error line besides the declaration: %q", i, buf[:n])
		}
	}
}
