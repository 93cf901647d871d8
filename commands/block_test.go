package commands_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

// --- helpers shared by the block, refs and ls tests ---

// blkCall runs a command in-process and fails the test on error.
func blkCall(t *testing.T, n *node.Node, path string, args []string, opts map[string]string, dir files.Directory) *rpc.Result {
	t.Helper()
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, path, args, opts, dir)
	if err != nil {
		t.Fatalf("%s %v: %v", path, args, err)
	}
	return res
}

// blkCallErr runs a command that must fail and returns its error text.
func blkCallErr(t *testing.T, n *node.Node, path string, args []string, opts map[string]string, dir files.Directory) string {
	t.Helper()
	_, err := rpc.Call(context.Background(), n, commands.DefaultTable, path, args, opts, dir)
	if err == nil {
		t.Fatalf("%s %v: no error", path, args)
	}
	return err.Error()
}

// blkParts is a multipart-like directory of unnamed data parts.
func blkParts(parts ...[]byte) files.Directory {
	var ents []files.DirEntry
	for i, p := range parts {
		ents = append(ents, files.FileEntry(string(rune('a'+i)), files.NewBytesFile(p)))
	}
	return files.NewSliceDirectory(ents)
}

// blkPut stores data with block put and returns its key.
func blkPut(t *testing.T, n *node.Node, data []byte, opts map[string]string) string {
	t.Helper()
	res := blkCall(t, n, "block/put", nil, opts, blkParts(data))
	if len(res.Values) != 1 {
		t.Fatalf("block put: %d values", len(res.Values))
	}
	return res.Values[0].(*commands.BlockStat).Key
}

// blkAdd adds one top-level entry with add and returns its root CID.
func blkAdd(t *testing.T, n *node.Node, name string, nd files.Node, opts map[string]string) string {
	t.Helper()
	res := blkCall(t, n, "add", nil, opts, files.NewMapDirectory(map[string]files.Node{name: nd}))
	for _, v := range res.Values {
		if ev := v.(*node.AddEvent); ev.Name == name && ev.Hash != "" {
			return ev.Hash
		}
	}
	t.Fatalf("add %s: no root event", name)
	return ""
}

// blkPattern is the vectors' pattern-N input: byte i = (i*31+7) % 251.
func blkPattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((i*31 + 7) % 251)
	}
	return b
}

// blkPost sends an RPC request to srv and returns the response.
func blkPost(t *testing.T, srv *testutil.Server, path string, q url.Values, dir files.Directory) *http.Response {
	t.Helper()
	var body io.Reader
	ct := ""
	if dir != nil {
		mfr := files.NewMultiFileReader(dir, true, false)
		body, ct = mfr, "multipart/form-data; boundary="+mfr.Boundary()
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v0/"+path+"?"+q.Encode(), body)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func blkReadAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// blkWantHeaders checks status and the output-shape headers.
func blkWantHeaders(t *testing.T, resp *http.Response, status int, ctype, chunked, stream string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d", resp.StatusCode, status)
	}
	if got := resp.Header.Get("Content-Type"); got != ctype {
		t.Errorf("Content-Type %q, want %q", got, ctype)
	}
	if got := resp.Header.Get("X-Chunked-Output"); got != chunked {
		t.Errorf("X-Chunked-Output %q, want %q", got, chunked)
	}
	if got := resp.Header.Get("X-Stream-Output"); got != stream {
		t.Errorf("X-Stream-Output %q, want %q", got, stream)
	}
}

// --- block put ---

type blkVector struct {
	Kind     string   `json:"kind"`
	Input    string   `json:"input"`
	InputHex *string  `json:"input_hex"`
	Options  []string `json:"options"`
	Cid      string   `json:"cid"`
	Error    string   `json:"error"`
}

func blkVectorInput(t *testing.T, v blkVector) []byte {
	t.Helper()
	if v.InputHex != nil {
		b, err := hex.DecodeString(*v.InputHex)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	switch v.Input {
	case "hello":
		return []byte("hello world\n")
	case "empty":
		return nil
	case "pattern-1000":
		return blkPattern(1000)
	}
	t.Fatalf("unknown vector input %q", v.Input)
	return nil
}

func TestBlockPut_Vectors(t *testing.T) {
	raw, err := os.ReadFile(testutil.KuboVectors(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Vectors []blkVector }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	n := testutil.MustOpenNode(t)
	count := 0
	for _, v := range doc.Vectors {
		if v.Kind != "block/put" {
			continue
		}
		count++
		data := blkVectorInput(t, v)
		opts := map[string]string{}
		for _, tok := range v.Options {
			k, val, ok := strings.Cut(strings.TrimPrefix(tok, "--"), "=")
			if !ok {
				val = "true"
			}
			opts[k] = val
		}
		name := v.Input + " " + strings.Join(v.Options, " ")
		res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "block/put", nil, opts, blkParts(data))
		if v.Error != "" {
			want := strings.TrimPrefix(v.Error, "Error: ")
			if err == nil || err.Error() != want {
				t.Errorf("%s: error %v, want %q", name, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := res.Values[0].(*commands.BlockStat)
		if got.Key != v.Cid || got.Size != len(data) {
			t.Errorf("%s: got %s/%d, want %s/%d", name, got.Key, got.Size, v.Cid, len(data))
			continue
		}
		// What was stored reads back byte for byte (identity CIDs too).
		back := blkCall(t, n, "block/get", []string{v.Cid}, nil, nil)
		if !bytes.Equal(back.Bytes, data) {
			t.Errorf("%s: block get returned %d bytes, want %d", name, len(back.Bytes), len(data))
		}
	}
	if count != 40 {
		t.Errorf("checked %d block/put vectors, want 40", count)
	}
}

func TestBlockPut_MultipleParts_OneBlockEach(t *testing.T) {
	n := testutil.MustOpenNode(t)
	res := blkCall(t, n, "block/put", nil, nil, blkParts([]byte("hello world\n"), nil))
	if len(res.Values) != 2 {
		t.Fatalf("got %d values, want 2", len(res.Values))
	}
	want := []commands.BlockStat{
		{Key: "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4", Size: 12},
		{Key: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku", Size: 0},
	}
	for i, w := range want {
		if got := *res.Values[i].(*commands.BlockStat); got != w {
			t.Errorf("value %d: %+v, want %+v", i, got, w)
		}
	}
}

func TestBlockPut_Options_Errors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	hello := blkParts([]byte("hello world\n"))
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"mhtype": "nope"}, "unrecognized multihash function: nope"},
		{map[string]string{"mhtype": "SHA2-256"}, "unrecognized multihash function: SHA2-256"},
		{map[string]string{"format": "v0", "cid-codec": "dag-pb"}, `unable to use "format" (deprecated) and a custom "cid-codec" at the same time`},
		{map[string]string{"cid-codec": "nope"}, `unknown multicodec: "nope"`},
		{map[string]string{"format": "nope"}, `unknown multicodec: "nope"`},
		{map[string]string{"format": "v0", "mhtype": "sha3-256"}, "only sha2-255-32 is allowed with CIDv0"},
		{map[string]string{"format": "v0", "mhlen": "20"}, "only sha2-255-32 is allowed with CIDv0"},
		{map[string]string{"mhtype": "md5"}, "potentially insecure hash functions not allowed"},
		{map[string]string{"mhlen": "10"}, "digest too small: sha2-256 digest got 10 bytes, minimum 20"},
	} {
		if got := blkCallErr(t, n, "block/put", nil, tc.opts, hello); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.opts, got, tc.want)
		}
	}
	// The legacy names still give their codecs; format=raw keeps CIDv1.
	for format, want := range map[string]string{
		"protobuf": "bafybeifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4",
		"cbor":     "bafyreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4",
		"raw":      "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4",
	} {
		if got := blkPut(t, n, []byte("hello world\n"), map[string]string{"format": format, "cid-codec": "raw"}); got != want {
			t.Errorf("format=%s: %s, want %s", format, got, want)
		}
	}
	if got := blkPut(t, n, []byte("hello world\n"), map[string]string{"f": "v0"}); got != "QmZjTnYw2TFhn9Nn7tjmPSoTBoY7YRkwPzwSrSbabY24Kp" {
		t.Errorf("-f v0: %s", got)
	}
}

func TestBlockPut_ConfigHashFunction_Default(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Import.HashFunction": "sha3-256"})
	if got := blkPut(t, n, []byte("hello world\n"), nil); got != "bafkrmifiacnhuuunq53yynlnuosv3fshdhubqztkatspsygj4jbz4nprha" {
		t.Errorf("got %s, want the sha3-256 CID", got)
	}
	// --mhtype wins over the config.
	if got := blkPut(t, n, []byte("hello world\n"), map[string]string{"mhtype": "sha2-256"}); got != "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4" {
		t.Errorf("got %s, want the sha2-256 CID", got)
	}
}

func TestBlockPut_BigBlock_StoredThenRefused(t *testing.T) {
	n := testutil.MustOpenNode(t)
	big := blkPattern(2*1024*1024 + 1)
	msg := blkCallErr(t, n, "block/put", nil, nil, blkParts(big))
	if msg != "produced block is over 2MiB: big blocks can't be exchanged with other peers. consider using UnixFS for automatic chunking of bigger files, or pass --allow-big-block to override" {
		t.Errorf("error %q", msg)
	}
	key := blkPut(t, n, big, map[string]string{"allow-big-block": "true"})
	// Kubo stores the block before the size check; so does cairn.
	st := blkCall(t, n, "block/stat", []string{key}, nil, nil).Values[0].(*commands.BlockStat)
	if st.Size != len(big) {
		t.Errorf("size %d", st.Size)
	}
	// Exactly 2 MiB is fine.
	blkPut(t, n, blkPattern(2*1024*1024), nil)
}

func TestBlockPut_Pin_Recursive(t *testing.T) {
	n := testutil.MustOpenNode(t)
	key := blkPut(t, n, []byte("pin me"), map[string]string{"pin": "true"})
	c, _ := cid.Decode(key)
	ok, err := n.Pins().IsRecursive(context.Background(), c)
	if err != nil || !ok {
		t.Fatalf("not pinned: %v %v", ok, err)
	}
	rm := blkCall(t, n, "block/rm", []string{key}, nil, nil)
	if got := *rm.Values[0].(*commands.RemovedBlock); got.Error != "pinned: recursive" || got.Hash != key {
		t.Errorf("rm: %+v", got)
	}
}

func TestBlockPut_HTTP_Stream(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	resp := blkPost(t, srv, "block/put", url.Values{"mhtype": {"sha3-256"}}, blkParts([]byte("hello world\n"), []byte("x")))
	blkWantHeaders(t, resp, 200, "application/json", "1", "")
	body := blkReadAll(t, resp.Body)
	want := `{"Key":"bafkrmifiacnhuuunq53yynlnuosv3fshdhubqztkatspsygj4jbz4nprha","Size":12}` + "\n"
	if !strings.HasPrefix(body, want) || strings.Count(body, "\n") != 2 {
		t.Errorf("body %q", body)
	}
	// An error before any output is a 500 JSON error.
	resp = blkPost(t, srv, "block/put", url.Values{"mhtype": {"nope"}}, blkParts([]byte("x")))
	blkWantHeaders(t, resp, 500, "application/json", "", "")
	if body := blkReadAll(t, resp.Body); !strings.Contains(body, `"Message":"unrecognized multihash function: nope"`) {
		t.Errorf("error body %q", body)
	}
	// No body at all: the file argument is required.
	resp = blkPost(t, srv, "block/put", nil, nil)
	if resp.StatusCode != 400 || !strings.Contains(blkReadAll(t, resp.Body), "file argument 'data' is required") {
		t.Errorf("no body: status %d", resp.StatusCode)
	}
}

// --- block get / stat ---

func TestBlockGet_Paths_And_Errors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	data := []byte("some bytes")
	key := blkPut(t, n, data, map[string]string{"cid-codec": "git-raw"}) // codec the DAG cannot decode
	for _, arg := range []string{key, "/ipfs/" + key} {
		if got := blkCall(t, n, "block/get", []string{arg}, nil, nil); !bytes.Equal(got.Bytes, data) || got.Length != -1 {
			t.Errorf("%s: %q (length %d)", arg, got.Bytes, got.Length)
		}
	}
	// A path into a directory gets the entry's block.
	dir := blkAdd(t, n, "d", files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile([]byte("hello"))}), nil)
	leaf := blkCall(t, n, "block/get", []string{"/ipfs/" + dir + "/f"}, nil, nil)
	stat := blkCall(t, n, "block/stat", []string{dir + "/f"}, nil, nil).Values[0].(*commands.BlockStat)
	if len(leaf.Bytes) != stat.Size || stat.Key == dir {
		t.Errorf("leaf block %d bytes, stat %+v", len(leaf.Bytes), stat)
	}

	missing := "bafkreie7ohywtosou76tasm7j63yigtzxe7d5zqus4zu3j6oltvgtibeom"
	for _, tc := range []struct{ arg, want string }{
		{missing, notFound + missing},
		{"notacid", `invalid path "notacid": path does not have enough components`},
		{"/ipfs/notacid", `invalid path "/ipfs/notacid": `},
		{"/foo/" + missing, `invalid path "/foo/` + missing + `": unknown namespace: "foo"`},
	} {
		for _, cmd := range []string{"block/get", "block/stat"} {
			if got := blkCallErr(t, n, cmd, []string{tc.arg}, nil, nil); !strings.HasPrefix(got, tc.want) {
				t.Errorf("%s %s: %q, want %q", cmd, tc.arg, got, tc.want)
			}
		}
	}
}

func TestBlockStat_KeyAndSize_CidBase(t *testing.T) {
	n := testutil.MustOpenNode(t)
	key := blkPut(t, n, []byte("hello world\n"), map[string]string{"format": "v0"})
	st := blkCall(t, n, "block/stat", []string{key}, nil, nil).Values[0].(*commands.BlockStat)
	if *st != (commands.BlockStat{Key: key, Size: 12}) {
		t.Errorf("stat %+v", st)
	}
	st = blkCall(t, n, "block/stat", []string{key}, map[string]string{"cid-base": "base32"}, nil).Values[0].(*commands.BlockStat)
	if st.Key != "bafybeifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4" {
		t.Errorf("base32 key %s", st.Key)
	}
	var out bytes.Buffer
	cmd := commands.DefaultTable.Find("block/stat")
	if err := cmd.Text(&rpc.TextEnv{Out: &out}, st); err != nil || out.String() != "Key: "+st.Key+"\nSize: 12\n" {
		t.Errorf("text %q %v", out.String(), err)
	}
}

func TestBlockGetStat_HTTP_Shapes(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	key := blkPut(t, n, []byte("hello world\n"), nil)

	resp := blkPost(t, srv, "block/get", url.Values{"arg": {key}}, nil)
	blkWantHeaders(t, resp, 200, "application/vnd.ipld.raw", "", "1")
	if body := blkReadAll(t, resp.Body); body != "hello world\n" {
		t.Errorf("get body %q", body)
	}

	resp = blkPost(t, srv, "block/stat", url.Values{"arg": {key}}, nil)
	blkWantHeaders(t, resp, 200, "application/json", "", "")
	if body := blkReadAll(t, resp.Body); body != `{"Key":"`+key+`","Size":12}`+"\n" {
		t.Errorf("stat body %q", body)
	}

	resp = blkPost(t, srv, "block/stat", url.Values{"arg": {key}, "encoding": {"text"}}, nil)
	if body := blkReadAll(t, resp.Body); body != "Key: "+key+"\nSize: 12\n" {
		t.Errorf("stat text %q", body)
	}

	missing := "bafkreie7ohywtosou76tasm7j63yigtzxe7d5zqus4zu3j6oltvgtibeom"
	resp = blkPost(t, srv, "block/get", url.Values{"arg": {missing}}, nil)
	blkWantHeaders(t, resp, 500, "application/json", "", "")
	if body := blkReadAll(t, resp.Body); body != `{"Message":"`+notFound+missing+`","Code":0,"Type":"error"}`+"\n" {
		t.Errorf("error body %q", body)
	}

	resp = blkPost(t, srv, "block/get", nil, nil)
	if resp.StatusCode != 400 || blkReadAll(t, resp.Body) != "argument \"cid\" is required\n" {
		t.Errorf("no arg: status %d", resp.StatusCode)
	}
}

// --- block rm ---

func TestBlockRm_Results(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a := blkPut(t, n, []byte("a"), nil)
	b := blkPut(t, n, []byte("b"), nil)
	missing := "bafkreie7ohywtosou76tasm7j63yigtzxe7d5zqus4zu3j6oltvgtibeom"

	res := blkCall(t, n, "block/rm", []string{a, "/ipfs/" + b, missing}, nil, nil)
	want := []commands.RemovedBlock{{Hash: a}, {Hash: b}, {Hash: missing, Error: "ipld: could not find " + missing}}
	if len(res.Values) != len(want) {
		t.Fatalf("got %d values", len(res.Values))
	}
	for i, w := range want {
		if got := *res.Values[i].(*commands.RemovedBlock); got != w {
			t.Errorf("value %d: %+v, want %+v", i, got, w)
		}
	}
	if msg := blkCallErr(t, n, "block/stat", []string{a}, nil, nil); msg != notFound+a {
		t.Errorf("after rm: %q", msg)
	}
	// --force ignores missing blocks; --quiet hides successes only.
	res = blkCall(t, n, "block/rm", []string{a, missing}, map[string]string{"force": "true"}, nil)
	if len(res.Values) != 2 || res.Values[1].(*commands.RemovedBlock).Error != "" {
		t.Errorf("force: %+v", res.Values)
	}
	c := blkPut(t, n, []byte("c"), nil)
	res = blkCall(t, n, "block/rm", []string{c, missing}, map[string]string{"q": "true"}, nil)
	if len(res.Values) != 1 || res.Values[0].(*commands.RemovedBlock).Hash != missing {
		t.Errorf("quiet: %+v", res.Values)
	}
	// A bad path aborts the whole command.
	if msg := blkCallErr(t, n, "block/rm", []string{"notacid"}, nil, nil); !strings.HasPrefix(msg, `invalid path "notacid"`) {
		t.Errorf("bad path: %q", msg)
	}
}

func TestBlockRm_Pinned_Refused(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	// add pins its root recursively; the file below it is pinned indirectly.
	root := blkAdd(t, n, "d", files.NewMapDirectory(map[string]files.Node{
		"f": files.NewBytesFile([]byte("pinned content")),
	}), nil)
	fileCid := blkCall(t, n, "block/stat", []string{root + "/f"}, nil, nil).Values[0].(*commands.BlockStat).Key
	direct := blkPut(t, n, []byte("direct"), nil)
	dc, _ := cid.Decode(direct)
	if err := n.Pins().Add(ctx, dc, false, "", nil); err != nil {
		t.Fatal(err)
	}
	free := blkPut(t, n, []byte("free"), nil)

	res := blkCall(t, n, "block/rm", []string{root, fileCid, direct, free}, nil, nil)
	want := []commands.RemovedBlock{
		{Hash: root, Error: "pinned: recursive"},
		{Hash: fileCid, Error: "pinned via " + root},
		{Hash: direct, Error: "pinned: direct"},
		{Hash: free},
	}
	for i, w := range want {
		if got := *res.Values[i].(*commands.RemovedBlock); got != w {
			t.Errorf("value %d: %+v, want %+v", i, got, w)
		}
	}
	// Nothing pinned was deleted.
	for _, k := range []string{root, fileCid, direct} {
		blkCall(t, n, "block/stat", []string{k}, nil, nil)
	}
	// Pins().Reason says the same.
	fc, _ := cid.Decode(fileCid)
	if reason, ok, err := n.Pins().Reason(ctx, fc); err != nil || !ok || reason != "pinned via "+root {
		t.Errorf("Pins().Reason: %q %v %v", reason, ok, err)
	}
	fr, _ := cid.Decode(free)
	if _, ok, err := n.Pins().Reason(ctx, fr); err != nil || ok {
		t.Errorf("free block pinned: %v %v", ok, err)
	}
}

func TestBlockRm_Text_Renderer(t *testing.T) {
	cmd := commands.DefaultTable.Find("block/rm")
	var out, errOut bytes.Buffer
	env := &rpc.TextEnv{Out: &out, Err: &errOut}
	for _, v := range []*commands.RemovedBlock{{Hash: "A"}, {Hash: "B", Error: "pinned: direct"}} {
		if err := cmd.Text(env, v); err != nil {
			t.Fatal(err)
		}
	}
	if out.String() != "removed A\n" || errOut.String() != "cannot remove B: pinned: direct\n" {
		t.Errorf("out %q err %q", out.String(), errOut.String())
	}
	if err := cmd.TextDone(env); err == nil || err.Error() != "some blocks not removed" {
		t.Errorf("done: %v", err)
	}
	if err := cmd.Text(&rpc.TextEnv{Out: &out, Err: &errOut}, &commands.RemovedBlock{Error: "boom"}); err == nil || err.Error() != "aborted: boom" {
		t.Errorf("abort: %v", err)
	}
	ok := &rpc.TextEnv{Out: &out, Err: &errOut}
	_ = cmd.Text(ok, &commands.RemovedBlock{Hash: "C"})
	if err := cmd.TextDone(ok); err != nil {
		t.Errorf("done without failures: %v", err)
	}
}

func TestBlockRm_HTTP_Stream(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	a := blkPut(t, n, []byte("a"), nil)
	missing := "bafkreie7ohywtosou76tasm7j63yigtzxe7d5zqus4zu3j6oltvgtibeom"
	resp := blkPost(t, srv, "block/rm", url.Values{"arg": {a, missing}}, nil)
	blkWantHeaders(t, resp, 200, "application/json", "1", "")
	want := `{"Hash":"` + a + `"}` + "\n" + `{"Hash":"` + missing + `","Error":"ipld: could not find ` + missing + `"}` + "\n"
	if body := blkReadAll(t, resp.Body); body != want {
		t.Errorf("body %q, want %q", body, want)
	}
	// Quiet with only successes: no output at all.
	b := blkPut(t, n, []byte("b"), nil)
	resp = blkPost(t, srv, "block/rm", url.Values{"arg": {b}, "quiet": {"true"}}, nil)
	blkWantHeaders(t, resp, 200, "application/json", "1", "")
	if body := blkReadAll(t, resp.Body); body != "" {
		t.Errorf("quiet body %q", body)
	}
}

// Ensure block get/stat and dag get/stat/export read through the node's
// one read path: on a node that holds nothing they fetch the block (and
// the DAG below it) from a connected peer, as cat does, and with
// offline=true they answer Kubo's offline error at once.
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

// Ensure a node without network reads as Kubo's offline node: a block it
// lacks is "block was not found locally (offline): ipld: could not find
// <cid>" from every read, with the CID as Kubo prints it (a CIDv1 in
// base58 shows in base32).
func TestOfflineNode_AbsentBlockText_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	v1 := "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	dir := "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"
	for _, tc := range []struct{ cmd, arg, want string }{
		{"block/get", "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB", notFound + "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB"},
		{"block/get", "zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA", notFound + "bafkreidon73zkcrwdb5iafqtijxildoonbwnpv7dyd6ef3qdgads2jc4su"},
		{"block/stat", v1, notFound + v1},
		{"dag/get", v1, notFound + v1},
		{"dag/stat", v1, notFound + v1},
		{"dag/export", v1, notFound + v1},
		{"cat", v1, notFound + v1},
		{"ls", dir, notFound + dir},
		{"files/stat", "/ipfs/" + v1, notFound + v1},
		{"pin/add", v1, "pin: " + notFound + v1},
	} {
		wantErrorJSON(t, rpcPost(t, srv, tc.cmd, url.Values{"arg": {tc.arg}}, nil, ""), 500, tc.want)
	}
	resp := rpcPost(t, srv, "refs", url.Values{"arg": {dir}}, nil, "")
	if b := readAll(t, resp.Body); string(b) != `{"Ref":"","Err":"`+notFound+dir+`"}`+"\n" {
		t.Fatalf("refs: %s", b)
	}
}
