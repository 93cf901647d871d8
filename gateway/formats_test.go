package gateway_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"cairn/node"

	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/path"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	carv2 "github.com/ipld/go-car/v2"
	mh "github.com/multiformats/go-multihash"
)

// carBlocks reads a CAR answer's blocks, in order.
func carBlocks(t *testing.T, body []byte) []cid.Cid {
	t.Helper()
	br, err := carv2.NewBlockReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out []cid.Cid
	for {
		b, err := br.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Cid())
	}
}

// putBlock stores data as a block of codec and returns its CID.
func (s *site) putBlock(t *testing.T, codec uint64, data []byte) cid.Cid {
	t.Helper()
	c, err := cid.Prefix{Version: 1, Codec: codec, MhType: mh.SHA2_256, MhLength: -1}.Sum(data)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := blocks.NewBlockWithCid(data, c)
	if err := s.n.Block().Put(context.Background(), false, blk); err != nil {
		t.Fatal(err)
	}
	return c
}

// CARs of a path: the blocks that resolve it, then the terminal element
// by dag-scope and entity-bytes.
func TestGateway_CarScopes(t *testing.T) {
	s := newSite(t, nil)
	root, file := s.root, s.cidOf(t, "/big.bin")
	links, err := s.n.UnixFS().Links(context.Background(), file)
	if err != nil || len(links) < 2 {
		t.Fatalf("big.bin links: %v %v", links, err)
	}
	p := "/ipfs/" + root.String() + "/big.bin?format=car"
	for _, tc := range []struct {
		query string
		want  []cid.Cid
	}{
		{"&dag-scope=block", []cid.Cid{root, file}},
		{"&dag-scope=entity&entity-bytes=0:0", []cid.Cid{root, file, links[0].Cid}},
		{"&dag-scope=entity&entity-bytes=-1:*", []cid.Cid{root, file, links[len(links)-1].Cid}},
	} {
		resp, body := s.do(t, "GET", p+tc.query)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: got %d %s", tc.query, resp.StatusCode, body)
		}
		got := carBlocks(t, body)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d blocks %v, want %v", tc.query, len(got), got, tc.want)
			continue
		}
		for i := range got {
			if !got[i].Equals(tc.want[i]) {
				t.Errorf("%s: block %d is %s, want %s", tc.query, i, got[i], tc.want[i])
			}
		}
	}
	// The whole entity: the file's root and every leaf, no directory
	// entry but the path's.
	_, body := s.do(t, "GET", p+"&dag-scope=entity")
	if got := carBlocks(t, body); len(got) != 2+len(links) {
		t.Errorf("entity: %d blocks, want %d", len(got), 2+len(links))
	}
	resp, body := s.do(t, "GET", p+"&dag-scope=everything")
	if resp.StatusCode != 400 || string(body) != "unsupported application/vnd.ipld.car scope parameter\n" {
		t.Errorf("bad scope: got %d %q", resp.StatusCode, body)
	}
}

// The CAR of a path that starts in a data block carries that block (whose
// fields the path follows to a link), then the UnixFS path below it.
func TestGateway_CarThroughData(t *testing.T) {
	s := newSite(t, nil)
	doc := s.putBlock(t, cid.DagJSON, []byte(`{"files":{"dir":{"/":"`+s.root.String()+`"}}}`))
	resp, body := s.do(t, "GET", "/ipfs/"+doc.String()+"/files/dir/a.txt?format=car")
	if resp.StatusCode != 200 {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	got, want := carBlocks(t, body), []cid.Cid{doc, s.root, s.cidOf(t, "/a.txt")}
	if len(got) != len(want) {
		t.Fatalf("blocks %v, want %v", got, want)
	}
	for i := range got {
		if !got[i].Equals(want[i]) {
			t.Errorf("block %d is %s, want %s", i, got[i], want[i])
		}
	}
	wantHeaders(t, resp, map[string]string{"X-Ipfs-Roots": strings.Join([]string{doc.String(), doc.String(), s.root.String(), s.cidOf(t, "/a.txt").String()}, ",")})
	emptyIdentity := cid.MustParse("bafkqaaa")
	// As Kubo 0.43.1 answers them: a path naming what does not exist is
	// the CAR of the blocks that show it, rooted at the empty identity
	// CID; a path ending inside the block is that block and the DAG below.
	for _, tc := range []struct {
		path   string
		root   cid.Cid
		blocks []cid.Cid
		roots  string
	}{
		{"/files/nope/a.txt", emptyIdentity, []cid.Cid{doc}, doc.String()},
		{"/files/dir/nope", emptyIdentity, []cid.Cid{doc, s.root}, doc.String()},
		{"/files", doc, nil, doc.String() + "," + doc.String()},
	} {
		resp, body := s.do(t, "GET", "/ipfs/"+doc.String()+tc.path+"?format=car")
		if resp.StatusCode != 200 {
			t.Errorf("%s: got %d %s", tc.path, resp.StatusCode, body)
			continue
		}
		wantHeaders(t, resp, map[string]string{"X-Ipfs-Roots": tc.roots})
		if br, err := carv2.NewBlockReader(bytes.NewReader(body)); err != nil || len(br.Roots) != 1 || !br.Roots[0].Equals(tc.root) {
			t.Errorf("%s: CAR roots %v (%v), want %s", tc.path, br, err, tc.root)
			continue
		}
		got := carBlocks(t, body)
		if tc.blocks == nil {
			if len(got) < 4 || !got[0].Equals(doc) {
				t.Errorf("%s: blocks %v, want the data block and the whole tree below", tc.path, got)
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.blocks) {
			t.Errorf("%s: blocks %v, want %v", tc.path, got, tc.blocks)
		}
	}
}

// Blocks of the data codecs are answered as stored, in their own type;
// a browser gets a page; conversion is refused by default.
func TestGateway_DagJSON(t *testing.T) {
	s := newSite(t, nil)
	data := []byte(`{"hello":"world"}`)
	c := s.putBlock(t, cid.DagJSON, data)
	resp, body := s.do(t, "GET", "/ipfs/"+c.String())
	if resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	wantHeaders(t, resp, map[string]string{
		"Content-Type":        "application/vnd.ipld.dag-json",
		"Etag":                `"` + c.String() + `.dag-json"`,
		"Content-Disposition": `inline; filename="` + c.String() + `.json"; filename*=UTF-8''` + c.String() + ".json",
	})
	resp, body = s.do(t, "GET", "/ipfs/"+c.String()+"/", "Accept", "text/html")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html" || !strings.Contains(string(body), "hello") {
		t.Errorf("HTML: got %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, body = s.do(t, "GET", "/ipfs/"+c.String()+"?format=dag-cbor")
	if resp.StatusCode != 406 {
		t.Errorf("conversion: got %d %q", resp.StatusCode, body)
	}
	resp, _ = s.do(t, "GET", "/ipfs/"+c.String()+"/nope")
	if resp.StatusCode != 404 {
		t.Errorf("missing field: got %d", resp.StatusCode)
	}
}

// A tar holds the tree under an entry named by the CID; its ETag is weak,
// since two tars of one tree need not be the same bytes.
func TestGateway_Tar(t *testing.T) {
	s := newSite(t, nil)
	resp, body := s.do(t, "GET", "/ipfs/"+s.root.String()+"/sub?format=tar")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-tar" {
		t.Fatalf("got %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sub := s.cidOf(t, "/sub").String()
	if got, want := resp.Header.Get("Etag"), `W/"`+sub+`.x-tar"`; got != want {
		t.Errorf("Etag: got %q, want %q", got, want)
	}
	resp, _ = s.do(t, "GET", "/ipfs/"+s.root.String()+"/sub?format=tar", "If-None-Match", `W/"`+sub+`.x-tar"`)
	if resp.StatusCode != 304 {
		t.Errorf("If-None-Match: got %d, want 304", resp.StatusCode)
	}
	tr := tar.NewReader(bytes.NewReader(body))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != sub+","+sub+"/index.html" {
		t.Errorf("entries %v", names)
	}
}

// /ipns/ names: content cacheable for the record's TTL, and the signed
// record itself.
func TestGateway_IPNS(t *testing.T) {
	s := newSite(t, nil)
	ttl := 42 * time.Hour
	name, err := s.n.Names().Publish(context.Background(), path.FromCid(s.root), node.PublishOptions{Lifetime: 48 * time.Hour, TTL: &ttl, AllowOffline: true})
	if err != nil {
		t.Fatal(err)
	}
	resp, body := s.do(t, "GET", "/ipns/"+name.String()+"/a.txt")
	if resp.StatusCode != 200 || string(body) != "hello\n" || resp.Header.Get("Cache-Control") != "public, max-age=151200" {
		t.Fatalf("got %d %q, Cache-Control %q", resp.StatusCode, body, resp.Header.Get("Cache-Control"))
	}
	resp, body = s.do(t, "GET", "/ipns/"+name.String()+"?format=ipns-record")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.ipfs.ipns-record" {
		t.Fatalf("record: got %d %q", resp.StatusCode, body)
	}
	rec, err := ipns.UnmarshalRecord(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := ipns.ValidateWithName(rec, name); err != nil {
		t.Errorf("record: %v", err)
	}
}

// Cache-Control: only-if-cached answers 412 for content not stored.
func TestGateway_OnlyIfCached(t *testing.T) {
	s := newSite(t, nil)
	missing := "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	resp, _ := s.do(t, "HEAD", "/ipfs/"+missing, "Cache-Control", "only-if-cached")
	if resp.StatusCode != 412 {
		t.Errorf("missing: got %d", resp.StatusCode)
	}
	resp, _ = s.do(t, "GET", "/ipfs/"+s.root.String()+"/a.txt", "Cache-Control", "only-if-cached")
	if resp.StatusCode != 200 {
		t.Errorf("stored: got %d", resp.StatusCode)
	}
}
