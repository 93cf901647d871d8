package mount_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"cairn/internal/testutil"
	"cairn/mount"
)

// fuseOrSkip skips where this machine cannot mount FUSE, saying why.
func fuseOrSkip(t *testing.T) {
	t.Helper()
	if err := mount.Check("Mounts.IPFS", t.TempDir()); err != nil {
		t.Skipf("SKIPPED: %v", err)
	}
}

// mountDirs makes two empty mount points.
func mountDirs(t *testing.T) (ipfs, ipns string) {
	t.Helper()
	ipfs, ipns = filepath.Join(t.TempDir(), "ipfs"), filepath.Join(t.TempDir(), "ipns")
	for _, d := range []string{ipfs, ipns} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ipfs, ipns
}

// Ensure real FUSE mounts of /ipfs and /ipns: a directory lists, files
// read whole and at offsets, a symlink reads, the tree is read-only, an
// /ipns name answers ENOTSUP without a resolver, and Close unmounts.
func TestMount_FUSE_ReadOnlyIPFSAndIPNS(t *testing.T) {
	fuseOrSkip(t)
	n := testutil.MustOpenNode(t)
	root, big := addTree(t, n)
	ipfsDir, ipnsDir := mountDirs(t)
	m, err := mount.Start(n, mount.Options{IPFS: ipfsDir, IPNS: ipnsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d := filepath.Join(ipfsDir, root.String())
	ents, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "a.txt,big.bin,link,sub" {
		t.Fatalf("ls: %v", names)
	}
	if b, err := os.ReadFile(filepath.Join(d, "big.bin")); err != nil || string(b) != string(big) {
		t.Fatalf("big.bin: %d bytes, %v", len(b), err)
	}
	if b, err := os.ReadFile(filepath.Join(d, "sub", "b.txt")); err != nil || string(b) != "bee" {
		t.Fatalf("sub/b.txt: %q %v", b, err)
	}
	f, err := os.Open(filepath.Join(d, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	if k, err := f.ReadAt(buf, 300000); err != nil || string(buf[:k]) != string(big[300000:301000]) {
		t.Fatalf("read at 300000: %d %v", k, err)
	}
	f.Close()
	if target, err := os.Readlink(filepath.Join(d, "link")); err != nil || target != "a.txt" {
		t.Fatalf("readlink: %q %v", target, err)
	}
	if b, err := os.ReadFile(filepath.Join(d, "link")); err != nil || string(b) != "hello\n" {
		t.Fatalf("through the link: %q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(d, "a.txt")); err != nil || fi.Size() != 6 || fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("stat a.txt: %v %v", fi, err)
	}
	if err := os.WriteFile(filepath.Join(d, "a.txt"), []byte("x"), 0o644); err == nil {
		t.Fatal("wrote into /ipfs")
	}
	if _, err := os.Stat(filepath.Join(ipfsDir, "not-a-cid")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("/ipfs/not-a-cid: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ipnsDir, "k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8")); !errors.Is(err, syscall.ENOTSUP) {
		t.Fatalf("/ipns name without a resolver: %v, want ENOTSUP", err)
	}
	if err := mount.Check("Mounts.IPFS", ipfsDir); err == nil || !strings.Contains(err.Error(), "mount point is busy") {
		t.Fatalf("check of a mounted dir: %v", err)
	}
	if _, err := mount.Start(n, mount.Options{IPFS: ipfsDir}); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("second mount at the same place: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mount.Check("Mounts.IPFS", ipfsDir); err != nil {
		t.Fatalf("still mounted after Close: %v", err)
	}
}

// Ensure /ipns names are symlinks into the /ipfs mount once a resolver is
// given.
func TestMount_FUSE_IPNSResolver(t *testing.T) {
	fuseOrSkip(t)
	n := testutil.MustOpenNode(t)
	root, _ := addTree(t, n)
	ipfsDir, ipnsDir := mountDirs(t)
	m, err := mount.Start(n, mount.Options{IPFS: ipfsDir, IPNS: ipnsDir, Resolver: func(_ context.Context, name string) (string, error) {
		if name == "site" {
			return "/ipfs/" + root.String() + "/sub", nil
		}
		return "", errors.New("not found")
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if b, err := os.ReadFile(filepath.Join(ipnsDir, "site", "b.txt")); err != nil || string(b) != "bee" {
		t.Fatalf("/ipns/site/b.txt: %q %v", b, err)
	}
}

// Ensure a mount point that is empty, missing or not a directory gets
// Kubo 0.42's errors.
func TestCheck_MountPointErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct{ dir, want string }{
		{"", `Mounts.IPNS path cannot be empty`},
		{missing, `Mounts.IPNS path ("` + missing + `") does not exist: stat ` + missing + `: no such file or directory`},
		{file, `Mounts.IPNS path ("` + file + `") is not a directory`},
	} {
		if err := mount.Check("Mounts.IPNS", tc.dir); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.dir, err, tc.want)
		}
	}
}
