package mount_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/mount"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

// addTree adds a directory {a.txt, big.bin, sub/b.txt, link -> a.txt}
// and returns its CID and big.bin's bytes.
func addTree(t *testing.T, n *node.Node) (cid.Cid, []byte) {
	t.Helper()
	big := make([]byte, 600<<10) // several chunks
	rand.Read(big)
	dir := files.NewMapDirectory(map[string]files.Node{"d": files.NewMapDirectory(map[string]files.Node{
		"a.txt":   files.NewBytesFile([]byte("hello\n")),
		"big.bin": files.NewBytesFile(big),
		"sub":     files.NewMapDirectory(map[string]files.Node{"b.txt": files.NewBytesFile([]byte("bee"))}),
		"link":    files.NewLinkFile("a.txt", nil),
	})})
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil, map[string]string{"recursive": "true"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	last := res.Values[len(res.Values)-1].(*node.AddEvent)
	return cid.MustParse(last.Hash), big
}

// Ensure the file system's logic (no FUSE): /ipfs names, directory
// entries, lookups, file bytes at offsets, symlinks, and the errors.
func TestFS_IPFS_Entries_Read(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root, big := addTree(t, n)
	fs := mount.NewFS(n, "/mnt/ipfs", nil)
	ctx := context.Background()

	d, err := fs.IPFS(ctx, root.String())
	if err != nil || d.Kind != mount.Dir {
		t.Fatalf("root: %+v %v", d, err)
	}
	ents, err := fs.List(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]mount.Entry{}
	for _, e := range ents {
		got[e.Name] = e
	}
	if len(got) != 4 || got["a.txt"].Kind != mount.File || got["a.txt"].Size != 6 ||
		got["big.bin"].Size != uint64(len(big)) || got["sub"].Kind != mount.Dir ||
		got["link"].Kind != mount.Symlink || got["link"].Target != "a.txt" {
		t.Fatalf("entries %+v", got)
	}
	f, err := fs.Lookup(ctx, d, "big.bin")
	if err != nil || f.Kind != mount.File || f.Size != uint64(len(big)) {
		t.Fatalf("lookup big.bin: %+v %v", f, err)
	}
	for _, tc := range []struct{ off, n int }{{0, 4096}, {262144 - 100, 300}, {len(big) - 10, 4096}, {len(big), 10}} {
		buf := make([]byte, tc.n)
		got, err := fs.Read(ctx, f, int64(tc.off), buf)
		want := big[min(tc.off, len(big)):min(tc.off+tc.n, len(big))]
		if err != nil || string(buf[:got]) != string(want) {
			t.Fatalf("read %d+%d: %d bytes, %v", tc.off, tc.n, got, err)
		}
	}
	sub, err := fs.Lookup(ctx, d, "sub")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.Lookup(ctx, sub, "b.txt")
	buf := make([]byte, 10)
	if k, rerr := fs.Read(ctx, b, 0, buf); err != nil || rerr != nil || string(buf[:k]) != "bee" {
		t.Fatalf("sub/b.txt: %q %v %v", buf[:k], err, rerr)
	}
	if l, err := fs.Lookup(ctx, d, "link"); err != nil || l.Kind != mount.Symlink || l.Target != "a.txt" {
		t.Fatalf("link: %+v %v", l, err)
	}
	for _, name := range []string{"nope", "", "sub/b.txt"} {
		if _, err := fs.Lookup(ctx, d, name); !errors.Is(err, mount.ErrNotExist) {
			t.Errorf("lookup %q: %v, want ErrNotExist", name, err)
		}
	}
	if _, err := fs.IPFS(ctx, "not-a-cid"); !errors.Is(err, mount.ErrNotExist) {
		t.Errorf("/ipfs/not-a-cid: %v", err)
	}
}

// Ensure /ipns names answer ErrNoIPNS without a resolver, and are
// symlinks into the /ipfs mount with one.
func TestFS_IPNS_Resolver(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	if _, err := mount.NewFS(n, "/mnt/ipfs", nil).IPNS(ctx, "k51name"); !errors.Is(err, mount.ErrNoIPNS) {
		t.Fatalf("no resolver: %v", err)
	}
	fs := mount.NewFS(n, "/mnt/ipfs", func(_ context.Context, name string) (string, error) {
		if name == "k51name" {
			return "/ipfs/bafyroot/docs", nil
		}
		return "", errors.New("could not resolve name")
	})
	e, err := fs.IPNS(ctx, "k51name")
	if err != nil || e.Kind != mount.Symlink || e.Target != "/mnt/ipfs/bafyroot/docs" {
		t.Fatalf("%+v %v", e, err)
	}
	if _, err := fs.IPNS(ctx, "other"); err == nil {
		t.Fatal("an unresolvable name resolved")
	}
}
