package commands_test

import (
	"encoding/hex"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// A secp256k1 key written by OpenSSL 3.0 (`openssl ecparam -name secp256k1
// -genkey -noout | openssl pkcs8 -topk8 -nocrypt`), a throwaway, and the
// uncompressed public key OpenSSL gives for it (`openssl ec -pubout
// -conv_form uncompressed`).
const (
	opensslSecpPEM = `-----BEGIN PRIVATE KEY-----
MIGEAgEAMBAGByqGSM49AgEGBSuBBAAKBG0wawIBAQQg06Aye8E81Bx9EvFcEYG2
ETqpYtv1Hs2ghjEHXiePZKWhRANCAASeAB6YqwOBTpXGeAcBgAAqngNrcU/HlWDS
mJF88cTViMhs1cbX8YaNdNjUEw5iiHDsQG29KDSoLx3KMakiRszQ
-----END PRIVATE KEY-----
`
	opensslSecpPub = "049e001e98ab03814e95c678070180002a9e036b714fc79560d298917cf1c4d588c86cd5c6d7f1868d74d8d4130e628870ec406dbd2834a82f1dca31a92246ccd0"
)

// Ensure secp256k1 keys are generated, and move in and out as PEM PKCS #8
// in OpenSSL's own shape (Kubo 0.43); ed25519 and secp256k1 take no
// size but 256.
func TestKey_Secp256k1(t *testing.T) {
	n := testutil.MustOpenNode(t)
	pemOpts := map[string]string{"format": "pem-pkcs8-cleartext", "ipns-base": "b58mh"}
	imp := blkCall(t, n, "key/import", []string{"openssl"}, pemOpts, keyFile([]byte(opensslSecpPEM))).Values[0].(*commands.KeyOutput)
	raw, _ := hex.DecodeString(opensslSecpPub)
	pub, err := crypto.UnmarshalSecp256k1PublicKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := peer.IDFromPublicKey(pub)
	if imp.Id != want.String() {
		t.Fatalf("imported OpenSSL's key as %s, want the ID of its public key %s", imp.Id, want)
	}
	res, err := rpc.Call(t.Context(), nil, commands.DefaultTable, "key/export", []string{"openssl"}, map[string]string{"config": n.Repo, "format": "pem-pkcs8-cleartext"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Bytes) != opensslSecpPEM {
		t.Errorf("exported PEM differs from OpenSSL's:\n%s", res.Bytes)
	}

	gen := keyGen(t, n, "secp", map[string]string{"type": "secp256k1", "ipns-base": "b58mh"})
	res, err = rpc.Call(t.Context(), nil, commands.DefaultTable, "key/export", []string{"secp"}, map[string]string{"config": n.Repo, "format": "pem-pkcs8-cleartext"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	back := blkCall(t, n, "key/import", []string{"secp-again"}, pemOpts, keyFile(res.Bytes)).Values[0].(*commands.KeyOutput)
	if back.Id != gen.Id {
		t.Errorf("round trip of a generated key: %s, want %s", back.Id, gen.Id)
	}
	keyGen(t, n, "secp-256", map[string]string{"type": "secp256k1", "size": "256"})
	for _, tc := range []struct{ typ, size, want string }{
		{"secp256k1", "512", "invalid key size 512: secp256k1 keys are always 256 bits"},
		{"ed25519", "2048", "invalid key size 2048: ed25519 keys are always 256 bits"},
		{"ed25519", "0", "invalid key size 0: ed25519 keys are always 256 bits"},
		{"dsa", "", "unrecognized key type: dsa"},
	} {
		opts := map[string]string{"type": tc.typ}
		if tc.size != "" {
			opts["size"] = tc.size
		}
		if msg := blkCallErr(t, n, "key/gen", []string{"bad"}, opts, nil); msg != tc.want {
			t.Errorf("key gen %v: %q, want %q", opts, msg, tc.want)
		}
	}
	// A PEM whose scalar is out of range, or whose public key is another's.
	for _, tc := range []struct{ name, pem, want string }{
		{"zero scalar", "-----BEGIN PRIVATE KEY-----\nMD4CAQAwEAYHKoZIzj0CAQYFK4EEAAoEJzAlAgEBBCAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n-----END PRIVATE KEY-----\n",
			"parsing PKCS8 format: EC private key not in the valid range for secp256k1"},
		{"OpenSSL's public key, another scalar", "-----BEGIN PRIVATE KEY-----\nMIGEAgEAMBAGByqGSM49AgEGBSuBBAAKBG0wawIBAQQg06Aye8E81Bx9EvFcEYG2\nETqpYtv1Hs2ghjEHXiePZKShRANCAASeAB6YqwOBTpXGeAcBgAAqngNrcU/HlWDS\nmJF88cTViMhs1cbX8YaNdNjUEw5iiHDsQG29KDSoLx3KMakiRszQ\n-----END PRIVATE KEY-----\n",
			"parsing PKCS8 format: EC public key does not match the private key"},
	} {
		if msg := blkCallErr(t, n, "key/import", []string{"bad"}, pemOpts, keyFile([]byte(tc.pem))); msg != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, msg, tc.want)
		}
	}
}
