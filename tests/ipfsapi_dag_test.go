package tests

import (
	"context"
	"io"
	"strings"
	"testing"

	shell "github.com/ipfs/go-ipfs-api"
)

// go-ipfs-api, a real Kubo client, drives the dag and object commands of
// the daemon; expected CIDs are Kubo's.
func TestIpfsAPIDag_DagAndObject(t *testing.T) {
	d := startDaemon(t, "test")
	sh := shell.NewShell(strings.TrimPrefix(d.url, "http://"))

	// dag put / get (the dag/put vector obj1).
	c, err := sh.DagPut(`{"a":1,"b":[1,2,3]}`, "dag-json", "dag-cbor")
	if err != nil || c != "bafyreidwixkl7qc3qu3oqli3jcjumyijwdotb3ssmbyfpol65kr4lmiphm" {
		t.Fatalf("dag put: %q %v", c, err)
	}
	var obj struct {
		A int
		B []int
	}
	if err := sh.DagGet(c, &obj); err != nil || obj.A != 1 || len(obj.B) != 3 || obj.B[2] != 3 {
		t.Fatalf("dag get: %+v %v", obj, err)
	}
	var b []int
	if err := sh.DagGet(c+"/b", &b); err != nil || len(b) != 3 || b[0] != 1 {
		t.Fatalf("dag get path: %v %v", b, err)
	}

	// dag export through a raw request, dag import of the CAR.
	resp, err := sh.Request("dag/export", c).Send(context.Background())
	if err != nil || resp.Error != nil {
		t.Fatalf("dag export: %v %v", err, resp.Error)
	}
	car, err := io.ReadAll(resp.Output)
	resp.Close()
	if err != nil || len(car) == 0 {
		t.Fatalf("dag export body: %d bytes %v", len(car), err)
	}
	imp, err := sh.DagImport(car, false, true)
	if err != nil || len(imp.Roots) != 1 || imp.Roots[0].Root.Cid.Value != c || imp.Stats == nil || imp.Stats.BlockCount != 1 {
		t.Fatalf("dag import: %+v %v", imp, err)
	}

	// object new, patch, get, stat.
	empty, err := sh.NewObject("unixfs-dir")
	if err != nil || empty != "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn" {
		t.Fatalf("object new unixfs-dir: %q %v", empty, err)
	}
	blank, err := sh.NewObject("")
	if err != nil || blank != "QmdfTbBqBPQ7VNxZEYEj14VmRuZBkqFbiwReogJgS1zR1n" {
		t.Fatalf("object new: %q %v", blank, err)
	}
	file, err := sh.Add(strings.NewReader("hello world\n"))
	if err != nil || file != "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" {
		t.Fatalf("add: %q %v", file, err)
	}
	withFoo, err := sh.PatchLink(empty, "foo", file, false)
	if err != nil {
		t.Fatal(err)
	}
	o, err := sh.ObjectGet(withFoo)
	if err != nil || o.Data != "\x08\x01" || len(o.Links) != 1 || o.Links[0].Name != "foo" || o.Links[0].Hash != file || o.Links[0].Size != 20 {
		t.Fatalf("object get: %+v %v", o, err)
	}
	back, err := sh.Patch(withFoo, "rm-link", "foo")
	if err != nil || back != empty {
		t.Fatalf("rm-link: %q %v", back, err)
	}
	deep, err := sh.PatchLink(empty, "a/b/c", file, true)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := sh.Cat(deep + "/a/b/c")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "hello world\n" {
		t.Fatalf("cat through patched links: %q", got)
	}
	// Kubo 0.42 refuses named links on a node without UnixFS data.
	if _, err := sh.PatchLink(blank, "foo", file, false); err == nil || !strings.Contains(err.Error(), "cannot add named links to a non-UnixFS dag-pb node") {
		t.Fatalf("add-link on a bare node: %v", err)
	}

	set, err := sh.PatchData(blank, true, "foo")
	if err != nil {
		t.Fatal(err)
	}
	appended, err := sh.PatchData(set, false, "bar")
	if err != nil {
		t.Fatal(err)
	}
	if o, err := sh.ObjectGet(appended); err != nil || o.Data != "foobar" || len(o.Links) != 0 {
		t.Fatalf("set/append data: %+v %v", o, err)
	}

	mars, err := sh.Add(strings.NewReader("Hello Mars"))
	if err != nil || mars != "QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb" {
		t.Fatalf("add: %q %v", mars, err)
	}
	st, err := sh.ObjectStat(mars)
	if err != nil || st.Hash != mars || st.NumLinks != 0 || st.BlockSize != 18 || st.LinksSize != 2 || st.DataSize != 16 || st.CumulativeSize != 18 {
		t.Fatalf("object stat: %+v %v", st, err)
	}
	put, err := sh.ObjectPut(&shell.IpfsObject{Data: "Hello Mars"})
	if err != nil || put != "QmS3hVY6eYrMQ6L22agwrx3YHBEsc3LJxVXCtyQHqRBukH" {
		t.Fatalf("object put: %q %v", put, err)
	}
}
