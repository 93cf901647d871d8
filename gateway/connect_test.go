package gateway_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
)

// tunnel dials the gateway and asks CONNECT target; it returns the
// answer and, when it is 200, the connection to send requests on.
func (s *site) tunnel(t *testing.T, target string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp, c, br
}

// get sends a GET for path with Host on a tunnel and reads the answer.
func get(t *testing.T, c net.Conn, br *bufio.Reader, host, path string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	var b []byte
	if err == nil {
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// CONNECT to the gateway itself opens a tunnel whose requests the
// gateway answers as its own, Host and all (curl --proxytunnel).
func TestGateway_Connect_Self(t *testing.T) {
	s := newSite(t, nil)
	addr := strings.TrimPrefix(s.url, "http://")
	port := addr[strings.LastIndex(addr, ":")+1:]
	v1 := cid.NewCidV1(s.root.Type(), s.root.Hash()).String()
	for _, target := range []string{addr, "localhost:" + port, v1 + ".ipfs.localhost:" + port} {
		resp, c, br := s.tunnel(t, target)
		if resp.StatusCode != 200 {
			t.Fatalf("CONNECT %s: got %d", target, resp.StatusCode)
		}
		resp, body := get(t, c, br, v1+".ipfs.localhost:"+port, "/a.txt")
		if resp.StatusCode != 200 || body != "hello\n" {
			t.Errorf("CONNECT %s, then GET /a.txt: got %d %q", target, resp.StatusCode, body)
		}
		// The tunnel is an HTTP connection like any other: a second
		// request on it, to another host of the gateway.
		resp, _ = get(t, c, br, "localhost:"+port, "/ipfs/"+s.root.String()+"/a.txt")
		if resp.StatusCode != 301 || !strings.HasPrefix(resp.Header.Get("Location"), "http://"+v1+".ipfs.localhost:"+port+"/a.txt") {
			t.Errorf("CONNECT %s, then the path gateway: got %d %q", target, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

// CONNECT to any other host is refused and the connection closed: the
// gateway tunnels to itself only, and dials nowhere.
func TestGateway_Connect_Other(t *testing.T) {
	s := newSite(t, nil)
	addr := strings.TrimPrefix(s.url, "http://")
	port := addr[strings.LastIndex(addr, ":")+1:]
	for _, tc := range []struct {
		target string
		code   int
	}{
		{"example.net:443", 403},
		{"127.0.0.1:1", 403},        // another port of this machine
		{"localhost:1", 403},        // the same, by name
		{"10.0.0.1:" + port, 403},   // another address, the gateway's port
		{"169.254.169.254:80", 403}, // a metadata service
		{"127.0.0.1", 403},          // no port
		{"", 400},                   // no target: not a request line
	} {
		target := tc.target
		resp, c, br := s.tunnel(t, target)
		if resp.StatusCode != tc.code {
			t.Errorf("CONNECT %q: got %d, want %d", target, resp.StatusCode, tc.code)
		}
		if _, err := io.WriteString(c, "GET /version HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err == nil {
			if _, err := http.ReadResponse(br, nil); err == nil {
				t.Errorf("CONNECT %q: the connection stayed open", target)
			}
		}
	}
}
