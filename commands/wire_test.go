package commands_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
)

// wireCase is one golden file of testdata/wire: a raw request, a line of
// dashes, then the expected status, headers (a subset, exact values) and
// body. A body line may use * as a wildcard; a body of "*" alone matches
// anything. "Trailer-X-Stream-Error: msg" checks the trailer.
type wireCase struct {
	method, target string
	reqHeaders     http.Header
	reqBody        string
	status         int
	headers        http.Header
	body           string
}

func parseWireCase(t *testing.T, path string) wireCase {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	req, resp, ok := strings.Cut(string(raw), "\n----------\n")
	if !ok {
		t.Fatalf("%s: no separator", path)
	}
	var wc wireCase
	head, body, _ := strings.Cut(req, "\n")
	parts := strings.Fields(head)
	wc.method, wc.target = parts[0], parts[1]
	wc.reqHeaders = http.Header{}
	hdrs, reqBody, _ := strings.Cut(body, "\n\n")
	for _, l := range strings.Split(hdrs, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			wc.reqHeaders.Add(k, v)
		}
	}
	wc.reqBody = strings.ReplaceAll(reqBody, "\n", "\r\n")
	lines := strings.Split(resp, "\n")
	fmt.Sscanf(lines[0], "%d", &wc.status)
	wc.headers = http.Header{}
	i := 1
	for ; i < len(lines) && lines[i] != ""; i++ {
		if k, v, ok := strings.Cut(lines[i], ": "); ok {
			wc.headers.Add(k, v)
		}
	}
	// The body is everything after the blank line, less the file's
	// final newline.
	if i+1 <= len(lines) {
		wc.body = strings.TrimSuffix(strings.Join(lines[i+1:], "\n"), "\n")
	}
	return wc
}

func rawDo(t *testing.T, addr string, wc wireCase) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", wc.method, wc.target, addr)
	for k, vs := range wc.reqHeaders {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if wc.reqHeaders.Get("User-Agent") == "" {
		b.WriteString("User-Agent: go-ipfs-cmds/http\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(wc.reqBody), wc.reqBody)
	if _, err := c.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(wc.method, "http://"+addr+wc.target, nil)
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

func bodyMatches(want, got string) bool {
	if strings.TrimSpace(want) == "*" {
		return true
	}
	if !strings.Contains(want, "*") {
		return want == got
	}
	pat := "^" + strings.ReplaceAll(regexp.QuoteMeta(want), `\*`, ".*") + "$"
	return regexp.MustCompile("(?s)" + pat).MatchString(got)
}

// seedHello adds "hello world\n" (QmT78zSu...) to n.
func seedHello(t *testing.T, srv *testutil.Server) {
	t.Helper()
	dir := files.NewMapDirectory(map[string]files.Node{"hello": files.NewBytesFile([]byte("hello world\n"))})
	if _, err := rpc.Call(context.Background(), srv.Node, commands.DefaultTable, "add", nil, nil, dir); err != nil {
		t.Fatal(err)
	}
}

// Ensure every golden request of testdata/wire gets the recorded answer.
func TestWire_Golden(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	seedHello(t, srv)
	paths, err := filepath.Glob("testdata/wire/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txt"), func(t *testing.T) {
			wc := parseWireCase(t, p)
			resp, body := rawDo(t, srv.Addr, wc)
			if resp.StatusCode != wc.status {
				t.Fatalf("status: got %d, want %d (body %q)", resp.StatusCode, wc.status, body)
			}
			for k, vs := range wc.headers {
				if k == "Trailer-X-Stream-Error" {
					if got := resp.Trailer.Get("X-Stream-Error"); got != vs[0] {
						t.Errorf("trailer X-Stream-Error: got %q, want %q", got, vs[0])
					}
					continue
				}
				if k == "Trailer" {
					if _, ok := resp.Trailer[http.CanonicalHeaderKey(vs[0])]; !ok {
						t.Errorf("trailer %s not declared", vs[0])
					}
					continue
				}
				if got := resp.Header.Values(k); strings.Join(got, ",") != strings.Join(vs, ",") {
					t.Errorf("header %s: got %q, want %q", k, got, vs)
				}
			}
			if !bodyMatches(wc.body, string(body)) {
				t.Errorf("body:\ngot  %q\nwant %q", body, wc.body)
			}
		})
	}
}
