package commands_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

// objText renders values of path as the CLI does (text encoding).
func objText(t *testing.T, path string, args []string, opts map[string]string, vals []any) (string, error) {
	t.Helper()
	cmd := commands.DefaultTable.Find(path)
	var pairs []rpc.KV
	for k, v := range opts {
		pairs = append(pairs, rpc.KV{Key: k, Value: v})
	}
	typed, err := rpc.DecodeOptions(commands.DefaultTable.OptionsFor(path), pairs)
	if err != nil {
		t.Fatalf("decode options: %v", err)
	}
	var out, errOut bytes.Buffer
	env := &rpc.TextEnv{Out: &out, Err: &errOut, Req: &rpc.Request{Command: cmd, Opts: typed, Args: args}}
	for _, v := range vals {
		if err := cmd.Text(env, v); err != nil {
			return out.String(), err
		}
	}
	if cmd.TextDone != nil {
		err = cmd.TextDone(env)
	}
	return out.String(), err
}

// objHash runs an object command that answers {"Hash"} and returns it.
func objHash(t *testing.T, n *node.Node, path string, args []string, opts map[string]string, dir files.Directory) string {
	t.Helper()
	res := mustCall(t, n, path, args, opts, dir)
	if len(res.Values) != 1 {
		t.Fatalf("%s: %d values", path, len(res.Values))
	}
	return res.Values[0].(*commands.ObjectResult).Hash
}

// objData is a one-part body.
func objData(s string) files.Directory {
	return files.NewSliceDirectory([]files.DirEntry{files.FileEntry("", files.NewBytesFile([]byte(s)))})
}

func wantEq(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func TestObjectNew_Templates_KuboCIDs(t *testing.T) {
	n := testutil.MustOpenNode(t)
	wantEq(t, "object new", objHash(t, n, "object/new", nil, nil, nil), "QmdfTbBqBPQ7VNxZEYEj14VmRuZBkqFbiwReogJgS1zR1n")
	wantEq(t, "object new unixfs-dir", objHash(t, n, "object/new", []string{"unixfs-dir"}, nil, nil), "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn")
	wantErr(t, callErr(t, n, "object/new", []string{"foo"}, nil, nil), "unknown node type: foo")
	// The new node is stored.
	res := mustCall(t, n, "object/stat", []string{"QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn"}, nil, nil)
	if st := res.Values[0].(*commands.ObjectStat); st.BlockSize != 4 || st.DataSize != 2 || st.NumLinks != 0 {
		t.Fatalf("stat %+v", st)
	}
}

// Values from Kubo's sharness t0051-object.sh (v0.27, the last release
// with every object command).
func TestObjectGetPutStat_Sharness(t *testing.T) {
	n := testutil.MustOpenNode(t)
	hash := addTree(t, n, nil, map[string]files.Node{"expected_in": files.NewBytesFile([]byte("Hello Mars"))})
	wantEq(t, "add", hash, "QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb")

	// object get: exact JSON body on the wire (Go 1.22+, which Kubo 0.42
	// is built with, writes \b where older releases wrote \u0008).
	srv := testutil.StartServer(t, n)
	resp := rpcPost(t, srv, "object/get", url.Values{"arg": {hash}}, nil, "")
	wantEq(t, "object get body", string(readAll(t, resp.Body)), `{"Links":[],"Data":"\b\u0002\u0012\nHello Mars\u0018\n"}`+"\n")

	res := mustCall(t, n, "object/get", []string{hash}, map[string]string{"data-encoding": "base64"}, nil)
	b, _ := json.Marshal(res.Values[0])
	wantEq(t, "object get base64", string(b), `{"Links":[],"Data":"CAISCkhlbGxvIE1hcnMYCg=="}`)
	wantErr(t, callErr(t, n, "object/get", []string{hash}, map[string]string{"data-encoding": "nonsensical-encoding"}, nil), "unknown data field encoding")

	put := objHash(t, n, "object/put", nil, nil, objData(`{"Links":[],"Data":"Hello Mars"}`))
	wantEq(t, "object put", put, "QmS3hVY6eYrMQ6L22agwrx3YHBEsc3LJxVXCtyQHqRBukH")
	res = mustCall(t, n, "object/get", []string{put}, map[string]string{"data-encoding": "text"}, nil)
	b, _ = json.Marshal(res.Values[0])
	wantEq(t, "object get text", string(b), `{"Links":[],"Data":"Hello Mars"}`)

	// object stat, JSON and text.
	res = mustCall(t, n, "object/stat", []string{hash}, nil, nil)
	st := res.Values[0].(*commands.ObjectStat)
	if *st != (commands.ObjectStat{Hash: hash, NumLinks: 0, BlockSize: 18, LinksSize: 2, DataSize: 16, CumulativeSize: 18}) {
		t.Fatalf("stat %+v", st)
	}
	txt, err := objText(t, "object/stat", []string{hash}, nil, res.Values)
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "stat text", txt, "NumLinks:       0\nBlockSize:      18\nLinksSize:      2\nDataSize:       16\nCumulativeSize: 18\n")

	// object put in every input encoding.
	wantEq(t, "put json", objHash(t, n, "object/put", nil, nil, objData("{\n\t\"Data\": \"test json for sharness test\"\n}\n")), "QmUTSAdDi2xsNkDtLqjFgQDMEn5di3Ab9eqbrt4gaiNbUD")
	wantEq(t, "put xml", objHash(t, n, "object/put", nil, map[string]string{"inputenc": "xml"}, objData("<Node><Data>Test xml for sharness test</Data></Node>\n")), "QmQzNKUHy4HyEUGkqKe3q3t796ffPLQXYCkHCcXUNT5JNK")
	wantEq(t, "put protobuf", objHash(t, n, "object/put", nil, map[string]string{"inputenc": "protobuf"}, objData("\x0a\x1btest json for sharness test")), "QmUTSAdDi2xsNkDtLqjFgQDMEn5di3Ab9eqbrt4gaiNbUD")
	wantErr(t, callErr(t, n, "object/put", nil, nil, objData(`{"this": "should", "return": "an", "error":"not valid dag object"}`)), `json: unknown field "this"`)
	wantErr(t, callErr(t, n, "object/put", nil, map[string]string{"inputenc": "yaml"}, objData(`{}`)), "unknown object encoding")
	wantErr(t, callErr(t, n, "object/put", nil, map[string]string{"datafieldenc": "hex"}, objData(`{}`)), "unknown data field encoding")

	// put --pin, text with and without --quiet.
	pinned := objHash(t, n, "object/put", nil, map[string]string{"pin": "true"}, objData(`{ "Data": "abc" }`))
	wantEq(t, "put --pin", pinned, "QmXg9Pp2ytZ14xgmQjYEiHjVjMFXzCVVEcRTWJBmLgR39V")
	if ok, err := n.Pins().IsRecursive(context.Background(), cid.MustParse(pinned)); err != nil || !ok {
		t.Fatalf("put --pin: not pinned (%v)", err)
	}
	txt, _ = objText(t, "object/put", nil, nil, []any{&commands.ObjectResult{Hash: pinned}})
	wantEq(t, "put text", txt, "added "+pinned+"\n")
	txt, _ = objText(t, "object/put", nil, map[string]string{"quiet": "true"}, []any{&commands.ObjectResult{Hash: pinned}})
	wantEq(t, "put -q text", txt, pinned+"\n")

	// --cid-base does not upgrade CIDv0 in object commands unless asked.
	wantEq(t, "put base32", objHash(t, n, "object/put", nil, map[string]string{"cid-base": "base32"}, objData(`{"Data": "test json for sharness test"}`)), "QmUTSAdDi2xsNkDtLqjFgQDMEn5di3Ab9eqbrt4gaiNbUD")
	v1 := objHash(t, n, "object/put", nil, map[string]string{"cid-base": "base32", "upgrade-cidv0-in-output": "true"}, objData(`{"Data": "test json for sharness test"}`))
	wantEq(t, "put base32 upgraded", v1, cid.NewCidV1(cid.DagProtobuf, cid.MustParse("QmUTSAdDi2xsNkDtLqjFgQDMEn5di3Ab9eqbrt4gaiNbUD").Hash()).String())

	// Links with CIDv0 and CIDv1: get then put gives the same node.
	mixed := objHash(t, n, "object/put", nil, map[string]string{"quiet": "true"}, objData(`{"Data": "another",
 "Links": [
   {"Name": "some link", "Hash": "QmXg9Pp2ytZ14xgmQjYEiHjVjMFXzCVVEcRTWJBmLgR39V", "Size": 8},
   {"Name": "inlined", "Hash": "z4CrgyEyhm4tAw1pgzQtNNuP7", "Size": 14}
]}`))
	res = mustCall(t, n, "object/get", []string{mixed}, map[string]string{"cid-base": "base32"}, nil)
	b, _ = json.Marshal(res.Values[0])
	if !strings.Contains(string(b), "QmXg9Pp2ytZ14xgmQjYEiHjVjMFXzCVVEcRTWJBmLgR39V") || !strings.Contains(string(b), "bafkqadsimvwgy3zajb2w2yloeefau") {
		t.Fatalf("object get --cid-base=base32: %s", b)
	}
	wantEq(t, "get then put", objHash(t, n, "object/put", nil, nil, objData(string(b))), mixed)
	res = mustCall(t, n, "object/links", []string{mixed}, map[string]string{"cid-base": "base32", "upgrade-cidv0-in-output": "true"}, nil)
	links := res.Values[0].(*commands.ObjectResult).Links
	if len(links) != 2 || links[0].Hash != "bafkqadsimvwgy3zajb2w2yloeefau" || !strings.HasPrefix(links[1].Hash, "bafy") {
		t.Fatalf("links %+v", links)
	}

	// object data is the raw Data field.
	res = mustCall(t, n, "object/data", []string{hash}, nil, nil)
	wantEq(t, "object data", string(res.Bytes), "\x08\x02\x12\nHello Mars\x18\n")
}

func TestObjectPatch_Sharness_CIDv0(t *testing.T) {
	n := testutil.MustOpenNode(t)
	empty := objHash(t, n, "object/new", []string{"unixfs-dir"}, nil, nil)
	patch := func(args ...string) string { return objHash(t, n, "object/patch/add-link", args, nil, nil) }

	n1 := patch(empty, "baz", empty)
	n2 := patch(empty, "bar", n1)
	n3 := patch(empty, "foo", "/ipfs/"+n2+"/bar")
	wantEq(t, "N3", n3, "QmPc73aWK9dgFBXe86P4PvQizHo9e5Qt7n7DAMXWuigFuG")

	output := patch(empty, "foo", empty)
	res := mustCall(t, n, "object/links", []string{output}, nil, nil)
	txt, _ := objText(t, "object/links", []string{output}, nil, res.Values)
	wantEq(t, "links text", txt, "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn 4 foo\n")
	txt, _ = objText(t, "object/links", []string{output}, map[string]string{"headers": "true"}, res.Values)
	wantEq(t, "links -v text", txt, "Hash                                           Size Name\nQmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn 4    foo\n")
	wantEq(t, "rm-link", objHash(t, n, "object/patch/rm-link", []string{output, "foo"}, nil, nil), empty)

	file := addTree(t, n, nil, map[string]files.Node{"hwfile": files.NewBytesFile([]byte("hello world\n"))})
	one := patch(empty, "b", empty)
	two := patch(empty, "a", one)
	multi := patch(two, "a/b/c", file)
	res = mustCall(t, n, "cat", []string{multi + "/a/b/c"}, nil, nil)
	wantEq(t, "cat multi", string(res.Bytes), "hello world\n")
	res = mustCall(t, n, "object/stat", []string{multi + "/a"}, nil, nil)
	st := res.Values[0].(*commands.ObjectStat)
	if st.NumLinks != 1 || st.BlockSize != 47 || st.LinksSize != 45 || st.DataSize != 2 || st.CumulativeSize != 114 {
		t.Fatalf("stat %+v", st)
	}
	txt, _ = objText(t, "object/stat", nil, map[string]string{"human": "true"}, res.Values)
	wantEq(t, "stat --human", txt, "NumLinks:       1\nBlockSize:      47\nLinksSize:      45\nDataSize:       2\nCumulativeSize: 114 B\n")
	wantEq(t, "multi rm-link", objHash(t, n, "object/patch/rm-link", []string{multi, "a/b/c"}, nil, nil), "QmZD3r9cZjzU8huNY2JS9TC6n8daDfT8TmE8zBSqG31Wvq")

	for _, p := range []string{"a/b/c", "a", "a/b/b/b/b"} {
		out := objHash(t, n, "object/patch/add-link", []string{empty, p, file}, map[string]string{"create": "true"}, nil)
		res = mustCall(t, n, "cat", []string{out + "/" + p}, nil, nil)
		wantEq(t, "create "+p, string(res.Bytes), "hello world\n")
	}
	callErr(t, n, "object/patch/add-link", []string{empty, "/", file}, map[string]string{"create": "true"}, nil)
	wantErr(t, callErr(t, n, "object/patch/add-link", []string{empty, "x/y", file}, nil, nil), "no link by that name")

	// set-data and append-data.
	blank := objHash(t, n, "object/new", nil, nil, nil)
	h := objHash(t, n, "object/patch/set-data", []string{blank}, nil, objData("foo"))
	res = mustCall(t, n, "object/get", []string{h}, nil, nil)
	b, _ := json.Marshal(res.Values[0])
	wantEq(t, "set-data", string(b), `{"Links":[],"Data":"foo"}`)
	h = objHash(t, n, "object/patch/append-data", []string{h}, nil, objData("bar"))
	res = mustCall(t, n, "object/get", []string{h}, nil, nil)
	b, _ = json.Marshal(res.Values[0])
	wantEq(t, "append-data", string(b), `{"Links":[],"Data":"foobar"}`)
	big := strings.Repeat("x", 2<<20)
	wantErrPrefix(t, callErr(t, n, "object/patch/set-data", []string{blank}, nil, objData(big+"x")), "produced block is over 2MiB")
	objHash(t, n, "object/patch/set-data", []string{blank}, map[string]string{"allow-big-block": "true"}, objData(big+"x"))
}

// Values from Kubo 0.42's t0051-object.sh: its nodes come from dag put
// (CIDv1), and add-link/rm-link check the UnixFS type of the root.
func TestObjectPatch_Sharness_UnixFSChecks(t *testing.T) {
	n := testutil.MustOpenNode(t)
	dagPut := func(js string) string {
		res := mustCall(t, n, "dag/put", nil, map[string]string{"store-codec": "dag-pb"}, objData(js))
		return res.Values[0].(*commands.DagPutResult).Cid.Cid
	}
	emptyDir := dagPut(`{"Links":[]}`)
	emptyUnixfsDir := dagPut(`{"Data":{"/":{"bytes":"CAE"}},"Links":[]}`)
	emptyFile := addTree(t, n, nil, map[string]files.Node{"e": files.NewBytesFile(nil)})
	emptyHAMT := dagPut(`{"Data":{"/":{"bytes":"CAUoIjCAAg"}},"Links":[]}`)
	addLink := func(opts map[string]string, args ...string) (string, error) {
		res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "object/patch/add-link", args, opts, nil)
		if err != nil {
			return "", err
		}
		return res.Values[0].(*commands.ObjectResult).Hash, nil
	}
	rmLink := func(opts map[string]string, args ...string) (string, error) {
		res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "object/patch/rm-link", args, opts, nil)
		if err != nil {
			return "", err
		}
		return res.Values[0].(*commands.ObjectResult).Hash, nil
	}
	allow := map[string]string{"allow-non-unixfs": "true"}

	_, err := addLink(nil, emptyDir, "foo", emptyUnixfsDir)
	wantErr(t, err, "cannot add named links to a non-UnixFS dag-pb node; pass --allow-non-unixfs to skip validation")
	dagpbWithLink, err := addLink(allow, emptyDir, "foo", emptyUnixfsDir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = addLink(nil, emptyFile, "foo", emptyUnixfsDir)
	wantErr(t, err, "cannot add named links to a UnixFS File node, only Directory nodes support link addition at the dag-pb level (see https://specs.ipfs.tech/unixfs/)")
	fileWithLink, err := addLink(allow, emptyFile, "foo", emptyUnixfsDir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = addLink(nil, emptyHAMT, "foo", emptyUnixfsDir)
	wantErr(t, err, "cannot add links to a HAMTShard at the dag-pb level (would corrupt the HAMT bitfield); use 'ipfs files' commands instead, or pass --allow-non-unixfs to override")
	hamtWithLink, err := addLink(allow, emptyHAMT, "foo", emptyUnixfsDir)
	if err != nil {
		t.Fatal(err)
	}

	_, err = rmLink(nil, dagpbWithLink, "foo")
	wantErr(t, err, "cannot remove links from a non-UnixFS dag-pb node; pass --allow-non-unixfs to skip validation")
	_, err = rmLink(nil, fileWithLink, "foo")
	wantErr(t, err, "cannot remove links from a UnixFS File node, only Directory nodes support link removal at the dag-pb level (see https://specs.ipfs.tech/unixfs/)")
	_, err = rmLink(nil, hamtWithLink, "foo")
	wantErr(t, err, "cannot remove links from a HAMTShard at the dag-pb level (would corrupt the HAMT bitfield); use 'ipfs files rm' instead, or pass --allow-non-unixfs to override")
	for _, c := range []string{dagpbWithLink, fileWithLink, hamtWithLink} {
		if _, err := rmLink(allow, c, "foo"); err != nil {
			t.Fatal(err)
		}
	}

	must := func(h string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	n1 := must(addLink(nil, emptyUnixfsDir, "baz", emptyUnixfsDir))
	n2 := must(addLink(nil, emptyUnixfsDir, "bar", n1))
	n3 := must(addLink(nil, emptyUnixfsDir, "foo", "/ipfs/"+n2+"/bar"))
	wantEq(t, "N3", n3, "bafybeiakusqwohnt7bs75kx6jhmt4oi47l634bmudxfv4qxhpco6xuvgna")
	output := must(addLink(nil, emptyUnixfsDir, "foo", emptyUnixfsDir))
	wantEq(t, "rm-link", must(rmLink(nil, output, "foo")), "bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354")

	file := addTree(t, n, nil, map[string]files.Node{"hwfile": files.NewBytesFile([]byte("hello world\n"))})
	one := must(addLink(nil, emptyUnixfsDir, "b", emptyUnixfsDir))
	two := must(addLink(nil, emptyUnixfsDir, "a", one))
	multi := must(addLink(nil, two, "a/b/c", file))
	wantEq(t, "multi rm-link", must(rmLink(nil, multi, "a/b/c")), "bafybeicourxysmtbe5hacxqico4d5hyvh7gqkrwlmqa4ew7zufn3pj3juu")

	// Linking IPLD objects works; resolve goes through the new link.
	res := mustCall(t, n, "dag/put", nil, nil, objData("123"))
	obj := res.Values[0].(*commands.DagPutResult).Cid.Cid
	withObj := must(addLink(nil, emptyUnixfsDir, "foo", obj))
	res = mustCall(t, n, "dag/resolve", []string{"/ipfs/" + withObj + "/foo"}, nil, nil)
	if r := res.Values[0].(*commands.DagResolveResult); r.Cid.Cid != obj || r.RemPath != "" {
		t.Fatalf("resolve %+v", r)
	}

	// Block size: doubling the directory 14 times passes, the 15th
	// exceeds 2 MiB (cumulative, as Kubo measures) unless allowed.
	dir := emptyUnixfsDir
	for i := 0; i < 14; i++ {
		dir = must(addLink(nil, dir, dir+".jpg", dir))
	}
	_, err = addLink(nil, dir, dir+".jpg", dir)
	wantErrPrefix(t, err, "produced block is over 2MiB")
	must(addLink(map[string]string{"allow-big-block": "true"}, dir, dir+".jpg", dir))

	_, err = addLink(map[string]string{"create": "true"}, emptyDir, "a", file)
	wantErrPrefix(t, err, "cannot add named links to a non-UnixFS dag-pb node")
	pc := must(addLink(map[string]string{"create": "true", "allow-non-unixfs": "true"}, emptyDir, "a", file))
	res = mustCall(t, n, "cat", []string{pc + "/a"}, nil, nil)
	wantEq(t, "create on non-unixfs root", string(res.Bytes), "hello world\n")
}

// Values from Kubo's sharness t0052-object-diff.sh.
func TestObjectDiff_Sharness(t *testing.T) {
	n := testutil.MustOpenNode(t)
	// tree adds foo/{bar,baz/} with foo/cat and foo/baz/dog when asked.
	tree := func(cat, dog bool, bar string, opts map[string]string) string {
		baz := map[string]files.Node{}
		if dog {
			baz["dog"] = files.NewBytesFile([]byte("nested\n"))
		}
		m := map[string]files.Node{"bar": files.NewBytesFile([]byte(bar)), "baz": files.NewMapDirectory(baz)}
		if cat {
			m["cat"] = files.NewBytesFile([]byte("more things\n"))
		}
		return addTree(t, n, opts, map[string]files.Node{"foo": files.NewMapDirectory(m)})
	}
	for _, raw := range []bool{false, true} {
		var opts map[string]string
		if raw {
			opts = map[string]string{"raw-leaves": "true"}
		}
		a := tree(false, false, "stuff\n", opts)
		b := tree(true, false, "stuff\n", opts)
		c := tree(true, true, "stuff\n", opts)
		d := tree(true, true, "changed\n", opts)
		diff := func(x, y string, verbose bool) string {
			o := map[string]string{}
			if verbose {
				o["verbose"] = "true"
			}
			res := mustCall(t, n, "object/diff", []string{x, y}, o, nil)
			txt, err := objText(t, "object/diff", []string{x, y}, o, res.Values)
			if err != nil {
				t.Fatal(err)
			}
			return txt
		}
		wantEq(t, "self", diff(a, a, false), "")
		catCid, dogCid, barFrom, barTo := "QmUSvcqzhdfYM1KLDbM76eLPdS9ANFtkJvFuPYeZt73d7A", "QmdNJQUTZuDpsUcec7YDuCfRfvw1w4J13DCm7YcU4VMZdS", "QmNgd5cz2jNftnAHBhcRUGdtiaMzb5Rhjqd4etondHHST8", "QmRfFVsjSXkhFxrfWnLpMae2M4GBVsry6VAuYYcji5MiZb"
		if raw {
			catCid, dogCid, barFrom, barTo = "bafkreig43bpnc6sjo6izaiqzzq5esapazosa3f3wt6jsflwiu3x7ydhq2u", "bafkreibxbkgajofglo2esqtv53bcp4nwstnqjr3nu2ylrlui5unldf4qum", "bafkreidfn2oemjv5ns2fnc4ukgbjwt6bq5gdd4ciz4mpnehqi2dvwxfbde", "bafkreid7rmo7yrtlmje7a3f6kxerotpsk6hhovg2pe755use55olukry6e"
		}
		wantEq(t, "added", diff(a, b, false), "+ "+catCid+" \"cat\"\n")
		wantEq(t, "added -v", diff(a, b, true), "Added new link \"cat\" pointing to "+catCid+".\n")
		wantEq(t, "removed -v", diff(b, a, true), "Removed link \"cat\" (was "+catCid+").\n")
		wantEq(t, "nested -v", diff(b, c, true), "Added new link \"baz/dog\" pointing to "+dogCid+".\n")
		wantEq(t, "changed -v", diff(c, d, true), "Changed \"bar\" from "+barFrom+" to "+barTo+".\n")
		wantEq(t, "changed", diff(c, d, false), "~ "+barFrom+" "+barTo+" \"bar\"\n")
	}

	// JSON shape: absent sides are null.
	a := tree(false, false, "stuff\n", nil)
	b := tree(true, false, "stuff\n", nil)
	srv := testutil.StartServer(t, n)
	resp := rpcPost(t, srv, "object/diff", url.Values{"arg": {a, b}}, nil, "")
	wantEq(t, "diff JSON", string(readAll(t, resp.Body)), `{"Changes":[{"Type":0,"Path":"cat","Before":null,"After":{"/":"QmUSvcqzhdfYM1KLDbM76eLPdS9ANFtkJvFuPYeZt73d7A"}}]}`+"\n")
}

func TestObjectData_NotProtobuf_Errors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	res := mustCall(t, n, "dag/put", nil, nil, objData(`{"a":1}`))
	c := res.Values[0].(*commands.DagPutResult).Cid.Cid
	for _, p := range []string{"object/data", "object/get"} {
		wantErr(t, callErr(t, n, p, []string{c}, nil, nil), "expected protobuf dag node")
	}
	wantErr(t, callErr(t, n, "object/patch/append-data", []string{c}, nil, objData("x")), "expected protobuf dag node")
	wantErr(t, callErr(t, n, "object/put", nil, nil, nil), "file argument 'data' is required")
}
