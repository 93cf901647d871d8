package tests

import (
	"bytes"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	shell "github.com/ipfs/go-ipfs-api"
)

// Ensure go-ipfs-api, a real Kubo client, works against the daemon for
// add, cat, ls, refs, block put/get/stat, id and version.
func TestIpfsAPI_Client(t *testing.T) {
	d := startDaemon(t, "test")
	sh := shell.NewShell(strings.TrimPrefix(d.url, "http://"))
	if !sh.IsUp() {
		t.Fatal("shell says the daemon is down")
	}

	v, _, err := sh.Version()
	if err != nil || v == "" {
		t.Fatalf("version: %q %v", v, err)
	}

	c, err := sh.Add(strings.NewReader("hello world\n"))
	if err != nil || c != "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" {
		t.Fatalf("add: %q %v", c, err)
	}
	rc, err := sh.Cat(c)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "hello world\n" {
		t.Fatalf("cat: %q", got)
	}

	// A directory with a file bigger than one chunk.
	dir := t.TempDir()
	big := make([]byte, 600<<10)
	rand.Read(big)
	os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644)
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte("small\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "x"), []byte("x"), 0o644)
	root, err := sh.AddDir(dir)
	if err != nil {
		t.Fatalf("add dir: %v", err)
	}
	links, err := sh.List(root)
	if err != nil {
		t.Fatalf("ls: %v", err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "big.bin,small.txt,sub" {
		t.Fatalf("ls names %v", names)
	}
	rc, err = sh.Cat(root + "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, big) {
		t.Fatalf("cat big.bin: %d bytes differ", len(got))
	}

	refs, err := sh.Refs(root, true)
	if err != nil {
		t.Fatalf("refs: %v", err)
	}
	n := 0
	for range refs {
		n++
	}
	// 3 entries + 1 file in sub + 3 chunks of big.bin.
	if n != 7 {
		t.Fatalf("refs -r: got %d refs, want 7", n)
	}

	key, err := sh.BlockPut([]byte("raw block"), "raw", "sha2-256", -1)
	if err != nil {
		t.Fatalf("block put: %v", err)
	}
	data, err := sh.BlockGet(key)
	if err != nil || string(data) != "raw block" {
		t.Fatalf("block get: %q %v", data, err)
	}
	k2, size, err := sh.BlockStat(key)
	if err != nil || k2 != key || size != 9 {
		t.Fatalf("block stat: %q %d %v", k2, size, err)
	}

	id, err := sh.ID()
	if err != nil || !strings.HasPrefix(id.ID, "12D3KooW") || id.PublicKey == "" {
		t.Fatalf("id: %+v %v", id, err)
	}

	if _, err := sh.Cat("notacid"); err == nil || !strings.Contains(err.Error(), "invalid path") {
		t.Fatalf("cat notacid: %v", err)
	}
}
