package commands_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"cairn/internal/testutil"
)

// Ensure a multipart request with no body answers Kubo's "multipart:
// NextPart: EOF" for every command taking files, never a recovered panic.
func TestMultipart_NoBody(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for _, path := range []string{"add", "block/put", "dag/put", "dag/import", "tar/add", "config/replace", "object/put"} {
		for _, length := range []string{"", "Content-Length: 0\r\n"} {
			c, err := net.Dial("tcp", srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(c, "POST /api/v0/"+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"+length+"\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			c.Close()
			msg := string(body) + resp.Trailer.Get("X-Stream-Error")
			if resp.StatusCode != 500 || !strings.Contains(msg, `"multipart: NextPart: EOF"`) {
				t.Errorf("%s with no body (%q): %d %q", path, length, resp.StatusCode, msg)
			}
		}
	}
}
