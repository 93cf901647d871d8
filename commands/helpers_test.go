package commands_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
)

// mustCall runs a command in-process and fails the test on error.
func mustCall(t *testing.T, n *node.Node, path string, args []string, opts map[string]string, dir files.Directory) *rpc.Result {
	t.Helper()
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, path, args, opts, dir)
	if err != nil {
		t.Fatalf("%s %v: %v", path, args, err)
	}
	return res
}

// callErr runs a command in-process and returns its error (nil fails).
func callErr(t *testing.T, n *node.Node, path string, args []string, opts map[string]string, dir files.Directory) error {
	t.Helper()
	_, err := rpc.Call(context.Background(), n, commands.DefaultTable, path, args, opts, dir)
	if err == nil {
		t.Fatalf("%s %v %v: expected an error", path, args, opts)
	}
	return err
}

// addTree adds each entry of m as a top-level entry and returns the CID
// of the last event (the top entry added last).
func addTree(t *testing.T, n *node.Node, opts map[string]string, m map[string]files.Node) string {
	t.Helper()
	res := mustCall(t, n, "add", nil, opts, files.NewMapDirectory(m))
	last := res.Values[len(res.Values)-1].(*node.AddEvent)
	if last.Hash == "" {
		t.Fatalf("add: last event has no hash: %+v", last)
	}
	return last.Hash
}

// rpcPost posts to /api/v0/<path> with query q and an optional body.
func rpcPost(t *testing.T, srv *testutil.Server, path string, q url.Values, body io.Reader, contentType string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v0/"+path+"?"+q.Encode(), body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readAll reads a response body.
func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantErrorJSON checks a JSON error response.
func wantErrorJSON(t *testing.T, resp *http.Response, status int, msg string) {
	t.Helper()
	b := readAll(t, resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d (body %s)", resp.StatusCode, status, b)
	}
	var we struct {
		Message string
		Code    int
		Type    string
	}
	if err := json.Unmarshal(b, &we); err != nil {
		t.Fatalf("error body %q: %v", b, err)
	}
	if we.Message != msg || we.Type != "error" {
		t.Fatalf("error %+v, want message %q", we, msg)
	}
}

// wantErr checks that err's message is msg.
func wantErr(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil || err.Error() != msg {
		t.Fatalf("error %v, want %q", err, msg)
	}
}

// wantErrPrefix checks that err's message starts with prefix.
func wantErrPrefix(t *testing.T, err error, prefix string) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("error %v, want prefix %q", err, prefix)
	}
}

// notFound starts the error of a read of a block that a test node (no
// network, as Kubo's offline node) lacks.
const notFound = "block was not found locally (offline): ipld: could not find "
