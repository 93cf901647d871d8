package node_test

import (
	"context"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

// addOne adds data as one file with o and returns its root CID.
func addOne(t *testing.T, n *node.Node, o node.AddOptions, data string) (cid.Cid, error) {
	t.Helper()
	a, err := n.UnixFS().NewAdder(context.Background(), o, func(node.AddEvent) error { return nil })
	if err != nil {
		return cid.Undef, err
	}
	roots, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile([]byte(data))}))
	if err != nil {
		return cid.Undef, err
	}
	return roots[0], nil
}

// Kubo matches hash names case-insensitively in add (--hash and
// Import.HashFunction) and in the files commands; a non-sha2-256 hash
// implies CIDv1.
func TestImport_HashName_CaseInsensitive(t *testing.T) {
	n := testutil.MustOpenNode(t)
	want, err := addOne(t, n, node.AddOptions{Hash: "sha2-512"}, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if p := want.Prefix(); p.Version != 1 || p.MhType != mh.SHA2_512 {
		t.Fatalf("add --hash sha2-512: got %v", p)
	}
	for _, name := range []string{"SHA2-512", "Sha2-512"} {
		got, err := addOne(t, n, node.AddOptions{Hash: name}, "hello")
		if err != nil || got != want {
			t.Fatalf("add --hash %s: got %v, %v, want %v", name, got, err, want)
		}
	}
	testutil.SetConfig(t, n, map[string]any{"Import.HashFunction": "SHA2-512"})
	got, err := addOne(t, n, node.AddOptions{}, "hello")
	if err != nil || got != want {
		t.Fatalf("add with Import.HashFunction SHA2-512: got %v, %v, want %v", got, err, want)
	}
	b, err := n.UnixFS().CidBuilder()
	if err != nil {
		t.Fatal(err)
	}
	if p := b.GetCodec(); p != cid.DagProtobuf {
		t.Fatalf("MFS builder codec %x", p)
	}
	c, err := b.Sum([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Prefix(); p.Version != 1 || p.MhType != mh.SHA2_512 {
		t.Fatalf("MFS builder with Import.HashFunction SHA2-512: got %v", p)
	}
}

func TestImport_HashName_Unknown(t *testing.T) {
	n := testutil.MustOpenNode(t)
	_, err := addOne(t, n, node.AddOptions{Hash: "NOPE"}, "x")
	if err == nil || err.Error() != `unrecognized hash function: "nope"` {
		t.Fatalf("add --hash NOPE: got %v", err)
	}
	testutil.SetConfig(t, n, map[string]any{"Import.HashFunction": "Nope"})
	for _, f := range []func() error{
		func() error { _, err := addOne(t, n, node.AddOptions{}, "x"); return err },
		func() error { _, err := n.UnixFS().CidBuilder(); return err },
	} {
		if err := f(); err == nil || err.Error() != `Import.HashFunction unrecognized: "Nope"` {
			t.Fatalf("Import.HashFunction Nope: got %v", err)
		}
	}
}

// add and MFS read the same Import section: the files commands build
// the same CID as add for the same settings.
func TestImport_AddAndMFS_SameSettings(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Import.CidVersion": 1, "Import.UnixFSHAMTDirectorySizeThreshold": "1KB"})
	b, err := n.UnixFS().CidBuilder()
	if err != nil {
		t.Fatal(err)
	}
	if b.GetCodec() != cid.DagProtobuf {
		t.Fatal("codec")
	}
	c, _ := b.Sum([]byte("x"))
	if c.Version() != 1 || c.Prefix().MhType != mh.SHA2_256 {
		t.Fatalf("MFS builder with Import.CidVersion 1: %v", c.Prefix())
	}
	// A size that is no size is refused when set, as Kubo does.
	err = n.ConfigFile().Update(func(doc map[string]any) error {
		return config.SetKey(doc, "Import.UnixFSHAMTDirectorySizeThreshold", "lots")
	})
	if err == nil || !strings.Contains(err.Error(), "failure to decode config") {
		t.Fatalf("bad threshold: got %v", err)
	}
	// A setting Kubo's types accept but cairn cannot use fails both the
	// same way.
	testutil.SetConfig(t, n, map[string]any{"Import.UnixFSHAMTDirectoryMaxFanout": 7})
	_, aerr := addOne(t, n, node.AddOptions{}, "x")
	_, merr := n.UnixFS().DirOptions(b)
	for _, err := range []error{aerr, merr} {
		if err == nil || !strings.HasPrefix(err.Error(), `HAMT fanout must be a power of 2`) {
			t.Fatalf("bad fanout: got %v", err)
		}
	}
}
