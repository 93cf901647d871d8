package httpapp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"cairn/modules/httpapp"
)

// Ensure silent and slowloris connections from LAN hosts do not keep the
// module port from serving: one host gets its share (then 429), other
// hosts and loopback are served, many hosts cannot take loopback's share,
// and a connection that never sends a byte is closed after
// FirstByteTimeout, one that sends its head too slowly after ReadTimeout.
func TestServer_Slowloris(t *testing.T) {
	_, base := start(t, httpapp.Options{
		FirstByteTimeout: 500 * time.Millisecond, ReadTimeout: time.Second,
		IsLocal: func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") },
	}, &httpapp.App{Module: "a", Routes: map[string]any{"GET /": text("ok")}})
	addr := strings.TrimPrefix(base, "http://")
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	get := func(from string) int {
		t.Helper()
		c := dial(from)
		c.SetDeadline(time.Now().Add(3 * time.Second))
		fmt.Fprintf(c, "GET /a/ HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("GET from %s: %v", from, err)
		}
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	var first []net.Conn
	for i := 0; i < 300; i++ {
		c := dial("127.0.0.2")
		if i%2 == 1 {
			fmt.Fprintf(c, "GET /a/ HTTP/1.1\r\n")
		}
		first = append(first, c)
	}
	time.Sleep(100 * time.Millisecond)
	for _, from := range []string{"127.0.0.1", "127.0.0.3"} {
		if code := get(from); code != 200 {
			t.Fatalf("GET from %s with 300 idle connections of 127.0.0.2: %d", from, code)
		}
	}
	for h := 10; h < 20; h++ {
		for i := 0; i < 20; i++ {
			dial(fmt.Sprintf("127.0.0.%d", h))
		}
	}
	time.Sleep(100 * time.Millisecond)
	if code := get("127.0.0.1"); code != 200 {
		t.Fatalf("GET from loopback with 500 idle connections: %d", code)
	}
	// The first host's admitted connections: silent ones closed after
	// 500 ms, slow heads after 1.5 s at most.
	deadline := time.Now().Add(3 * time.Second)
	for i, c := range first[:32] {
		c.SetReadDeadline(deadline)
		if _, err := io.Copy(io.Discard, c); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("connection %d of 127.0.0.2 still open after 3s", i)
			}
		}
	}
}
