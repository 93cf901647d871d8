package commands_test

import (
	"bufio"
	"context"
	"encoding/json"
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

// Ensure the root of a recursive pin is not "indirect through" itself:
// Kubo answers that it is not pinned indirectly (found side by side).
func TestPinLs_IndirectOfRecursiveRoot_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	c := addTree(t, n, map[string]string{"pin": "true"}, map[string]files.Node{"f": files.NewBytesFile([]byte("hello world\n"))})
	wantErr(t, callErr(t, n, "pin/ls", []string{c}, map[string]string{"type": "indirect"}, nil), "path '"+c+"' is not pinned")
}

// pinState lists pins (all types but indirect) as CID -> "type name".
func pinState(t *testing.T, srv *testutil.Server) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, typ := range []string{"recursive", "direct"} {
		resp := pinPost(t, srv, "pin/ls?names=true&type="+typ)
		got := lines(t, resp)
		keys, _ := got[0]["Keys"].(map[string]any) // omitted when empty, as in Kubo
		for c, v := range keys {
			m := v.(map[string]any)
			name, _ := m["Name"].(string)
			out[c] = m["Type"].(string) + " " + name
		}
	}
	return out
}

func sameState(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: pins %v, want %v", what, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: pins %v, want %v", what, got, want)
		}
	}
}

// Ensure every pin mutation keeps what Kubo 0.42 keeps: pin/update to a
// root already pinned recursively is refused and changes nothing (it
// dropped the old pin), update with unpin=false keeps both, a repeated
// pin/add replaces the name as boxo's pinner does, rm of a name-less pin
// removes exactly it, and a direct pin of a recursive one is refused with
// Kubo's text (no doubled prefix).
func TestPin_Mutations_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	a := addBytes(t, n, []byte("A"), map[string]string{"pin": "false"}).String()
	b := addBytes(t, n, []byte("B"), map[string]string{"pin": "false"}).String()
	c := addBytes(t, n, []byte("C"), map[string]string{"pin": "false"}).String()
	pinPost(t, srv, "pin/add?arg="+a+"&name=na")
	pinPost(t, srv, "pin/add?arg="+b+"&name=nb")
	before := pinState(t, srv)
	sameState(t, "setup", before, map[string]string{a: "recursive na", b: "recursive nb"})

	for _, unpin := range []string{"true", "false"} {
		resp := rpcPost(t, srv, "pin/update", url.Values{"arg": {a, b}, "unpin": {unpin}}, nil, "")
		wantErrorJSON(t, resp, 500, "'to' cid was already recursively pinned")
		sameState(t, "update to a pinned root, unpin="+unpin, pinState(t, srv), before)
	}
	resp := rpcPost(t, srv, "pin/update", url.Values{"arg": {a, c}, "unpin": {"false"}}, nil, "")
	readAll(t, resp.Body)
	sameState(t, "update unpin=false", pinState(t, srv), map[string]string{a: "recursive na", b: "recursive nb", c: "recursive na"})

	// Pinning again replaces the name, also by an empty one (boxo).
	pinPost(t, srv, "pin/add?arg="+c+"&name=nc")
	sameState(t, "re-pin with a name", pinState(t, srv), map[string]string{a: "recursive na", b: "recursive nb", c: "recursive nc"})
	pinPost(t, srv, "pin/add?arg="+c)
	sameState(t, "re-pin without a name", pinState(t, srv), map[string]string{a: "recursive na", b: "recursive nb", c: "recursive "})

	// rm of the name-less pin removes it alone.
	pinPost(t, srv, "pin/rm?arg="+c)
	sameState(t, "rm name-less", pinState(t, srv), map[string]string{a: "recursive na", b: "recursive nb"})

	resp = rpcPost(t, srv, "pin/add", url.Values{"arg": {a}, "recursive": {"false"}}, nil, "")
	wantErrorJSON(t, resp, 500, "pin: "+a+" already pinned recursively")
	sameState(t, "direct over recursive", pinState(t, srv), map[string]string{a: "recursive na", b: "recursive nb"})
}

// Ensure pin/ls?name=X lists only the pins whose name contains X, names
// shown, and type=indirect with an argument finds a block pinned directly
// and inside a recursive pin as "indirect through <root>" (Kubo's
// IsPinnedWithType).
func TestPinLs_NameFilterAndIndirectArg(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root, file := addDir(t, n)
	x := addBytes(t, n, []byte("X"), map[string]string{"pin": "false"}).String()
	pinPost(t, srv, "pin/add?arg="+root+"&name=photos-2024")
	pinPost(t, srv, "pin/add?arg="+x+"&name=music")
	pinPost(t, srv, "pin/add?arg="+file+"&recursive=false&name=one-file")

	keys := func(q url.Values) map[string]any {
		t.Helper()
		resp := rpcPost(t, srv, "pin/ls", q, nil, "")
		got := lines(t, resp)
		k, _ := got[0]["Keys"].(map[string]any)
		return k
	}
	k := keys(url.Values{"name": {"photos"}})
	if len(k) != 1 || k[root].(map[string]any)["Name"] != "photos-2024" {
		t.Fatalf("name=photos: %v", k)
	}
	if k := keys(url.Values{"name": {"o"}}); len(k) != 2 || k[file] == nil || k[root] == nil {
		t.Fatalf("name=o: %v", k)
	}
	if k := keys(url.Values{"name": {"nothing"}}); len(k) != 0 {
		t.Fatalf("name=nothing: %v", k)
	}
	k = keys(url.Values{"type": {"indirect"}, "arg": {file}})
	if k[file].(map[string]any)["Type"] != "indirect through "+root {
		t.Fatalf("type=indirect arg=%s: %v", file, k)
	}
	if k := keys(url.Values{"type": {"direct"}, "arg": {file}}); k[file].(map[string]any)["Type"] != "direct" {
		t.Fatalf("type=direct: %v", k)
	}
}

// Ensure pin/add?progress=true reports {"Progress":n,"Bytes":m}, also for
// a DAG already pinned (Kubo's pinner walks it again).
func TestPinAdd_ProgressBytes(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root, _ := addDir(t, n)
	for _, round := range []string{"first", "already pinned"} {
		resp := pinPost(t, srv, "pin/add?progress=true&arg="+root)
		got := lines(t, resp)
		if len(got) < 2 {
			t.Fatalf("%s: %v", round, got)
		}
		p := got[len(got)-2]
		// d (a dag-pb node) and a.txt's raw leaf "aaa".
		if p["Progress"] != float64(2) || p["Bytes"] == nil || p["Bytes"].(float64) <= 3 {
			t.Fatalf("%s: progress line %v", round, p)
		}
	}
}

// Ensure repo/gc?silent=true removes garbage and writes nothing (Kubo).
func TestRepoGC_Silent(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	addDir(t, n)
	resp := pinPost(t, srv, "repo/gc?silent=true")
	if got := lines(t, resp); resp.StatusCode != 200 || len(got) != 0 {
		t.Fatalf("silent gc: %d %v", resp.StatusCode, got)
	}
	resp = pinPost(t, srv, "repo/stat")
	if got := lines(t, resp); got[0]["NumObjects"] != float64(0) {
		t.Fatalf("after silent gc: %v", got)
	}
}

// Ensure repo/verify streams {"Msg":"","Progress":n} per block, then its
// final line, as Kubo.
func TestRepoVerify_StreamsProgress(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	addDir(t, n)
	resp := pinPost(t, srv, "repo/verify")
	got := lines(t, resp)
	if len(got) != 3 || got[0]["Progress"] != float64(1) || got[0]["Msg"] != "" || got[1]["Progress"] != float64(2) ||
		got[2]["Msg"] != "verify complete, all blocks validated." {
		t.Fatalf("repo verify: %v", got)
	}
}
