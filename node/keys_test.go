package node_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"

	pb "github.com/libp2p/go-libp2p/core/crypto/pb"
)

// A damaged key file is reported when the node starts, naming the key;
// the node still starts (its identity is in the config).
func TestKeys_DamagedReportedAtStart(t *testing.T) {
	dir := testutil.MustInitRepo(t)
	n, err := node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Keys().Generate("good", "ed25519", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Keys().Generate("bad", "ed25519", -1); err != nil {
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

// init -a and key rotate take secp256k1, and ed25519 and secp256k1 take
// no size but 256 (Kubo 0.43).
func TestNewIdentityOf_TypesAndSizes(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		bits int
		kind pb.KeyType
		err  string
	}{
		{"secp256k1", -1, pb.KeyType_Secp256k1, ""},
		{"secp256k1", 256, pb.KeyType_Secp256k1, ""},
		{"ed25519", 0, pb.KeyType_Ed25519, ""},
		{"", -1, pb.KeyType_Ed25519, ""},
		{"secp256k1", 512, 0, "invalid key size 512: secp256k1 keys are always 256 bits"},
		{"ed25519", 2048, 0, "invalid key size 2048: ed25519 keys are always 256 bits"},
		{"dsa", -1, 0, "unrecognized key type: dsa"},
	} {
		id, err := node.NewIdentityOf(tc.typ, tc.bits)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %d: %v, want %q", tc.typ, tc.bits, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %d: %v", tc.typ, tc.bits, err)
		}
		pid, sk, err := id.Keys()
		if err != nil || sk.Type() != tc.kind || pid.String() != id.PeerID {
			t.Errorf("%s %d: key type %v, peer %s (config says %s), %v", tc.typ, tc.bits, sk.Type(), pid, id.PeerID, err)
		}
	}
}
