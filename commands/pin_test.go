package commands_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
)

func addDir(t *testing.T, n *node.Node) (root, file string) {
	t.Helper()
	dir := files.NewMapDirectory(map[string]files.Node{"d": files.NewMapDirectory(map[string]files.Node{
		"a.txt": files.NewBytesFile([]byte("aaa")),
	})})
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil, map[string]string{"pin": "false"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return res.Values[1].(*node.AddEvent).Hash, res.Values[0].(*node.AddEvent).Hash
}

func lines(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func pinPost(t *testing.T, srv *testutil.Server, path string) *http.Response {
	t.Helper()
	resp, err := http.Post(srv.URL+"/api/v0/"+path, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Ensure pin add/ls/rm/update/verify answer Kubo's shapes and errors.
func TestPin_HTTP_Shapes(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root, file := addDir(t, n)

	resp := pinPost(t, srv, "pin/add?arg="+root)
	if got := lines(t, resp); resp.Header.Get("X-Chunked-Output") != "" || len(got) != 1 || got[0]["Pins"].([]any)[0] != root {
		t.Fatalf("pin add: %v %v", resp.Header, got)
	}
	resp = pinPost(t, srv, "pin/add?arg="+root+"&progress=true")
	got := lines(t, resp)
	if resp.Header.Get("X-Chunked-Output") != "1" || got[len(got)-1]["Pins"] == nil {
		t.Fatalf("pin add progress: %v %v", resp.Header, got)
	}

	resp = pinPost(t, srv, "pin/ls")
	got = lines(t, resp)
	keys := got[0]["Keys"].(map[string]any)
	if keys[root].(map[string]any)["Type"] != "recursive" || keys[file].(map[string]any)["Type"] != "indirect" || len(keys) != 2 {
		t.Fatalf("pin ls: %v", got)
	}
	resp = pinPost(t, srv, "pin/ls?stream=true&type=recursive")
	got = lines(t, resp)
	if resp.Header.Get("X-Chunked-Output") != "1" || len(got) != 1 || got[0]["Cid"] != root || got[0]["Type"] != "recursive" {
		t.Fatalf("pin ls stream: %v", got)
	}
	resp = pinPost(t, srv, "pin/ls?arg="+file)
	got = lines(t, resp)
	if got[0]["Keys"].(map[string]any)[file].(map[string]any)["Type"] != "indirect through "+root {
		t.Fatalf("pin ls arg: %v", got)
	}
	resp = pinPost(t, srv, "pin/ls?type=bogus")
	if got := lines(t, resp); resp.StatusCode != 500 || got[0]["Message"] != "invalid type 'bogus', must be one of {direct, indirect, recursive, all}" {
		t.Fatalf("bad type: %d %v", resp.StatusCode, got)
	}

	resp = pinPost(t, srv, "pin/verify?verbose=true")
	got = lines(t, resp)
	if len(got) != 1 || got[0]["Ok"] != true || got[0]["Cid"] != root {
		t.Fatalf("pin verify: %v", got)
	}

	other := addBytes(t, n, []byte("other"), map[string]string{"pin": "false"}).String()
	resp = pinPost(t, srv, "pin/update?arg="+root+"&arg="+other)
	if got := lines(t, resp); got[0]["Pins"].([]any)[1] != other {
		t.Fatalf("pin update: %v", got)
	}
	resp = pinPost(t, srv, "pin/rm?arg="+root)
	if got := lines(t, resp); resp.StatusCode != 500 || !strings.Contains(got[0]["Message"].(string), "not pinned") {
		t.Fatalf("pin rm of old root: %d %v", resp.StatusCode, got)
	}
	resp = pinPost(t, srv, "pin/rm?arg="+other)
	if got := lines(t, resp); got[0]["Pins"].([]any)[0] != other {
		t.Fatalf("pin rm: %v", got)
	}
	resp = pinPost(t, srv, "pin/ls?arg="+other)
	if got := lines(t, resp); got[0]["Message"] != "path '"+other+"' is not pinned" {
		t.Fatalf("pin ls unpinned: %v", got)
	}
}

// Ensure repo gc streams the removed keys and repo stat counts objects.
func TestRepo_HTTP_GCStat(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	addDir(t, n)
	resp := pinPost(t, srv, "repo/stat")
	got := lines(t, resp)
	if got[0]["NumObjects"].(float64) != 2 || got[0]["StorageMax"].(float64) != 1e10 || got[0]["Version"] != "fs-repo@1" {
		t.Fatalf("repo stat: %v", got)
	}
	resp = pinPost(t, srv, "repo/gc")
	got = lines(t, resp)
	if resp.Header.Get("X-Chunked-Output") != "1" || len(got) != 2 || !strings.HasPrefix(got[0]["Key"].(map[string]any)["/"].(string), "bafkrei") {
		t.Fatalf("repo gc: %v", got)
	}
	// Every field, always, as Kubo sends them (kubo-rpc-client converts
	// each to a BigInt): size-only leaves them zero, an empty repo says 0.
	resp = pinPost(t, srv, "stats/repo?size-only=true")
	got = lines(t, resp)
	for _, k := range []string{"NumObjects", "RepoSize", "StorageMax", "RepoPath", "Version"} {
		if _, ok := got[0][k]; !ok {
			t.Fatalf("size-only lacks %s: %v", k, got)
		}
	}
	if got[0]["NumObjects"].(float64) != 0 || got[0]["RepoPath"] != "" || got[0]["Version"] != "" {
		t.Fatalf("size-only: %v", got)
	}
	resp = pinPost(t, srv, "repo/stat")
	if got := lines(t, resp); got[0]["NumObjects"] == nil || got[0]["NumObjects"].(float64) != 0 {
		t.Fatalf("repo stat of an empty repo: %v", got)
	}
	resp = pinPost(t, srv, "repo/version")
	if got := lines(t, resp); got[0]["Version"] != "1" {
		t.Fatalf("repo version: %v", got)
	}
	resp = pinPost(t, srv, "repo/verify")
	got = lines(t, resp)
	if got[len(got)-1]["Msg"] != "verify complete, all blocks validated." {
		t.Fatalf("repo verify: %v", got)
	}
	// repo/fsck is CLI-only, as in Kubo.
	if resp := pinPost(t, srv, "repo/fsck"); resp.StatusCode != 404 {
		t.Fatalf("repo/fsck over HTTP: %d", resp.StatusCode)
	}
}
