package node_test

import (
	"os"
	"path/filepath"
	"testing"

	"cairn/node"
)

// The api file names the running daemon. It is replaced atomically but
// not synced, so a power cut may leave it empty: that reads as no daemon.
func TestAPIFile_EmptyReadsAsNoDaemon(t *testing.T) {
	dir := t.TempDir()
	if a, err := node.ReadAPIFile(dir); a != "" || err != nil {
		t.Fatalf("no file: %q, %v", a, err)
	}
	const addr = "/ip4/127.0.0.1/tcp/5001"
	if err := node.WriteAPIFile(dir, addr); err != nil {
		t.Fatal(err)
	}
	if a, err := node.ReadAPIFile(dir); a != addr || err != nil {
		t.Fatalf("read %q, %v; want %q", a, err, addr)
	}
	if err := os.WriteFile(filepath.Join(dir, node.APIFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if a, err := node.ReadAPIFile(dir); a != "" || err != nil {
		t.Fatalf("empty file: %q, %v; want no daemon", a, err)
	}
	if err := node.RemoveAPIFile(dir); err != nil {
		t.Fatal(err)
	}
	if a, err := node.ReadAPIFile(dir); a != "" || err != nil {
		t.Fatalf("after remove: %q, %v", a, err)
	}
}
