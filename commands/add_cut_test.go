package commands_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/storage"
)

// sendCutAdd posts an add whose multipart body stops in the middle of a
// 2 MB file (600 KB sent), half-closes the connection and returns the
// answer. chunked sends the body chunked, else with a Content-Length of
// the whole body.
func sendCutAdd(t *testing.T, srv *testutil.Server, query string, chunked bool) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	part := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cut.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
	const whole = 2 << 20
	head := "POST /api/v0/add?" + query + " HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
	if chunked {
		head += "Transfer-Encoding: chunked\r\n\r\n"
	} else {
		head += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(part)+whole+len("\r\n--B--\r\n"))
	}
	w := bufio.NewWriter(c)
	w.WriteString(head)
	send := func(b []byte) {
		if chunked {
			fmt.Fprintf(w, "%x\r\n", len(b))
		}
		w.Write(b)
		if chunked {
			w.WriteString("\r\n")
		}
	}
	send([]byte(part))
	buf := make([]byte, 60<<10)
	for i := 0; i < 10; i++ {
		rand.Read(buf)
		send(buf)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a cut add: %v", err)
	}
	return resp
}

// Ensure an add whose body is cut mid-file answers an error and leaves
// no pin, no MFS entry and (after a GC) no block: with Content-Length and
// chunked bodies, with --pin=false and --to-files.
func TestAdd_CutBodyKeepsNothing(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		chunked     bool
	}{
		{"content-length", "", false},
		{"chunked", "", true},
		{"no-pin", "pin=false", false},
		{"to-files", "to-files=/cut.bin", true},
		{"progress", "progress=true", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := testutil.MustOpenNode(t)
			srv := testutil.StartServer(t, n)
			ctx := context.Background()
			m, err := n.MFS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			base := n.Store.BlockBytes() // the empty MFS root
			resp := sendCutAdd(t, srv, tc.query, tc.chunked)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			msg := string(body) + resp.Trailer.Get("X-Stream-Error")
			if resp.StatusCode == 200 && resp.Trailer.Get("X-Stream-Error") == "" {
				t.Fatalf("cut add answered 200 with no error: %s", body)
			}
			if !strings.Contains(msg, "unexpected EOF") && !strings.Contains(msg, "context canceled") {
				t.Fatalf("cut add: %d %q", resp.StatusCode, msg)
			}
			if strings.Contains(msg, `"Hash"`) {
				t.Fatalf("cut add acknowledged a file: %s", body)
			}
			pins, err := n.Pins(ctx, "all")
			if err != nil || len(pins) != 0 {
				t.Fatalf("pins after a cut add: %v %v", pins, err)
			}
			if ents, err := m.List(ctx, "/", false, nil); err != nil || len(ents) != 0 {
				t.Fatalf("MFS after a cut add: %v %v", ents, err)
			}
			if _, err := n.CollectGarbage(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if b := n.Store.BlockBytes(); b != base {
				t.Fatalf("%d block bytes kept after a cut add and a GC", b)
			}
			if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
				t.Fatal(errs)
			}
		})
	}
}
