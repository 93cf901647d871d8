package commands_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"cairn/internal/testutil"

	"github.com/ipfs/boxo/files"
)

// Ensure native IPFS URIs (ipfs://, ipns://, ipfs:, ipns:; the scheme in
// any case) work wherever a path or CID does, as in Kubo 0.43.
func TestURI_AcceptedWherePathsAre(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root := addTree(t, n, nil, map[string]files.Node{"d": files.NewMapDirectory(map[string]files.Node{
		"a.txt": files.NewBytesFile([]byte("hello")),
	})})
	post := func(cmd string, q url.Values) (int, string) {
		t.Helper()
		resp := rpcPost(t, srv, cmd, q, nil, "")
		return resp.StatusCode, string(readAll(t, resp.Body))
	}
	arg := func(a ...string) url.Values { return url.Values{"arg": a} }
	for _, u := range []string{"ipfs://" + root + "/a.txt", "IPFS://" + root + "/a.txt", "ipfs:" + root + "/a.txt"} {
		if code, body := post("cat", arg(u)); code != 200 || body != "hello" {
			t.Errorf("cat %s: %d %q", u, code, body)
		}
	}
	code, body := post("resolve", arg("ipfs://"+root+"/a.txt"))
	var res struct{ Path string }
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil || !strings.HasPrefix(res.Path, "/ipfs/") {
		t.Fatalf("resolve: %d %s", code, body)
	}
	leaf := strings.TrimPrefix(res.Path, "/ipfs/")
	for _, tc := range []struct {
		cmd  string
		q    url.Values
		want string
	}{
		{"ls", arg("ipfs://" + root), `"Name":"a.txt"`},
		{"block/stat", arg("ipfs://" + leaf), `"Key":"` + leaf + `"`},
		{"dag/get", arg("ipfs:" + root), `"a.txt"`},
		{"refs", arg("ipfs://" + root), leaf},
		{"pin/add", arg("ipfs://" + root), root},
		{"pin/ls", arg("ipfs://" + root), root},
		{"files/cp", arg("ipfs://"+root+"/a.txt", "/copied"), ""},
		{"files/read", arg("/copied"), "hello"},
		{"get", arg("ipfs://" + root), root + "/a.txt"},
	} {
		code, body := post(tc.cmd, tc.q)
		if code != 200 || !strings.Contains(body, tc.want) {
			t.Errorf("%s %v: %d %.300q; want 200 with %q", tc.cmd, tc.q["arg"], code, body, tc.want)
		}
	}
	code, body = post("name/publish", url.Values{"arg": {"ipfs://" + root}, "allow-offline": {"true"}})
	var pub struct{ Name, Value string }
	if code != 200 || json.Unmarshal([]byte(body), &pub) != nil || pub.Value != "/ipfs/"+root {
		t.Fatalf("name/publish of a URI: %d %s", code, body)
	}
	for _, u := range []string{"ipns://" + pub.Name, "IPNS:" + pub.Name} {
		if code, body := post("name/resolve", arg(u)); code != 200 || !strings.Contains(body, `"/ipfs/`+root+`"`) {
			t.Errorf("name/resolve %s: %d %s", u, code, body)
		}
	}
	// Not a URI of IPFS: the same error as before.
	if code, body := post("cat", arg("ipfsx://"+root)); code != 500 || !strings.Contains(body, "invalid path") {
		t.Errorf("cat ipfsx://: %d %s", code, body)
	}
}
