package commands_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
)

// Ensure block get/stat and dag get/stat/export read through the node's
// one read path: on a node that holds nothing they fetch the block (and
// the DAG below it) from a connected peer, as cat does, and with
// offline=true they answer Kubo's offline error at once (issue 12 item 4).
func TestNet_BlockAndDag_FetchFromPeer(t *testing.T) {
	a := testutil.MustOnlineNode(t, "none", nil)
	b := testutil.MustOnlineNode(t, "none", nil)
	mustCall(t, b, "swarm/connect", []string{testutil.P2PAddr(t, a)}, nil, nil)

	// Distinct blocks for each command, so that each one fetches.
	put := func(data string) string { return blkPut(t, a, []byte(data), nil) }
	rawGet, rawStat := put("for block get"), put("for block stat")
	dagDoc := func(label string) (root, leaf string) {
		leaf = put("leaf of " + label)
		return dagPutJSON(t, a, fmt.Sprintf(`{"label":%q,"leaf":{"/":%q}}`, label, leaf), nil), leaf
	}
	dagGet, _ := dagDoc("dag get")
	dagStat, _ := dagDoc("dag stat")
	dagExport, exportLeaf := dagDoc("dag export")

	srv := testutil.StartServer(t, b)
	offline := func(path, arg string) {
		t.Helper()
		start := time.Now()
		q := url.Values{"arg": {arg}, "offline": {"true"}}
		resp, err := http.Post(srv.URL+"/api/v0/"+path+"?"+q.Encode(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		want := "block was not found locally (offline): ipld: could not find "
		if resp.StatusCode != 500 || !strings.Contains(string(body), want) {
			t.Fatalf("%s offline=true: %d %s", path, resp.StatusCode, body)
		}
		if el := time.Since(start); el > 3*time.Second {
			t.Fatalf("%s offline=true took %v", path, el)
		}
	}
	for _, c := range []struct{ path, arg string }{
		{"block/get", rawGet}, {"block/stat", rawStat}, {"dag/get", dagGet}, {"dag/stat", dagStat}, {"dag/export", dagExport},
	} {
		offline(c.path, c.arg)
	}

	const wait = 20 * time.Second
	res, err := callT(t, b, wait, "block/get", []string{rawGet}, nil, nil)
	if err != nil || string(res.Bytes) != "for block get" {
		t.Fatalf("block/get from the peer: %v %q", err, res.Bytes)
	}
	res, err = callT(t, b, wait, "block/stat", []string{rawStat}, nil, nil)
	if err != nil || res.Values[0].(*commands.BlockStat).Size != len("for block stat") {
		t.Fatalf("block/stat from the peer: %v %+v", err, res)
	}
	res, err = callT(t, b, wait, "dag/get", []string{dagGet + "/label"}, nil, nil)
	if err != nil || !bytes.Contains(res.Bytes, []byte(`"dag get"`)) {
		t.Fatalf("dag/get from the peer: %v %q", err, res.Bytes)
	}
	res, err = callT(t, b, wait, "dag/stat", []string{dagStat}, map[string]string{"progress": "false"}, nil)
	if err != nil {
		t.Fatalf("dag/stat from the peer: %v", err)
	}
	if st := res.Values[len(res.Values)-1].(*commands.DagStatResult); st.NumBlocks != 2 {
		t.Fatalf("dag/stat from the peer: %d blocks, want 2", st.NumBlocks)
	}
	res, err = callT(t, b, wait, "dag/export", []string{dagExport}, nil, nil)
	if err != nil || !bytes.Contains(res.Bytes, []byte("leaf of dag export")) {
		t.Fatalf("dag/export from the peer: %v, %d bytes", err, len(res.Bytes))
	}
	// Everything fetched is now stored: offline reads answer.
	for _, c := range []string{rawGet, rawStat, dagGet, dagStat, dagExport, exportLeaf} {
		q := url.Values{"arg": {c}, "offline": {"true"}}
		resp, err := http.Post(srv.URL+"/api/v0/block/stat?"+q.Encode(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("block %s not stored after the fetch: %d %s", c, resp.StatusCode, body)
		}
	}
}
