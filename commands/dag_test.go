package commands_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	dag "github.com/ipfs/boxo/ipld/merkledag"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	gocar "github.com/ipld/go-car/v2"
	"github.com/ipld/go-ipld-prime/codec/dagcbor"
	"github.com/ipld/go-ipld-prime/datamodel"
	"github.com/ipld/go-ipld-prime/fluent/qp"
	"github.com/ipld/go-ipld-prime/linking"
	cidlink "github.com/ipld/go-ipld-prime/linking/cid"
	basicnode "github.com/ipld/go-ipld-prime/node/basicnode"
	selectorparse "github.com/ipld/go-ipld-prime/traversal/selector/parse"
	mbase "github.com/multiformats/go-multibase"
	mh "github.com/multiformats/go-multihash"
	"github.com/multiformats/go-varint"
)

// --- helpers ---

// dagPutJSON stores a dag-json document and returns its CID.
func dagPutJSON(t *testing.T, n *node.Node, js string, opts map[string]string) string {
	t.Helper()
	res := mustCall(t, n, "dag/put", nil, opts, objData(js))
	return res.Values[0].(*commands.DagPutResult).Cid.Cid
}

// carParts is a multipart body of CAR files.
func carParts(cars ...[]byte) files.Directory {
	var ents []files.DirEntry
	for i, c := range cars {
		ents = append(ents, files.FileEntry(fmt.Sprintf("f%d.car", i), files.NewBytesFile(c)))
	}
	return files.NewSliceDirectory(ents)
}

// importCAR runs dag/import and returns its lines.
func importCAR(t *testing.T, n *node.Node, opts map[string]string, cars ...[]byte) ([]*commands.CarImportOutput, error) {
	t.Helper()
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "dag/import", nil, opts, carParts(cars...))
	if err != nil {
		return nil, err
	}
	var out []*commands.CarImportOutput
	for _, v := range res.Values {
		out = append(out, v.(*commands.CarImportOutput))
	}
	return out, nil
}

func exportCAR(t *testing.T, n *node.Node, root string) []byte {
	t.Helper()
	return mustCall(t, n, "dag/export", []string{root}, nil, nil).Bytes
}

// goCarExport is what Kubo's dag export does: go-car's TraverseV1 with
// the explore-all selector over a link system that reads n's blocks.
func goCarExport(t *testing.T, n *node.Node, root cid.Cid) []byte {
	t.Helper()
	ls := cidlink.DefaultLinkSystem()
	ls.StorageReadOpener = func(_ linking.LinkContext, l datamodel.Link) (io.Reader, error) {
		b, err := n.Blocks.Get(context.Background(), l.(cidlink.Link).Cid)
		if err != nil {
			return nil, err
		}
		return bytes.NewReader(b.RawData()), nil
	}
	var buf bytes.Buffer
	if _, err := gocar.TraverseV1(context.Background(), &ls, root, selectorparse.CommonSelector_ExploreAllRecursively, &buf, gocar.AllowDuplicatePuts(false)); err != nil {
		t.Fatalf("go-car export: %v", err)
	}
	return buf.Bytes()
}

// carV1 frames a CARv1 by hand (so tests can write broken ones).
func carV1(t *testing.T, roots []cid.Cid, sections ...[]byte) []byte {
	t.Helper()
	hdr, err := qp.BuildMap(basicnode.Prototype.Any, 2, func(ma datamodel.MapAssembler) {
		qp.MapEntry(ma, "roots", qp.List(int64(len(roots)), func(la datamodel.ListAssembler) {
			for _, r := range roots {
				qp.ListEntry(la, qp.Link(cidlink.Link{Cid: r}))
			}
		}))
		qp.MapEntry(ma, "version", qp.Int(1))
	})
	if err != nil {
		t.Fatal(err)
	}
	var hb bytes.Buffer
	if err := dagcbor.Encode(hdr, &hb); err != nil {
		t.Fatal(err)
	}
	out := append(varint.ToUvarint(uint64(hb.Len())), hb.Bytes()...)
	for _, s := range sections {
		out = append(out, s...)
	}
	return out
}

// carSection frames one block (c need not match data).
func carSection(c cid.Cid, data []byte) []byte {
	cb := c.Bytes()
	out := varint.ToUvarint(uint64(len(cb) + len(data)))
	return append(append(out, cb...), data...)
}

// hasBlock reports whether c is stored.
func hasBlock(t *testing.T, n *node.Node, c cid.Cid) bool {
	t.Helper()
	ok, err := n.Blocks.Has(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func pinCount(t *testing.T, n *node.Node) int {
	t.Helper()
	pins, err := n.Pins().List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return len(pins)
}

// lotusFixtures unpacks testdata/car/kubo-t0054.tar.gz (see its README).
func lotusFixtures(t *testing.T) map[string][]byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "car", "kubo-t0054.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = b
	}
}

const (
	lotusGenesisRoot = "bafy2bzaceaxm23epjsmh75yvzcecsrbavlmkcxnva66bkdebdcnyw3bjrc74u"
	lotus128Root     = "bafy2bzaced4ueelaegfs5fqu4tzsh6ywbbpfk3cxppupmxfdhbpbhzawfw5oy"
)

// --- dag get / resolve ---

type dagVector struct {
	Kind      string   `json:"kind"`
	InputText string   `json:"input_text"`
	Options   []string `json:"options"`
	Cid       string   `json:"cid"`
	DagJSON   *string  `json:"dag_get_dag_json"`
}

func TestDagGet_Vectors_DagJSON(t *testing.T) {
	b, err := os.ReadFile(testutil.KuboVectors(t))
	if err != nil {
		t.Fatal(err)
	}
	var vf struct{ Vectors []dagVector }
	if err := json.Unmarshal(b, &vf); err != nil {
		t.Fatal(err)
	}
	n := testutil.MustOpenNode(t)
	seen := 0
	for _, v := range vf.Vectors {
		if v.Kind != "dag/put" || v.DagJSON == nil {
			continue
		}
		opts := map[string]string{}
		for _, o := range v.Options {
			k, val, _ := strings.Cut(strings.TrimPrefix(o, "--"), "=")
			opts[k] = val
		}
		c := dagPutJSON(t, n, v.InputText, opts)
		if c != v.Cid {
			t.Fatalf("%v: put %s, want %s", v.Options, c, v.Cid)
		}
		got := mustCall(t, n, "dag/get", []string{c}, nil, nil).Bytes
		if string(got) != *v.DagJSON {
			t.Errorf("%v: dag get %s\n got %s\nwant %s", v.Options, c, got, *v.DagJSON)
		}
		seen++
	}
	if seen < 10 {
		t.Fatalf("only %d dag/put vectors", seen)
	}
}

func TestDagGet_DagPB_KuboShape(t *testing.T) {
	n := testutil.MustOpenNode(t)
	empty := objHash(t, n, "object/new", []string{"unixfs-dir"}, nil, nil)
	wantEq(t, "empty dir", string(mustCall(t, n, "dag/get", []string{empty}, nil, nil).Bytes), `{"Data":{"/":{"bytes":"CAE"}},"Links":[]}`)
	// A node without Data: Kubo encodes the dag-pb schema node, whose
	// absent optional field comes out as null.
	blank := objHash(t, n, "object/new", nil, nil, nil)
	wantEq(t, "blank", string(mustCall(t, n, "dag/get", []string{blank}, nil, nil).Bytes), `{"Data":null,"Links":[]}`)

	root := addTree(t, n, map[string]string{"wrap-with-directory": "true"}, map[string]files.Node{"a": files.NewBytesFile([]byte("hello world\n"))})
	wantEq(t, "dir", string(mustCall(t, n, "dag/get", []string{root}, nil, nil).Bytes),
		`{"Data":{"/":{"bytes":"CAE"}},"Links":[{"Hash":{"/":"QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o"},"Name":"a","Tsize":20}]}`)
	// A path through a UnixFS directory, then into the node's fields.
	wantEq(t, "file", string(mustCall(t, n, "dag/get", []string{"/ipfs/" + root + "/a"}, nil, nil).Bytes),
		`{"Data":{"/":{"bytes":"CAISDGhlbGxvIHdvcmxkChgM"}},"Links":[]}`)
	wantEq(t, "field", string(mustCall(t, n, "dag/get", []string{"/ipld/" + root + "/Links/0/Name"}, nil, nil).Bytes), `"a"`)
	// dag-json round trip into dag-pb gives the same CID.
	js := mustCall(t, n, "dag/get", []string{root}, nil, nil).Bytes
	wantEq(t, "dag-pb put", dagPutJSON(t, n, string(js), map[string]string{"store-codec": "dag-pb"}), cid.NewCidV1(cid.DagProtobuf, cid.MustParse(root).Hash()).String())
	// Other output codecs: dag-pb re-encodes to the block itself.
	blk := mustCall(t, n, "block/get", []string{root}, nil, nil).Bytes
	wantEq(t, "dag-pb output", string(mustCall(t, n, "dag/get", []string{root}, map[string]string{"output-codec": "dag-pb"}, nil).Bytes), string(blk))
	wantErr(t, callErr(t, n, "dag/get", []string{root}, map[string]string{"output-codec": "nope"}, nil), `unknown multicodec: "nope"`)
}

func TestDagGetResolve_IPLDPaths(t *testing.T) {
	n := testutil.MustOpenNode(t)
	leaf := dagPutJSON(t, n, `{"x":{"y":[10,20]},"s":"leaf"}`, nil)
	root := dagPutJSON(t, n, `{"a":{"b":[1,2,3]},"l":{"/":"`+leaf+`"}}`, nil)
	cases := []struct{ path, get, cid, rem string }{
		{root, `{"a":{"b":[1,2,3]},"l":{"/":"` + leaf + `"}}`, root, ""},
		{root + "/a/b", `[1,2,3]`, root, "/a/b"},
		{root + "/a/b/1", `2`, root, "/a/b/1"},
		{root + "/l", `{"s":"leaf","x":{"y":[10,20]}}`, leaf, ""},
		{"/ipfs/" + root + "/l/x/y/0", `10`, leaf, "/x/y/0"},
		{"/ipld/" + root + "/l/s", `"leaf"`, leaf, "/s"},
	}
	for _, c := range cases {
		wantEq(t, "get "+c.path, string(mustCall(t, n, "dag/get", []string{c.path}, nil, nil).Bytes), c.get)
		r := mustCall(t, n, "dag/resolve", []string{c.path}, nil, nil).Values[0].(*commands.DagResolveResult)
		if r.Cid.Cid != c.cid || r.RemPath != c.rem {
			t.Errorf("resolve %s: %+v, want %s %q", c.path, r, c.cid, c.rem)
		}
	}
	// /ipfs/ paths walk HAMT-sharded directories by entry name.
	entries := map[string]files.Node{}
	for i := 0; i < 40; i++ {
		entries[fmt.Sprintf("f%02d", i)] = files.NewBytesFile([]byte(fmt.Sprintf("%d\n", i)))
	}
	hamt := addTree(t, n, map[string]string{"max-directory-links": "8"}, map[string]files.Node{"h": files.NewMapDirectory(entries)})
	if !strings.Contains(string(mustCall(t, n, "dag/get", []string{hamt}, nil, nil).Bytes), `"bytes":"CAU`) {
		t.Fatal("test directory is not a HAMT shard")
	}
	f := mustCall(t, n, "dag/resolve", []string{"/ipfs/" + hamt + "/f17"}, nil, nil).Values[0].(*commands.DagResolveResult)
	wantEq(t, "HAMT entry", string(mustCall(t, n, "cat", []string{f.Cid.Cid}, nil, nil).Bytes), "17\n")
	callErr(t, n, "dag/get", []string{root + "/nope"}, nil, nil)
	callErr(t, n, "dag/get", []string{"bafyreiaaaaaa"}, nil, nil)
	missing := cid.NewCidV1(cid.DagCBOR, mustHash(t, []byte("absent"))).String()
	wantErr(t, callErr(t, n, "dag/get", []string{missing}, nil, nil), notFound+missing)

	// Text of dag resolve: the base of the argument's CID, path joined,
	// no newline; --cid-base wins.
	r := mustCall(t, n, "dag/resolve", []string{root + "/a/b"}, nil, nil)
	txt, _ := objText(t, "dag/resolve", []string{root + "/a/b"}, nil, r.Values)
	wantEq(t, "resolve text", txt, root+"/a/b")
	b36 := cid.MustParse(root).Encode(mustBase(t, "base36"))
	txt, _ = objText(t, "dag/resolve", []string{b36 + "/a/b"}, nil, r.Values)
	wantEq(t, "resolve text base36", txt, b36+"/a/b")
	txt, _ = objText(t, "dag/resolve", []string{b36 + "/a/b"}, map[string]string{"cid-base": "base32"}, r.Values)
	wantEq(t, "resolve text --cid-base", txt, root+"/a/b")
}

// --- bad input ---

func TestDagPut_InvalidDagJSON_NothingStored(t *testing.T) {
	n := testutil.MustOpenNode(t)
	before := blockCount(t, n)
	// The codec's own errors, unwrapped, as Kubo's.
	for _, in := range []string{`{"a":`, `{"/":"notacid"}`, `{"a":1}{`, `[1,2`, `{"/":{"bytes":"!!"}}`} {
		t.Logf("%q: %v", in, callErr(t, n, "dag/put", nil, nil, objData(in)))
	}
	wantErr(t, callErr(t, n, "dag/put", nil, nil, objData(`{"a":`)), "EOF")
	// dag-pb needs the dag-pb shape.
	callErr(t, n, "dag/put", nil, map[string]string{"store-codec": "dag-pb"}, objData(`{"a":1}`))
	if after := blockCount(t, n); after != before {
		t.Fatalf("blocks %d -> %d after failed puts", before, after)
	}
}

func blockCount(t *testing.T, n *node.Node) int {
	t.Helper()
	count := 0
	err := n.Blocks.ForEachKey(context.Background(), func(mh.Multihash) error { count++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return count
}

func mustHash(t *testing.T, b []byte) mh.Multihash {
	t.Helper()
	h, err := mh.Sum(b, mh.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A crafted dag-pb node with 200k links: stat, export and get work
// through it with bounded allocation, and duplicates count once.
func TestDagStatExport_HugeLinkCount(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	leaf := blocks.NewBlock([]byte("x"))
	leafCid := cid.NewCidV1(cid.Raw, leaf.Cid().Hash())
	leafBlk, _ := blocks.NewBlockWithCid([]byte("x"), leafCid)
	const count = 200000
	same := new(dag.ProtoNode)
	missing := new(dag.ProtoNode)
	for i := 0; i < count; i++ {
		name := fmt.Sprintf("%06d", i)
		if err := same.AddRawLink(name, &ipld.Link{Cid: leafCid, Size: 1}); err != nil {
			t.Fatal(err)
		}
		c := cid.NewCidV1(cid.Raw, mustHash(t, []byte(name)))
		if err := missing.AddRawLink(name, &ipld.Link{Cid: c, Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Block().Put(ctx, false, leafBlk, same, missing); err != nil {
		t.Fatal(err)
	}
	if len(same.RawData()) < 8<<20 {
		t.Fatalf("crafted node is only %d bytes", len(same.RawData()))
	}

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	res := mustCall(t, n, "dag/stat", []string{same.Cid().String()}, map[string]string{"progress": "false"}, nil)
	st := res.Values[len(res.Values)-1].(*commands.DagStatResult)
	if st.NumBlocks != 2 || st.UniqueBlocks != 2 || st.Size != uint64(len(same.RawData())+1) {
		t.Fatalf("stat %+v", st)
	}
	car := exportCAR(t, n, same.Cid().String())
	runtime.ReadMemStats(&ms)
	t.Logf("stat+export allocated %d MiB", (ms.TotalAlloc-before)>>20)
	if used := ms.TotalAlloc - before; used > 128<<20 {
		t.Fatalf("stat+export of a 200k-link node allocated %d MiB", used>>20)
	}
	want := carV1(t, []cid.Cid{same.Cid()}, carSection(same.Cid(), same.RawData()), carSection(leafCid, []byte("x")))
	if !bytes.Equal(car, want) {
		t.Fatalf("export: %d bytes, want %d", len(car), len(want))
	}
	if !bytes.Equal(car, goCarExport(t, n, same.Cid())) {
		t.Fatal("export differs from go-car's")
	}

	// All children missing: export fails after the root, unless local-only.
	_, err := rpc.Call(ctx, n, commands.DefaultTable, "dag/export", []string{missing.Cid().String()}, nil, nil)
	wantErrPrefix(t, err, notFound)
	// Over HTTP the root section is sent, then the error in the trailer;
	// a missing root is a plain error before any output.
	srv := testutil.StartServer(t, n)
	resp := rpcPost(t, srv, "dag/export", url.Values{"arg": {missing.Cid().String()}}, nil, "")
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Trailer.Get("X-Stream-Error"), notFound) ||
		!bytes.Equal(body, carV1(t, []cid.Cid{missing.Cid()}, carSection(missing.Cid(), missing.RawData()))) {
		t.Fatalf("HTTP export with missing children: %d %q, %d bytes", resp.StatusCode, resp.Trailer.Get("X-Stream-Error"), len(body))
	}
	absent := cid.NewCidV1(cid.Raw, mustHash(t, []byte("absent root")))
	wantErrorJSON(t, rpcPost(t, srv, "dag/export", url.Values{"arg": {absent.String()}}, nil, ""), 500, notFound+absent.String())
	res = mustCall(t, n, "dag/export", []string{missing.Cid().String()}, map[string]string{"local-only": "true"}, nil)
	if !bytes.Equal(res.Bytes, carV1(t, []cid.Cid{missing.Cid()}, carSection(missing.Cid(), missing.RawData()))) {
		t.Fatal("local-only export is not the root alone")
	}
	wantErrPrefix(t, callErr(t, n, "dag/stat", []string{missing.Cid().String()}, nil, nil), "error traversing DAG: "+notFound)
	wantErr(t, callErr(t, n, "dag/export", []string{missing.Cid().String()}, map[string]string{"local-only": "true", "offline": "false"}, nil),
		"--local-only implies --offline and cannot be combined with --offline=false; please drop one of them")

	st2 := mustCall(t, n, "object/stat", []string{same.Cid().String()}, nil, nil).Values[0].(*commands.ObjectStat)
	if st2.NumLinks != count {
		t.Fatalf("object stat: %d links", st2.NumLinks)
	}
}

// --- dag stat ---

func TestDagStat_Vectors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	zero := make([]byte, 1048577)
	cases := []struct {
		name   string
		data   []byte
		opts   map[string]string
		cid    string
		blocks int64
		size   uint64
	}{
		{"hello", []byte("hello world\n"), nil, "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", 1, 20},
		{"pattern-1048577", blkPattern(1048577), nil, "QmQVP9EFfJCScLnxzdd7nnhZAnrBwTZzkxbn3gBXQgGvVw", 6, 1048885},
		{"pattern-1048577 raw", blkPattern(1048577), map[string]string{"raw-leaves": "true"}, "QmaubyWu7zia7JZvXYxr9bZiyna3fF4GfJeRKPMVcQGijp", 6, 1048831},
		{"zero-1048577", zero, nil, "Qmeb988ZjF9Ui6AVPR8Sjg5sAv1B6DauS5rUjCoNs7ftZ1", 3, 262411},
	}
	for _, c := range cases {
		got := addTree(t, n, c.opts, map[string]files.Node{c.name: files.NewBytesFile(c.data)})
		wantEq(t, c.name, got, c.cid)
		res := mustCall(t, n, "dag/stat", []string{got}, nil, nil)
		last := res.Values[len(res.Values)-1].(*commands.DagStatResult)
		// 0.9 fields and 0.42 summary agree with Kubo's dag stat.
		if last.NumBlocks != c.blocks || last.Size != c.size || last.UniqueBlocks != int(c.blocks) || last.TotalSize != c.size ||
			last.Ratio != 1 || last.SharedSize != 0 || len(last.DagStatsArray) != 1 ||
			last.DagStatsArray[0].Cid != c.cid || last.DagStatsArray[0].NumBlocks != c.blocks || last.DagStatsArray[0].Size != c.size {
			t.Errorf("%s: %+v %+v", c.name, last, last.DagStatsArray)
		}
		// progress (default): one value per block, then the summary.
		if int64(len(res.Values)) != c.blocks+1 {
			t.Errorf("%s: %d values, want %d", c.name, len(res.Values), c.blocks+1)
		}
		res = mustCall(t, n, "dag/stat", []string{got}, map[string]string{"progress": "false"}, nil)
		if len(res.Values) != 1 {
			t.Errorf("%s: progress=false gave %d values", c.name, len(res.Values))
		}
	}

	// Two roots sharing blocks: the summary counts shared bytes.
	a, b := cases[1].cid, cases[2].cid
	res := mustCall(t, n, "dag/stat", []string{a, a, b}, map[string]string{"progress": "false"}, nil)
	st := res.Values[0].(*commands.DagStatResult)
	if st.UniqueBlocks != 12 || st.TotalSize != 1048885+1048831 || len(st.DagStatsArray) != 3 || st.SharedSize != 1048885 ||
		st.DagStatsArray[1].Size != 1048885 || st.Ratio != float32(2*1048885+1048831)/float32(1048885+1048831) {
		t.Errorf("shared: %+v", st)
	}
	srv := testutil.StartServer(t, n)
	resp := rpcPost(t, srv, "dag/stat", url.Values{"arg": {cases[0].cid}, "progress": {"false"}}, nil, "")
	wantEq(t, "dag stat JSON", string(readAll(t, resp.Body)),
		`{"Size":20,"NumBlocks":1,"UniqueBlocks":1,"TotalSize":20,"Ratio":1,"DagStats":[{"Cid":"QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o","Size":20,"NumBlocks":1}]}`+"\n")

	txt, err := objText(t, "dag/stat", nil, map[string]string{"progress": "false"}, []any{st})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(txt, fmt.Sprintf("\n%-46s\tBlocks         \tSize\n", "CID")+a+"\t6              \t1048885\n") ||
		!strings.Contains(txt, "\nSummary\nTotal Size: ") || !strings.HasSuffix(txt, "\n\n\n") {
		t.Errorf("text %q", txt)
	}
	obj := dagPutJSON(t, n, `{"a":{"b":1}}`, nil)
	wantErr(t, callErr(t, n, "dag/stat", []string{obj + "/a/b"}, nil, nil), "cannot return size for anything other than a DAG with a root CID")
}

// --- dag export ---

// Kubo's t0054: importing the shuffled blocks and exporting the root
// re-creates the canonical CAR byte for byte; CARv2 imports too.
func TestDagExportImport_LotusFixtures(t *testing.T) {
	fx := lotusFixtures(t)
	canonical := fx["lotus_devnet_genesis.car"]
	for _, src := range []string{"lotus_devnet_genesis_shuffled_nulroot.car", "lotus_devnet_genesis_v2.car", "lotus_devnet_genesis.car"} {
		n := testutil.MustOpenNode(t)
		out, err := importCAR(t, n, map[string]string{"stats": "true"}, fx[src])
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		wantRoot := lotusGenesisRoot
		if strings.Contains(src, "nulroot") {
			wantRoot = "bafkqaaa"
		}
		if len(out) != 2 || out[0].Root == nil || out[0].Root.Cid.Cid != wantRoot || out[0].Root.PinErrorMsg != "" ||
			out[1].Stats == nil || out[1].Stats.BlockCount == 0 {
			t.Fatalf("%s: %+v", src, out)
		}
		got := exportCAR(t, n, lotusGenesisRoot)
		if !bytes.Equal(got, canonical) {
			t.Fatalf("%s: export differs from the canonical CAR (%d vs %d bytes)", src, len(got), len(canonical))
		}
		if !bytes.Equal(got, goCarExport(t, n, cid.MustParse(lotusGenesisRoot))) {
			t.Fatalf("%s: export differs from go-car's", src)
		}
	}

	// Naked roots: the genesis root pins from what is stored, the other
	// root's DAG is missing and reports its pin error.
	n := testutil.MustOpenNode(t)
	if _, err := importCAR(t, n, map[string]string{"pin-roots": "false"}, fx["lotus_devnet_genesis_shuffled_nulroot.car"]); err != nil {
		t.Fatal(err)
	}
	if pinCount(t, n) != 0 {
		t.Fatal("pin-roots=false pinned something")
	}
	out, err := importCAR(t, n, map[string]string{"stats": "true"}, fx["combined_naked_roots_genesis_and_128.car"])
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0].Root.Cid.Cid != lotusGenesisRoot || out[0].Root.PinErrorMsg != "" ||
		out[1].Root.Cid.Cid != lotus128Root || !strings.Contains(out[1].Root.PinErrorMsg, "could not find") || *out[2].Stats != (commands.CarImportStats{}) {
		t.Fatalf("naked roots: %+v %+v %+v", out[0].Root, out[1].Root, out[2])
	}

	// An incomplete UnixFS DAG: stored, not pinned; text is Kubo's error.
	n = testutil.MustOpenNode(t)
	out, err = importCAR(t, n, map[string]string{"stats": "true", "pin-roots": "false"}, fx["partial-dag-scope-entity.car"])
	if err != nil || len(out) != 1 || *out[0].Stats != (commands.CarImportStats{BlockCount: 1, BlockBytesCount: 1618}) {
		t.Fatalf("partial: %v %+v", err, out)
	}
	out, err = importCAR(t, n, nil, fx["partial-dag-scope-entity.car"])
	if err != nil || len(out) != 1 || !strings.Contains(out[0].Root.PinErrorMsg, "could not find") {
		t.Fatalf("partial pin: %v %+v", err, out)
	}
	vals := []any{out[0]}
	_, terr := objText(t, "dag/import", nil, nil, vals)
	wantErrPrefix(t, terr, `pinning root "QmPDC11yLAbVw3dX5jMeEuSdk4BiVjSd9X87zaYRdVjzW3" FAILED: `)
	txt, _ := objText(t, "dag/import", nil, map[string]string{"silent": "true"}, vals)
	wantEq(t, "silent", txt, "")
	txt, _ = objText(t, "dag/import", nil, map[string]string{"stats": "true"}, []any{
		&commands.CarImportOutput{Root: &commands.RootMeta{Cid: commands.CidLink{Cid: lotusGenesisRoot}}},
		&commands.CarImportOutput{Stats: &commands.CarImportStats{BlockCount: 3, BlockBytesCount: 9}},
	})
	wantEq(t, "import text", txt, "Pinned root\t"+lotusGenesisRoot+"\tsuccess\nImported 3 blocks (9 bytes)\n")
}

// The add -> export -> import (fresh repo) -> get round trip gives the
// same tar, and both repos export the same CAR bytes.
func TestDagExportImport_RoundTrip_FreshRepo(t *testing.T) {
	a := testutil.MustOpenNode(t)
	big := make([]byte, 1<<20+12345)
	for i := range big {
		big[i] = byte(i*7 + i>>9)
	}
	tree := func() map[string]files.Node {
		return map[string]files.Node{"top": files.NewMapDirectory(map[string]files.Node{
			"big.bin":   files.NewBytesFile(big),
			"small.txt": files.NewBytesFile([]byte("small\n")),
			"empty":     files.NewMapDirectory(map[string]files.Node{}),
			"sub": files.NewMapDirectory(map[string]files.Node{
				"x":    files.NewBytesFile([]byte("x")),
				"deep": files.NewMapDirectory(map[string]files.Node{"y.txt": files.NewBytesFile(bytes.Repeat([]byte("y"), 300000))}),
			}),
		})}
	}
	opts := map[string]string{"mtime": "1700000000"}
	root := addTree(t, a, opts, tree())
	carA := exportCAR(t, a, root)
	if !bytes.Equal(carA, goCarExport(t, a, cid.MustParse(root))) {
		t.Fatal("export differs from go-car's")
	}

	b := testutil.MustOpenNode(t)
	out, err := importCAR(t, b, nil, carA)
	if err != nil || len(out) != 1 || out[0].Root.Cid.Cid != root || out[0].Root.PinErrorMsg != "" {
		t.Fatalf("import: %v %+v", err, out)
	}
	if ok, _ := b.Pins().IsRecursive(context.Background(), cid.MustParse(root)); !ok {
		t.Fatal("root not pinned after import")
	}
	tarA := mustCall(t, a, "get", []string{root}, nil, nil).Bytes
	tarB := mustCall(t, b, "get", []string{root}, nil, nil).Bytes
	if len(tarA) < len(big) || !bytes.Equal(tarA, tarB) {
		t.Fatalf("get tars differ (%d vs %d bytes)", len(tarA), len(tarB))
	}
	if !bytes.Equal(exportCAR(t, b, root), carA) {
		t.Fatal("the two repos export different CARs")
	}
	// A third repo that added the same tree exports the same bytes.
	c := testutil.MustOpenNode(t)
	wantEq(t, "re-add", addTree(t, c, opts, tree()), root)
	if !bytes.Equal(exportCAR(t, c, root), carA) {
		t.Fatal("independent add exports different CAR bytes")
	}
	// Over HTTP: CAR content type, byte stream.
	srv := testutil.StartServer(t, a)
	resp := rpcPost(t, srv, "dag/export", url.Values{"arg": {root}}, nil, "")
	body := readAll(t, resp.Body)
	if resp.Header.Get("Content-Type") != "application/vnd.ipld.car" || resp.Header.Get("X-Stream-Output") != "1" || !bytes.Equal(body, carA) {
		t.Fatalf("HTTP export: %s %v, %d bytes", resp.Header.Get("Content-Type"), resp.Header, len(body))
	}
}

// Codecs other than dag-pb export and import (Kubo's t0054 checks these).
func TestDagExportImport_Codecs(t *testing.T) {
	a := testutil.MustOpenNode(t)
	leaf := dagPutJSON(t, a, `{"test":"leaf"}`, map[string]string{"store-codec": "dag-json"})
	id := "bafkqaddimvwgy3zao5xxe3debi" // identity CID, stored nowhere
	mid := dagPutJSON(t, a, `{"z":{"/":"`+leaf+`"},"a":[{"/":"`+leaf+`"},{"/":"`+id+`"}]}`, nil)
	root := dagPutJSON(t, a, `{"m":{"/":"`+mid+`"},"j":{"/":"`+leaf+`"}}`, map[string]string{"store-codec": "dag-json"})
	for _, codec := range []string{"json", "cbor"} {
		c := dagPutJSON(t, a, `{"test":"`+codec+`"}`, map[string]string{"store-codec": codec})
		car := exportCAR(t, a, c)
		b := testutil.MustOpenNode(t)
		if _, err := importCAR(t, b, nil, car); err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
	}
	car := exportCAR(t, a, root)
	if !bytes.Equal(car, goCarExport(t, a, cid.MustParse(root))) {
		t.Fatal("export differs from go-car's")
	}
	b := testutil.MustOpenNode(t)
	out, err := importCAR(t, b, map[string]string{"stats": "true"}, car)
	if err != nil || out[0].Root.PinErrorMsg != "" || out[1].Stats.BlockCount != 4 {
		t.Fatalf("import: %v %+v %+v", err, out[0].Root, out[1])
	}
	wantEq(t, "get after import", string(mustCall(t, b, "dag/get", []string{root + "/m/a/0/test"}, nil, nil).Bytes), `"leaf"`)
}

// --- dag import: refused input leaves nothing stored or pinned ---

func TestDagImport_BadBlock_NothingKept(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	// A block stored and pinned before must survive a failed import that
	// also carries it.
	kept := rawBlock(t, "kept before")
	if err := n.Block().Put(ctx, true, kept); err != nil {
		t.Fatal(err)
	}
	good := rawBlock(t, "good block")
	badCid := rawBlock(t, "the real bytes").Cid()
	car := carV1(t, []cid.Cid{good.Cid()},
		carSection(good.Cid(), good.RawData()),
		carSection(kept.Cid(), kept.RawData()),
		carSection(badCid, []byte("other bytes")))
	_, err := importCAR(t, n, nil, car)
	wantErrPrefix(t, err, fmt.Sprintf("import failed after block %q: mismatch in content integrity", kept.Cid()))
	if hasBlock(t, n, good.Cid()) || hasBlock(t, n, badCid) {
		t.Fatal("blocks of the refused CAR were kept")
	}
	if !hasBlock(t, n, kept.Cid()) || pinCount(t, n) != 1 {
		t.Fatalf("the earlier pinned block was lost: %v %d", hasBlock(t, n, kept.Cid()), pinCount(t, n))
	}

	// A CAR refused in a later file undoes the earlier files too.
	first := carV1(t, []cid.Cid{good.Cid()}, carSection(good.Cid(), good.RawData()))
	_, err = importCAR(t, n, nil, first, car)
	if err == nil || hasBlock(t, n, good.Cid()) || pinCount(t, n) != 1 {
		t.Fatalf("multi-file refusal: %v", err)
	}

	// Blocks that do not decode with their codec are refused.
	pbCid := cid.NewCidV1(cid.DagProtobuf, mustHash(t, []byte{0xff, 0x01}))
	_, err = importCAR(t, n, nil, carV1(t, nil, carSection(pbCid, []byte{0xff, 0x01})))
	wantErrPrefix(t, err, fmt.Sprintf("import failed at block %q: ", pbCid))
	cborCid := cid.NewCidV1(cid.DagCBOR, mustHash(t, []byte{0xa1}))
	_, err = importCAR(t, n, nil, carV1(t, nil, carSection(cborCid, []byte{0xa1})))
	wantErrPrefix(t, err, fmt.Sprintf("import failed at block %q: ", cborCid))
	if hasBlock(t, n, pbCid) || hasBlock(t, n, cborCid) {
		t.Fatal("undecodable blocks were stored")
	}

	// Not a CAR at all; a CARv3.
	_, err = importCAR(t, n, nil, []byte("hello, this is not a car"))
	if err == nil {
		t.Fatal("garbage imported")
	}
	_, err = importCAR(t, n, nil, []byte{0x11, 0xa2, 0x65, 'r', 'o', 'o', 't', 's', 0x80, 0x67, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x03})
	wantErr(t, err, "invalid car version: 3")
}

func TestDagImport_Truncated_NothingKept(t *testing.T) {
	src := testutil.MustOpenNode(t)
	root := addTree(t, src, nil, map[string]files.Node{"f": files.NewBytesFile(blkPattern(700000))})
	car := exportCAR(t, src, root)
	fx := lotusFixtures(t)
	v2 := fx["lotus_devnet_genesis_v2.car"]
	v1 := fx["lotus_devnet_genesis.car"]
	cases := []struct {
		name string
		car  []byte
	}{
		{"mid-block", car[:len(car)-1000]},
		{"mid-varint", car[:len(car)-1]},
		{"header only, cut", car[:20]},
		// A CARv2 announces its payload size: a cut at a block boundary is
		// still truncated.
		{"v2 at a block boundary", v2[:51+len(v1)-(len(v1)-carBoundary(t, v1))]},
		{"v2 mid-block", v2[:51+len(v1)/2]},
	}
	for _, c := range cases {
		n := testutil.MustOpenNode(t)
		before := blockCount(t, n)
		_, err := importCAR(t, n, nil, c.car)
		if err == nil {
			t.Fatalf("%s: truncated CAR imported", c.name)
		}
		if after := blockCount(t, n); after != before || pinCount(t, n) != 0 {
			t.Fatalf("%s: %d blocks (was %d), %d pins after refusal", c.name, after, before, pinCount(t, n))
		}
	}
}

// carBoundary returns the offset of the last section boundary of a CARv1
// (before its last block).
func carBoundary(t *testing.T, car []byte) int {
	t.Helper()
	off := 0
	last := 0
	for off < len(car) {
		l, k, err := varint.FromUvarint(car[off:])
		if err != nil {
			t.Fatal(err)
		}
		last = off
		off += k + int(l)
	}
	return last
}

func TestDagImport_BigBlock_AllowBigBlock(t *testing.T) {
	n := testutil.MustOpenNode(t)
	res := mustCall(t, n, "dag/put", nil, map[string]string{"input-codec": "raw", "store-codec": "raw", "allow-big-block": "true"}, objData(string(make([]byte, 2097153))))
	c := res.Values[0].(*commands.DagPutResult).Cid.Cid
	car := exportCAR(t, n, c)
	m := testutil.MustOpenNode(t)
	_, err := importCAR(t, m, nil, car)
	wantErr(t, err, fmt.Sprintf("import failed at block %q: produced block is over 2MiB: big blocks can't be exchanged with other peers. consider using UnixFS for automatic chunking of bigger files, or pass --allow-big-block to override", c))
	if blockCount(t, m) != 0 {
		t.Fatal("big block stored")
	}
	if _, err := importCAR(t, m, map[string]string{"allow-big-block": "true"}, car); err != nil {
		t.Fatal(err)
	}
	wantErr(t, callErr(t, m, "dag/import", nil, map[string]string{"local-only": "true", "pin-roots": "true"}, carParts(car)),
		"--local-only implies --pin-roots=false and cannot be combined with --pin-roots=true; please drop one of them")
}

// Over HTTP a failed import is an error response and the stream of a
// good one is NDJSON.
func TestDagImport_HTTP_Shapes(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	fx := lotusFixtures(t)
	resp := blkPost(t, srv, "dag/import", url.Values{"stats": {"true"}}, carParts(fx["lotus_devnet_genesis_v2.car"]))
	blkWantHeaders(t, resp, 200, "application/json", "1", "")
	body := blkReadAll(t, resp.Body)
	wantEq(t, "import body", body, `{"Root":{"Cid":{"/":"`+lotusGenesisRoot+`"},"PinErrorMsg":""}}`+"\n"+`{"Stats":{"BlockCount":`+fmt.Sprint(countSections(t, fx["lotus_devnet_genesis.car"]))+`,"BlockBytesCount":`+fmt.Sprint(sectionBytes(t, fx["lotus_devnet_genesis.car"]))+`}}`+"\n")
	resp = blkPost(t, srv, "dag/import", nil, carParts(fx["lotus_devnet_genesis.car"][:1000]))
	b := blkReadAll(t, resp.Body)
	if resp.StatusCode != 500 || !strings.Contains(b, "import failed") {
		t.Fatalf("truncated over HTTP: %d %s", resp.StatusCode, b)
	}
}

// countSections and sectionBytes read a CARv1 with go-car.
func countSections(t *testing.T, car []byte) int {
	t.Helper()
	n, _ := carTotals(t, car)
	return n
}

func sectionBytes(t *testing.T, car []byte) int {
	t.Helper()
	_, b := carTotals(t, car)
	return b
}

func carTotals(t *testing.T, car []byte) (int, int) {
	t.Helper()
	br, err := gocar.NewBlockReader(bytes.NewReader(car))
	if err != nil {
		t.Fatal(err)
	}
	n, size := 0, 0
	for {
		b, err := br.Next()
		if err == io.EOF {
			return n, size
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		size += len(b.RawData())
	}
}

// rawBlock is a raw-codec CIDv1 block.
func rawBlock(t *testing.T, s string) blocks.Block {
	t.Helper()
	b, err := blocks.NewBlockWithCid([]byte(s), cid.NewCidV1(cid.Raw, mustHash(t, []byte(s))))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustBase(t *testing.T, name string) mbase.Encoder {
	t.Helper()
	e, err := mbase.EncoderByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Ensure dag-jose is a codec as in Kubo (its dagjose plugin): dag/put
// stores a JWS given as dag-json or as dag-jose bytes, dag/get shows it
// with Kubo's added "link" and walks into it; the CIDs and texts are
// Kubo 0.42's.
func TestDagJOSE_PutGet_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	const jws = `{"payload":"AXESICjDGMg3fEBSX7_fpbBUYF4E61TXLysmLJgfGEpFG8Pu","signatures":[{"protected":"eyJhbGciOiJFUzI1NksifQ","signature":"z7a2MvPWLsd7leOeHyfeA1OcAFC9yy5rn1HD8xCeHz3nFrwyn_Su5xXUoaIxAre3fXhGjPkVSNiCE36AKiaMng"}]}`
	c := dagPutJSON(t, n, jws, map[string]string{"store-codec": "dag-jose"})
	if c != "bagcqcerakbt343l44woxzlqxcfcop5w6qnynb4fklje3b6wpgmodloecg2oa" {
		t.Fatalf("dag-jose CID %s", c)
	}
	got := mustCall(t, n, "dag/get", []string{c}, nil, nil).Bytes
	want := `{"link":{"/":"bafyreibiymmmqn34ibjf7p67uwyfiyc6atvvjvzpfmtczga7dbfekg6d5y"},` + jws[1:]
	if string(got) != want {
		t.Fatalf("dag/get:\n%s\nwant\n%s", got, want)
	}
	if got := mustCall(t, n, "dag/get", []string{c + "/payload"}, nil, nil).Bytes; string(got) != `"AXESICjDGMg3fEBSX7_fpbBUYF4E61TXLysmLJgfGEpFG8Pu"` {
		t.Fatalf("dag/get payload: %s", got)
	}
	raw := mustCall(t, n, "block/get", []string{c}, nil, nil).Bytes
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"input-codec": "dag-jose", "store-codec": "dag-jose", "hash": "sha2-512"}, "bagcqce2ake6unqxsnuinb3nerpm6xwmy53vp42jgdbblqmazdlsi7xpl7mmhg436svmwbwdsxfjn3leshnxggcpqe43n3mm3mua5ycpwgzftf2q"},
		{map[string]string{"input-codec": "dag-jose", "store-codec": "dag-cbor"}, "bafyreig3mkbvdocbf4kndoajcnia4lird3ey5tzbthq6khkhh4pgcahkei"},
	} {
		res := mustCall(t, n, "dag/put", nil, tc.opts, files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile(raw)}))
		if got := res.Values[0].(*commands.DagPutResult).Cid.Cid; got != tc.want {
			t.Fatalf("dag/put %v: %s, want %s", tc.opts, got, tc.want)
		}
	}
	err := callErr(t, n, "dag/put", nil, map[string]string{"store-codec": "dag-jose"}, files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile([]byte(`{"a":1}`))}))
	wantErr(t, err, "invalid JOSE object")
}

// Ensure dag/import on an online node never waits on the network to pin
// roots: a CAR naming a root it lacks ("naked roots", as in
// kubo-rpc-client's fixtures) or a root whose DAG is incomplete answers at
// once, with Kubo's PinErrorMsg, and the import stands.
func TestDagImport_Online_MissingRootsAnswerAtOnce(t *testing.T) {
	n := testutil.MustOnlineNode(t, "none", nil)
	sum := func(b []byte, codec uint64) cid.Cid {
		h, err := mh.Sum(b, mh.SHA2_256, -1)
		if err != nil {
			t.Fatal(err)
		}
		return cid.NewCidV1(codec, h)
	}
	missing := sum([]byte("a root nobody has"), cid.Raw)
	absentLeaf := sum([]byte("a leaf nobody has"), cid.Raw)
	// dag-json {"l":{"/":absentLeaf}}: present, its child absent.
	doc := []byte(`{"l":{"/":"` + absentLeaf.String() + `"}}`)
	partial := sum(doc, cid.DagJSON)
	other := []byte("an unrelated block")
	car := carV1(t, []cid.Cid{missing, partial}, carSection(sum(other, cid.Raw), other), carSection(partial, doc))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	res, err := rpc.Call(ctx, n, commands.DefaultTable, "dag/import", nil, map[string]string{"stats": "true"}, carParts(car))
	if err != nil {
		t.Fatalf("dag/import: %v after %v", err, time.Since(start))
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("dag/import took %v", el)
	}
	if len(res.Values) != 3 {
		t.Fatalf("dag/import: %d values %+v", len(res.Values), res.Values)
	}
	r0 := res.Values[0].(*commands.CarImportOutput).Root
	r1 := res.Values[1].(*commands.CarImportOutput).Root
	if r0.Cid.Cid != missing.String() || r0.PinErrorMsg != "ipld: could not find "+missing.String() {
		t.Fatalf("naked root: %+v", r0)
	}
	if r1.Cid.Cid != partial.String() || !strings.Contains(r1.PinErrorMsg, "could not find "+absentLeaf.String()) {
		t.Fatalf("incomplete root: %+v", r1)
	}
	if st := res.Values[2].(*commands.CarImportOutput).Stats; st == nil || st.BlockCount != 2 {
		t.Fatalf("stats: %+v", res.Values[2])
	}
	if !hasBlock(t, n, partial) {
		t.Fatal("the import was rolled back")
	}
	if pins, _ := n.Pins().List(context.Background(), ""); len(pins) != 0 {
		t.Fatalf("pins after failed root pins: %+v", pins)
	}
}

// FuzzCARImport feeds arbitrary bytes to dag/import (pinning roots).
func FuzzCARImport(f *testing.F) {
	n, check := fuzzNode(f)
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil, map[string]string{"pin": "false"},
		oneFile("x", []byte("a small file for a CAR")))
	if err != nil {
		f.Fatal(err)
	}
	root := res.Values[len(res.Values)-1].(*node.AddEvent).Hash
	exp, err := rpc.Call(context.Background(), n, commands.DefaultTable, "dag/export", []string{root}, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	car := exp.Bytes
	f.Add(car)
	f.Add(car[:len(car)-5])                          // cut in a block
	f.Add(append(append([]byte{}, car...), 3, 0, 1)) // a short trailing section
	f.Add([]byte("\x0a\xa1dtest\x01"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		before := pinCount(t, n)
		_, err := rpc.Call(context.Background(), n, commands.DefaultTable, "dag/import", nil,
			map[string]string{"pin-roots": "true"}, oneFile("in.car", data))
		check(t, err, before)
	})
}

// FuzzDagPut feeds arbitrary dag-json (even first byte of codec) and
// dag-cbor (odd) to dag/put, stored in the same codec and pinned.
func FuzzDagPut(f *testing.F) {
	n, check := fuzzNode(f)
	f.Add(byte(0), []byte(`{"a":[1,2.5,"x",{"/":"bafkqaaa"},{"/":{"bytes":"aGk"}}],"b":null}`))
	f.Add(byte(0), []byte(`[{"/":"not a cid"}, 1e999, "\ud800"]`))
	f.Add(byte(1), []byte("\xa2aa\x82\x01\xf9\x3c\x00ab\xd8\x2a\x45\x00\x01\x55\x00\x00"))
	f.Add(byte(1), []byte("\x9f\x01\xff"))
	f.Add(byte(1), []byte("\xbb\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		codec := "dag-json"
		if which%2 == 1 {
			codec = "dag-cbor"
		}
		before := pinCount(t, n)
		_, err := rpc.Call(context.Background(), n, commands.DefaultTable, "dag/put", nil,
			map[string]string{"input-codec": codec, "store-codec": codec, "pin": "true"}, oneFile("in", data))
		check(t, err, before)
	})
}

// Ensure dag/export and pin/add stop when their client hangs up, on a
// DAG of 400,000 blocks.
func TestHangup_StopsExportAndPin(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root := wideDAG(t, n, 400, 1000)
	t.Run("dag/export", func(t *testing.T) {
		hangupMidway(t, srv, httpPost("dag/export?arg="+root.String(), nil, ""), "ExportCAR", nil)
	})
	t.Run("pin/add", func(t *testing.T) {
		hangupMidway(t, srv, httpPost("pin/add?arg="+root.String(), nil, ""), "(*Pins).Add(", nil)
		if ok, _ := n.Pins().IsRecursive(context.Background(), root); ok {
			t.Fatal("pin/add finished although its client left")
		}
	})
}

// Ensure dag/import stops when its client hangs up: a CAR of 400,000
// blocks, the connection closed while it streams, and none of the blocks
// it had stored stays.
func TestHangup_StopsCARImport(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	var car bytes.Buffer
	leaf0 := merkledag.NewRawNode([]byte("leaf 0"))
	hdr := []byte("\xa2eroots\x81\xd8*X%\x00" + string(leaf0.Cid().Bytes()) + "gversion\x01")
	car.Write(varint.ToUvarint(uint64(len(hdr))))
	car.Write(hdr)
	for i := 0; i < 400000; i++ {
		b := merkledag.NewRawNode([]byte(fmt.Sprintf("leaf %d", i)))
		sec := append(b.Cid().Bytes(), b.RawData()...)
		car.Write(varint.ToUvarint(uint64(len(sec))))
		car.Write(sec)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "big.car")
	io.Copy(w, &car)
	mw.Close()
	// The command, not its importer: after the importer's read fails,
	// the command removes what it stored (Abort), and that is part of
	// stopping.
	stored := storedBlocks(n)
	before := stored()
	hangupMidway(t, srv, httpPost("dag/import", body.Bytes(), mw.FormDataContentType()), "commands.runDagImport(", stored)
	if ok, _ := n.Pins().IsRecursive(context.Background(), leaf0.Cid()); ok {
		t.Fatal("the root of a cut CAR import is pinned")
	}
	if after := stored(); after != before {
		t.Fatalf("a cut CAR import left blocks behind: %d stored, %d before it", after, before)
	}
}
