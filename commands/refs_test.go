package commands_test

import (
	"bytes"
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

// refsDAG is a directory d with a.txt and b.txt (same content), big.bin
// (two chunks) and sub/c.txt, and the CIDs of its parts.
type refsDAG struct {
	root, a, big, sub, c string
	chunks               []string
}

func refsBuild(t *testing.T, n *node.Node) refsDAG {
	t.Helper()
	root := blkAdd(t, n, "d", files.NewMapDirectory(map[string]files.Node{
		"a.txt":   files.NewBytesFile([]byte("hello")),
		"b.txt":   files.NewBytesFile([]byte("hello")),
		"big.bin": files.NewBytesFile(blkPattern(300 * 1024)),
		"sub":     files.NewMapDirectory(map[string]files.Node{"c.txt": files.NewBytesFile([]byte("sub file"))}),
	}), nil)
	key := func(p string) string {
		return blkCall(t, n, "block/stat", []string{root + "/" + p}, nil, nil).Values[0].(*commands.BlockStat).Key
	}
	d := refsDAG{root: root, a: key("a.txt"), big: key("big.bin"), sub: key("sub"), c: key("sub/c.txt")}
	bc, _ := cid.Decode(d.big)
	nd, err := n.DAG.Get(context.Background(), bc)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range nd.Links() {
		d.chunks = append(d.chunks, l.Cid.String())
	}
	if len(d.chunks) != 2 {
		t.Fatalf("big.bin has %d chunks, want 2", len(d.chunks))
	}
	return d
}

// refsOf runs refs and returns the Ref values (failing on in-band errors).
func refsOf(t *testing.T, n *node.Node, args []string, opts map[string]string) []string {
	t.Helper()
	var out []string
	for _, v := range blkCall(t, n, "refs", args, opts, nil).Values {
		rw := v.(*commands.RefWrapper)
		if rw.Err != "" {
			t.Fatalf("refs %v: in-band error %q", args, rw.Err)
		}
		out = append(out, rw.Ref)
	}
	return out
}

func TestRefs_Traversal_Options(t *testing.T) {
	n := testutil.MustOpenNode(t)
	d := refsBuild(t, n)
	all := []string{d.a, d.a, d.big, d.chunks[0], d.chunks[1], d.sub, d.c}
	for _, tc := range []struct {
		name string
		opts map[string]string
		want []string
	}{
		{"direct", nil, []string{d.a, d.a, d.big, d.sub}},
		{"recursive", map[string]string{"recursive": "true"}, all},
		{"unique", map[string]string{"r": "true", "u": "true"}, []string{d.a, d.big, d.chunks[0], d.chunks[1], d.sub, d.c}},
		{"depth1", map[string]string{"r": "true", "max-depth": "1"}, []string{d.a, d.a, d.big, d.sub}},
		{"depth2", map[string]string{"r": "true", "max-depth": "2"}, all},
		{"depth0", map[string]string{"r": "true", "max-depth": "0"}, nil},
		{"depth ignored without -r", map[string]string{"max-depth": "0"}, []string{d.a, d.a, d.big, d.sub}},
		{"linkname", map[string]string{"r": "true", "format": "<linkname>"}, []string{"a.txt", "b.txt", "big.bin", "", "", "sub", "c.txt"}},
		{"empty format", map[string]string{"format": ""}, []string{d.a, d.a, d.big, d.sub}},
		{"edges", map[string]string{"e": "true"}, []string{
			d.root + " -> " + d.a, d.root + " -> " + d.a, d.root + " -> " + d.big, d.root + " -> " + d.sub}},
		{"src dst", map[string]string{"r": "true", "u": "true", "format": "<src>/<dst>"}, []string{
			d.root + "/" + d.a, d.root + "/" + d.big, d.big + "/" + d.chunks[0], d.big + "/" + d.chunks[1],
			d.root + "/" + d.sub, d.sub + "/" + d.c}},
	} {
		if got := refsOf(t, n, []string{d.root}, tc.opts); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// Paths work as roots; --unique applies across all roots.
	got := refsOf(t, n, []string{"/ipfs/" + d.root + "/sub", d.sub}, map[string]string{"u": "true"})
	if !slices.Equal(got, []string{d.c}) {
		t.Errorf("two roots unique: %q", got)
	}
	// --cid-base applies to every CID written.
	got = refsOf(t, n, []string{d.root + "/sub"}, map[string]string{"e": "true", "cid-base": "base32"})
	sc, _ := cid.Decode(d.sub)
	cc, _ := cid.Decode(d.c)
	if want := cid.NewCidV1(sc.Type(), sc.Hash()).String() + " -> " + cid.NewCidV1(cc.Type(), cc.Hash()).String(); len(got) != 1 || got[0] != want {
		t.Errorf("base32 edges: %q, want %q", got, want)
	}
}

// A CID first met at the depth limit is explored again when met higher up.
func TestRefs_UniqueMaxDepth_Reexplores(t *testing.T) {
	n := testutil.MustOpenNode(t)
	y := func() files.Node {
		return files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile([]byte("leaf"))})
	}
	root := blkAdd(t, n, "r", files.NewMapDirectory(map[string]files.Node{
		"a": files.NewMapDirectory(map[string]files.Node{"y": y()}),
		"y": y(),
	}), nil)
	key := func(p string) string {
		return blkCall(t, n, "block/stat", []string{root + "/" + p}, nil, nil).Values[0].(*commands.BlockStat).Key
	}
	a, yc, f := key("a"), key("y"), key("y/f")
	if key("a/y") != yc {
		t.Fatal("a/y and y differ")
	}
	got := refsOf(t, n, []string{root}, map[string]string{"r": "true", "u": "true", "max-depth": "2"})
	if want := []string{a, yc, f}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Unlimited depth: y is explored once, under a.
	got = refsOf(t, n, []string{root}, map[string]string{"r": "true", "u": "true"})
	if want := []string{a, yc, f}; !slices.Equal(got, want) {
		t.Errorf("unlimited: %q, want %q", got, want)
	}
}

func TestRefs_Errors_InBand_And_Before(t *testing.T) {
	n := testutil.MustOpenNode(t)
	d := refsBuild(t, n)
	// A missing block ends that root's traversal with an in-band error;
	// the next root still runs.
	c2, _ := cid.Decode(d.chunks[1])
	if err := n.Blocks.DeleteBlock(context.Background(), c2); err != nil {
		t.Fatal(err)
	}
	missing := "bafkreie7ohywtosou76tasm7j63yigtzxe7d5zqus4zu3j6oltvgtibeom"
	res := blkCall(t, n, "refs", []string{d.root, missing, d.root + "/sub"}, map[string]string{"r": "true"}, nil)
	var got []commands.RefWrapper
	for _, v := range res.Values {
		got = append(got, *v.(*commands.RefWrapper))
	}
	want := []commands.RefWrapper{
		{Ref: d.a}, {Ref: d.a}, {Ref: d.big}, {Ref: d.chunks[0]},
		{Err: notFound + d.chunks[1]},
		{Err: notFound + missing},
		{Ref: d.c},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// Path errors come before any output.
	for _, tc := range []struct {
		args []string
		opts map[string]string
		want string
	}{
		{[]string{d.root, "notacid"}, nil, `invalid path "notacid": path does not have enough components`},
		{[]string{d.root + "/nope"}, nil, "no link named"},
		{[]string{d.root}, map[string]string{"edges": "true", "format": "<src>"}, "using format argument with edges is not allowed"},
	} {
		if msg := blkCallErr(t, n, "refs", tc.args, tc.opts, nil); !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, msg, tc.want)
		}
	}
	if msg := blkCallErr(t, n, "refs", nil, nil, nil); msg != `argument "ipfs-path" is required` {
		t.Errorf("no args: %q", msg)
	}
}

func TestRefs_Text_Renderer(t *testing.T) {
	cmd := commands.DefaultTable.Find("refs")
	var out bytes.Buffer
	env := &rpc.TextEnv{Out: &out}
	if err := cmd.Text(env, &commands.RefWrapper{Ref: "Qm1"}); err != nil || out.String() != "Qm1\n" {
		t.Errorf("text %q %v", out.String(), err)
	}
	if err := cmd.Text(env, &commands.RefWrapper{Err: "ipld: could not find X"}); err == nil || err.Error() != "ipld: could not find X" {
		t.Errorf("err value: %v", err)
	}
}

func TestRefs_HTTP_Shapes(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	d := refsBuild(t, n)

	resp := blkPost(t, srv, "refs", url.Values{"arg": {d.root + "/sub"}}, nil)
	blkWantHeaders(t, resp, 200, "application/json", "1", "")
	if body := blkReadAll(t, resp.Body); body != `{"Ref":"`+d.c+`","Err":""}`+"\n" {
		t.Errorf("body %q", body)
	}
	resp = blkPost(t, srv, "refs", url.Values{"arg": {d.root + "/sub"}, "edges": {"true"}}, nil)
	if body := blkReadAll(t, resp.Body); body != `{"Ref":"`+d.sub+` -\u003e `+d.c+`","Err":""}`+"\n" {
		t.Errorf("edges body %q", body)
	}
	resp = blkPost(t, srv, "refs", url.Values{"arg": {d.root}, "encoding": {"text"}}, nil)
	blkWantHeaders(t, resp, 200, "text/plain", "1", "")
	if body := blkReadAll(t, resp.Body); body != strings.Join([]string{d.a, d.a, d.big, d.sub}, "\n")+"\n" {
		t.Errorf("text body %q", body)
	}
	// Arguments in the body, one per line.
	body := files.NewMapDirectory(map[string]files.Node{"": files.NewBytesFile([]byte(d.root + "/sub\n" + d.big + "\n"))})
	resp = blkPost(t, srv, "refs", url.Values{"encoding": {"text"}}, body)
	if got := blkReadAll(t, resp.Body); got != d.c+"\n"+d.chunks[0]+"\n"+d.chunks[1]+"\n" {
		t.Errorf("body args: %q", got)
	}
	resp = blkPost(t, srv, "refs", url.Values{"arg": {"notacid"}}, nil)
	blkWantHeaders(t, resp, 500, "application/json", "", "")
}

func TestRefsLocal_AllBlocksAsRaw(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	if vals := blkCall(t, n, "refs/local", nil, nil, nil).Values; len(vals) != 0 {
		t.Fatalf("empty repo lists %d refs", len(vals))
	}
	blkPut(t, n, []byte("hello world\n"), map[string]string{"cid-codec": "dag-pb"})
	blkPut(t, n, []byte("hello world\n"), map[string]string{"format": "v0"}) // same multihash
	blkPut(t, n, []byte("x"), map[string]string{"mhtype": "identity"})       // not stored
	blkPut(t, n, []byte("other"), map[string]string{"mhtype": "sha3-256"})
	var got []string
	for _, v := range blkCall(t, n, "refs/local", nil, nil, nil).Values {
		got = append(got, v.(*commands.RefWrapper).Ref)
	}
	slices.Sort(got)
	sha3 := blkPut(t, n, []byte("other"), map[string]string{"mhtype": "sha3-256"})
	want := []string{"bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4", sha3}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("refs local %q, want %q", got, want)
	}
	resp := blkPost(t, srv, "refs/local", url.Values{"cid-base": {"base36"}}, nil)
	blkWantHeaders(t, resp, 200, "application/json", "1", "")
	if body := blkReadAll(t, resp.Body); strings.Count(body, `"Ref":"k`) != 2 || strings.Count(body, `"Err":""`) != 2 {
		t.Errorf("body %q", body)
	}
}

// dag-cbor links are followed by refs and by the pin check of block rm.
func TestRefs_DagCbor_Links(t *testing.T) {
	n := testutil.MustOpenNode(t)
	leaf := blkPut(t, n, []byte("leaf"), nil)
	lc, _ := cid.Decode(leaf)
	// {"l": <leaf>} in dag-cbor: a map of one entry whose value is tag 42
	// over the CID bytes behind a zero byte.
	cbor := append([]byte{0xa1, 0x61, 'l', 0xd8, 0x2a, 0x58, byte(len(lc.Bytes()) + 1), 0x00}, lc.Bytes()...)
	root := blkPut(t, n, cbor, map[string]string{"cid-codec": "dag-cbor", "pin": "true"})
	if got := refsOf(t, n, []string{root}, map[string]string{"r": "true"}); !slices.Equal(got, []string{leaf}) {
		t.Errorf("refs %q, want [%s]", got, leaf)
	}
	rm := blkCall(t, n, "block/rm", []string{leaf}, nil, nil).Values[0].(*commands.RemovedBlock)
	if rm.Error != "pinned via "+root {
		t.Errorf("rm leaf: %+v", rm)
	}
}

// Ensure refs -r stops when its client hangs up, on a DAG of 2^60 paths.
func TestHangup_StopsRefs(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root := deepDAG(t, n, 60)
	hangupMidway(t, srv, httpPost("refs?recursive=true&arg="+root.String(), nil, ""), "refWriter", nil)
}
