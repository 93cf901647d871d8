package node_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"
)

// A damaged key file is reported when the node starts, naming the key;
// the node still starts (its identity is in the config).
func TestKeys_DamagedReportedAtStart(t *testing.T) {
	dir := testutil.MustInitRepo(t)
	n, err := node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Keys().Generate("good", "ed25519", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Keys().Generate("bad", "ed25519", 0); err != nil {
		t.Fatal(err)
	}
	n.Close()
	ks := filepath.Join(dir, node.KeystoreDir)
	bad := filepath.Join(ks, "key_mjqwi") // base32("bad")
	if err := os.Chmod(bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte{0x08, 0x01, 0x12, 0x03, 1, 2, 3}, 0o600); err != nil {
		t.Fatal(err)
	}
	var logged []string
	n, err = node.New(dir, &node.Options{Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if len(logged) != 1 || !strings.Contains(logged[0], `key "bad" is damaged`) || strings.Contains(logged[0], "good") {
		t.Errorf("start-up report: %q", logged)
	}
	keys, err := n.Keys().List()
	if err != nil || len(keys) != 2 || keys[1].Name != "good" {
		t.Errorf("ListKeys: %v %v", keys, err)
	}
}
