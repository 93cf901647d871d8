package commands_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

func keyGen(t *testing.T, n *node.Node, name string, opts map[string]string) *commands.KeyOutput {
	t.Helper()
	return blkCall(t, n, "key/gen", []string{name}, opts, nil).Values[0].(*commands.KeyOutput)
}

func keyNames(t *testing.T, n *node.Node) []string {
	t.Helper()
	var out []string
	for _, k := range blkCall(t, n, "key/ls", nil, nil, nil).Values[0].(*commands.KeyOutputList).Keys {
		out = append(out, k.Name)
	}
	return out
}

// keyFile is a one-part multipart body.
func keyFile(data []byte) files.Directory {
	return files.NewSliceDirectory([]files.DirEntry{files.FileEntry("key", files.NewBytesFile(data))})
}

func TestKey_GenListRenameRm(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a := keyGen(t, n, "alpha", nil)
	pid, err := peer.Decode(a.Id)
	if err != nil {
		t.Fatalf("id %q: %v", a.Id, err)
	}
	if !strings.HasPrefix(a.Id, "k51") { // base36 libp2p-key CIDv1 of an ed25519 key
		t.Errorf("default ipns-base: %s", a.Id)
	}
	if got := keyGen(t, n, "b", map[string]string{"ipns-base": "b58mh"}).Id; !strings.HasPrefix(got, "12D3KooW") {
		t.Errorf("b58mh: %s", got)
	}
	if got := keyGen(t, n, "r", map[string]string{"type": "rsa", "size": "2048", "ipns-base": "base32"}).Id; !strings.HasPrefix(got, "b") {
		t.Errorf("base32: %s", got)
	}
	for _, tc := range []struct {
		args []string
		opts map[string]string
		want string
	}{
		{[]string{"weak"}, map[string]string{"type": "rsa", "size": "1024"}, "rsa keys must be >= 2048 bits to be useful"},
		{[]string{"self"}, nil, "cannot create key with name 'self'"},
		{[]string{"alpha"}, nil, "key with name 'alpha' already exists"},
		{[]string{"x"}, map[string]string{"type": "dsa"}, "unrecognized key type: dsa"},
		{[]string{strings.Repeat("n", 10<<10)}, nil, "file name too long"},
	} {
		if msg := blkCallErr(t, n, "key/gen", tc.args, tc.opts, nil); !strings.Contains(msg, tc.want) {
			t.Errorf("gen %.20v %v: %q, want %q", tc.args, tc.opts, msg, tc.want)
		}
	}
	if got := strings.Join(keyNames(t, n), ","); got != "self,alpha,b,r" {
		t.Fatalf("ls: %s", got)
	}
	// Rename, with and without force.
	ro := blkCall(t, n, "key/rename", []string{"alpha", "beta"}, map[string]string{"ipns-base": "b58mh"}, nil).Values[0].(*commands.KeyRenameOutput)
	if ro.Was != "alpha" || ro.Now != "beta" || ro.Id != pid.String() || ro.Overwrite {
		t.Errorf("rename: %+v", ro)
	}
	if msg := blkCallErr(t, n, "key/rename", []string{"beta", "b"}, nil, nil); msg != "key by that name already exists, refusing to overwrite" {
		t.Errorf("rename onto existing: %q", msg)
	}
	ro = blkCall(t, n, "key/rename", []string{"beta", "b"}, map[string]string{"force": "true"}, nil).Values[0].(*commands.KeyRenameOutput)
	if !ro.Overwrite {
		t.Errorf("forced rename: %+v", ro)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"self", "x"}, "cannot rename key with name 'self'"},
		{[]string{"b", "self"}, "cannot overwrite key with name 'self'"},
		{[]string{"nope", "x"}, "no key named nope was found"},
	} {
		if msg := blkCallErr(t, n, "key/rename", tc.args, nil, nil); msg != tc.want {
			t.Errorf("rename %v: %q, want %q", tc.args, msg, tc.want)
		}
	}
	// Remove: never self, unknown names fail.
	if msg := blkCallErr(t, n, "key/rm", []string{"self"}, nil, nil); msg != "cannot remove key with name 'self'" {
		t.Errorf("rm self: %q", msg)
	}
	if msg := blkCallErr(t, n, "key/rm", []string{"nope"}, nil, nil); msg != "no key named nope was found" {
		t.Errorf("rm nope: %q", msg)
	}
	rm := blkCall(t, n, "key/rm", []string{"b", "r"}, nil, nil).Values[0].(*commands.KeyOutputList)
	if len(rm.Keys) != 2 || rm.Keys[0].Name != "b" || rm.Keys[1].Name != "r" {
		t.Errorf("rm: %+v", rm)
	}
	if got := strings.Join(keyNames(t, n), ","); got != "self" {
		t.Errorf("ls after rm: %s", got)
	}
}

func TestKey_AtRest(t *testing.T) {
	n := testutil.MustOpenNode(t)
	keyGen(t, n, "secret", nil)
	dir := filepath.Join(n.Repo, node.KeystoreDir)
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("keystore dir: %v %v", st.Mode(), err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d key files", len(ents))
	}
	fi, _ := ents[0].Info()
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("key file mode %v: readable by others", fi.Mode())
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ents[0].Name()))
	// config show never prints it.
	srv := testutil.StartServer(t, n)
	show := readAll(t, rpcPost(t, srv, "config/show", nil, nil, "").Body)
	for _, enc := range []string{base64.StdEncoding.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw[4:36])} {
		if bytes.Contains(show, []byte(enc)) {
			t.Errorf("config show prints the key")
		}
	}
	// export is CLI-only: 404 over HTTP, as key/rotate.
	for _, p := range []string{"key/export", "key/rotate"} {
		resp := rpcPost(t, srv, p, url.Values{"arg": {"secret"}}, nil, "")
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s over HTTP: %d", p, resp.StatusCode)
		}
	}
	// A damaged key file is reported, and left out of key/ls.
	os.Chmod(filepath.Join(dir, ents[0].Name()), 0o600)
	if err := os.WriteFile(filepath.Join(dir, ents[0].Name()), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	errs := node.CheckKeystore(n.Repo)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `key "secret" is damaged`) {
		t.Errorf("CheckKeystore: %v", errs)
	}
	if got := strings.Join(keyNames(t, n), ","); got != "self" {
		t.Errorf("ls with a damaged key: %s", got)
	}
}

func TestKey_ImportExport(t *testing.T) {
	n := testutil.MustOpenNode(t)
	gen := keyGen(t, n, "orig", map[string]string{"ipns-base": "b58mh"})
	for _, format := range []string{"libp2p-protobuf-cleartext", "pem-pkcs8-cleartext"} {
		// Export runs without the node (NoRepo): it reads the keystore directory.
		res, err := rpc.Call(t.Context(), nil, commands.DefaultTable, "key/export", []string{"orig"}, map[string]string{"config": n.Repo, "format": format}, nil)
		if err != nil {
			t.Fatalf("export %s: %v", format, err)
		}
		data := res.Bytes
		if format == "pem-pkcs8-cleartext" && !bytes.HasPrefix(data, []byte("-----BEGIN PRIVATE KEY-----")) {
			t.Fatalf("pem: %q", data)
		}
		name := "imp-" + format
		got := blkCall(t, n, "key/import", []string{name}, map[string]string{"format": format, "ipns-base": "b58mh"}, keyFile(data)).Values[0].(*commands.KeyOutput)
		if got.Id != gen.Id || got.Name != name {
			t.Errorf("import %s: %+v, want id %s", format, got, gen.Id)
		}
	}
	if _, err := rpc.Call(t.Context(), nil, commands.DefaultTable, "key/export", []string{"self"}, map[string]string{"config": n.Repo}, nil); err == nil || err.Error() != "cannot export key with name 'self'" {
		t.Errorf("export self: %v", err)
	}
	if _, err := rpc.Call(t.Context(), nil, commands.DefaultTable, "key/export", []string{"none"}, map[string]string{"config": n.Repo}, nil); err == nil || err.Error() != "key with name 'none' doesn't exist" {
		t.Errorf("export none: %v", err)
	}
	// Bad input: clear errors, nothing stored.
	secp, _, _ := crypto.GenerateSecp256k1Key(rand.Reader)
	secpRaw, _ := crypto.MarshalPrivateKey(secp)
	ecdsa, _, _ := crypto.GenerateECDSAKeyPair(rand.Reader)
	ecdsaRaw, _ := crypto.MarshalPrivateKey(ecdsa)
	before := keyNames(t, n)
	for _, tc := range []struct {
		data []byte
		opts map[string]string
		want string
	}{
		{[]byte("garbage"), nil, "unable to unmarshall format=libp2p-protobuf-cleartext"},
		{bytes.Repeat([]byte{0x08}, 100<<10), nil, "key file larger than"},
		{[]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), nil, "unexpected PEM block for format=libp2p-protobuf-cleartext: try again with format=pem-pkcs8-cleartext"},
		{[]byte("garbage"), map[string]string{"format": "pem-pkcs8-cleartext"}, "PEM block not found in input data"},
		{[]byte("-----BEGIN RSA KEY-----\nAAAA\n-----END RSA KEY-----\n"), map[string]string{"format": "pem-pkcs8-cleartext"}, "expected PRIVATE KEY type in PEM block but got: RSA KEY"},
		{[]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), map[string]string{"format": "pem-pkcs8-cleartext"}, "parsing PKCS8 format"},
		{[]byte("x"), map[string]string{"format": "jwk"}, "unrecognized import format: jwk"},
		{ecdsaRaw, nil, "key type *crypto.ECDSAPrivateKey is not allowed to be imported, only RSA, Ed25519, or Secp256k1; use flag --allow-any-key-type"},
	} {
		if msg := blkCallErr(t, n, "key/import", []string{"bad"}, tc.opts, keyFile(tc.data)); !strings.Contains(msg, tc.want) {
			t.Errorf("import %.20q %v: %q, want %q", tc.data, tc.opts, msg, tc.want)
		}
	}
	if got := keyNames(t, n); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("bad imports stored keys: %v", got)
	}
	if msg := blkCallErr(t, n, "key/import", []string{"self"}, nil, keyFile(secpRaw)); msg != "cannot import key with name 'self'" {
		t.Errorf("import self: %q", msg)
	}
	if msg := blkCallErr(t, n, "key/import", []string{"orig"}, map[string]string{"allow-any-key-type": "true"}, keyFile(secpRaw)); msg != "key with name 'orig' already exists" {
		t.Errorf("import existing: %q", msg)
	}
	blkCall(t, n, "key/import", []string{"secp"}, map[string]string{"allow-any-key-type": "true"}, keyFile(secpRaw))
}

func TestKey_Text(t *testing.T) {
	n := testutil.MustOpenNode(t)
	k := keyGen(t, n, "tab\tname", nil)
	srv := testutil.StartServer(t, n)
	body := string(readAll(t, rpcPost(t, srv, "key/ls", url.Values{"l": {"true"}, "encoding": {"text"}}, nil, "").Body))
	self := peer.ToCid(n.PeerID)
	selfID, _ := self.StringOfBase('k')
	if !strings.Contains(body, selfID+" self") || !strings.Contains(body, k.Id+` tab\tname`) {
		t.Errorf("key ls -l text:\n%s", body)
	}
}

func TestKey_Rotate(t *testing.T) {
	n := testutil.MustOpenNode(t)
	old := n.PeerID
	if msg := blkCallErr(t, n, "key/rotate", nil, nil, nil); msg != "keystore name for backing up old key must be provided" {
		t.Errorf("rotate without oldkey: %q", msg)
	}
	blkCall(t, n, "key/rotate", nil, map[string]string{"oldkey": "previous"}, nil)
	if n.PeerID == old {
		t.Fatal("identity unchanged")
	}
	keys := blkCall(t, n, "key/ls", nil, map[string]string{"ipns-base": "b58mh"}, nil).Values[0].(*commands.KeyOutputList).Keys
	if len(keys) != 2 || keys[0].Id != n.PeerID.String() || keys[1].Name != "previous" || keys[1].Id != old.String() {
		t.Errorf("keys after rotate: %+v", keys)
	}
	doc, err := config.ReadDoc(n.Repo)
	if err != nil {
		t.Fatal(err)
	}
	if id := doc["Identity"].(map[string]any)["PeerID"]; id != n.PeerID.String() {
		t.Errorf("config PeerID %v", id)
	}
}

func TestKey_SignVerify(t *testing.T) {
	n := testutil.MustOpenNode(t)
	k := keyGen(t, n, "signer", nil)
	data := keyFile([]byte("I own this name"))
	sig := blkCall(t, n, "key/sign", nil, map[string]string{"key": "signer"}, data).Values[0].(*commands.KeySignOutput)
	if sig.Key.Name != "signer" || sig.Key.Id != k.Id || !strings.HasPrefix(sig.Signature, "u") {
		t.Fatalf("sign: %+v", sig)
	}
	for _, who := range []string{"signer", k.Id} {
		v := blkCall(t, n, "key/verify", nil, map[string]string{"key": who, "signature": sig.Signature}, keyFile([]byte("I own this name"))).Values[0].(*commands.KeyVerifyOutput)
		if !v.SignatureValid || v.Key.Id != k.Id {
			t.Errorf("verify with %s: %+v", who, v)
		}
	}
	v := blkCall(t, n, "key/verify", nil, map[string]string{"key": "signer", "signature": sig.Signature}, keyFile([]byte("I own that name"))).Values[0].(*commands.KeyVerifyOutput)
	if v.SignatureValid {
		t.Error("tampered data verified")
	}
	self := blkCall(t, n, "key/sign", nil, nil, keyFile([]byte("x"))).Values[0].(*commands.KeySignOutput)
	v = blkCall(t, n, "key/verify", nil, map[string]string{"signature": self.Signature}, keyFile([]byte("x"))).Values[0].(*commands.KeyVerifyOutput)
	if self.Key.Name != "self" || !v.SignatureValid || v.Key.Name != "self" {
		t.Errorf("self: %+v %+v", self, v)
	}
	if msg := blkCallErr(t, n, "key/sign", nil, map[string]string{"key": "nope"}, keyFile([]byte("x"))); msg != "no key by the given name was found" {
		t.Errorf("sign with unknown key: %q", msg)
	}
	if msg := blkCallErr(t, n, "key/verify", nil, map[string]string{"key": "nope", "signature": sig.Signature}, keyFile([]byte("x"))); !strings.Contains(msg, "is not a known key, an IPNS Name, or a valid PeerID") {
		t.Errorf("verify with unknown key: %q", msg)
	}
}
