// key.go: the "key" family: gen, ls (and the deprecated list), rename, rm,
// import, sign, verify, and the CLI-only export and rotate (404 over HTTP, as Kubo), as
// Kubo's core/commands/keystore.go. The keys themselves are node/keys.go.

package commands

import (
	"bytes"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/ipns"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
)

// KeyOutput is one key: its name and its ID in the requested base.
type KeyOutput struct {
	Name string
	Id   string //nolint:revive // Kubo's field name
}

// KeyOutputList is the output of key/ls and key/rm.
type KeyOutputList struct {
	Keys []KeyOutput
}

// KeyRenameOutput is the output of key/rename.
type KeyRenameOutput struct {
	Was       string
	Now       string
	Id        string //nolint:revive // Kubo's field name
	Overwrite bool
}

// Key formats of import and export (Kubo's names).
const (
	keyFormatPEM    = "pem-pkcs8-cleartext"
	keyFormatLibp2p = "libp2p-protobuf-cleartext"
)

// ipnsBaseOption is Kubo's ipns-base: how key IDs and IPNS names print.
var ipnsBaseOption = rpc.Option{Names: []string{"ipns-base"}, Type: rpc.String, Default: "base36",
	Help: "Encoding used for keys: Can either be a multibase encoded CID or a base58btc encoded multihash. Takes {b58mh|base36|k|base32|b...}."}

// keyEncoder formats peer IDs: b58mh (or v0) as base58 multihashes, any
// multibase name or prefix as a libp2p-key CIDv1.
type keyEncoder struct {
	base *mbase.Encoder // nil: base58 multihash
}

func keyEncoderOf(r *rpc.Request) (keyEncoder, error) {
	label := r.String("ipns-base")
	switch label {
	case "b58mh", "v0":
		return keyEncoder{}, nil
	}
	enc, err := mbase.EncoderByName(label)
	if err != nil {
		return keyEncoder{}, err
	}
	return keyEncoder{base: &enc}, nil
}

// FormatID renders id.
func (e keyEncoder) FormatID(id peer.ID) string {
	if e.base == nil {
		return id.String()
	}
	s, err := peer.ToCid(id).StringOfBase(e.base.Encoding())
	if err != nil { // every multibase can encode a CID's bytes
		return id.String()
	}
	return s
}

var keyTypeOption = rpc.Option{Names: []string{"type", "t"}, Type: rpc.String, Default: "ed25519", Help: "type of the key to create: rsa, ed25519, secp256k1"}
var keySizeOption = rpc.Option{Names: []string{"size", "s"}, Type: rpc.Int, Help: "size of the key to generate"}

// keySize is --size, -1 when not given (the key type's own size).
func keySize(r *rpc.Request) int {
	if !r.IsSet("size") {
		return -1
	}
	return int(r.Int("size"))
}

var keyListCmd = &rpc.Command{
	Path:     "key/ls",
	Synopsis: "List all local keypairs.",
	Options:  []rpc.Option{{Names: []string{"l"}, Type: rpc.Bool, Help: "Show extra information about keys."}, ipnsBaseOption},
	Output:   rpc.OutSingle,
	Run:      runKeyList,
	Type:     func() any { return &KeyOutputList{} },
	Text:     keyListText,
}

var keyCommands = []*rpc.Command{{
	Path:     "key/gen",
	Synopsis: "Create a new keypair",
	Help: `'cairn key gen' generates a new keypair for usage with IPNS and 'cairn name
publish'.

  > cairn key gen --type=rsa --size=2048 mykey
  > cairn name publish --key=mykey QmSomeHash

RSA keys must have at least 2048 bits. Keys are stored in the repo's
keystore directory, readable by the node's user only.`,
	Args:    []rpc.Arg{{Name: "name", Kind: rpc.ArgString, Required: true, Help: "name of key to create"}},
	Options: []rpc.Option{keyTypeOption, keySizeOption, ipnsBaseOption},
	Output:  rpc.OutSingle,
	Run:     runKeyGen,
	Type:    func() any { return &KeyOutput{} },
	Text:    keyIDText,
},
	keyListCmd,
	{
		Path:     "key/list",
		Synopsis: "Deprecated: use 'cairn key ls' instead.",
		Options:  keyListCmd.Options,
		Output:   rpc.OutSingle,
		Run:      runKeyList,
		Type:     keyListCmd.Type,
		Text:     keyListText,
	}, {
		Path:     "key/rename",
		Synopsis: "Rename a keypair.",
		Args: []rpc.Arg{
			{Name: "name", Kind: rpc.ArgString, Required: true, Help: "name of key to rename"},
			{Name: "newName", Kind: rpc.ArgString, Required: true, Help: "new name of the key"},
		},
		Options: []rpc.Option{{Names: []string{"force", "f"}, Type: rpc.Bool, Help: "Allow to overwrite an existing key."}, ipnsBaseOption},
		Output:  rpc.OutSingle,
		Run:     runKeyRename,
		Type:    func() any { return &KeyRenameOutput{} },
		Text:    keyRenameText,
	}, {
		Path:     "key/rm",
		Synopsis: "Remove a keypair.",
		Args:     []rpc.Arg{{Name: "name", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true, Help: "names of keys to remove"}},
		Options:  []rpc.Option{{Names: []string{"l"}, Type: rpc.Bool, Help: "Show extra information about keys."}, ipnsBaseOption},
		Output:   rpc.OutSingle,
		Run:      runKeyRm,
		Type:     func() any { return &KeyOutputList{} },
		Text:     keyListText,
	}, {
		Path:     "key/import",
		Synopsis: "Import a key and prints imported key id",
		Help: `Imports a key and stores it under the provided name.

By default, the key is assumed to be in 'libp2p-protobuf-cleartext' format,
however it is possible to import private keys wrapped in interoperable PEM PKCS8
by passing '--format=pem-pkcs8-cleartext'.

The PEM format allows for key generation outside of the IPFS node:

  $ openssl genpkey -algorithm ED25519 > ed25519.pem
  $ cairn key import test-openssl -f pem-pkcs8-cleartext ed25519.pem`,
		Args: []rpc.Arg{
			{Name: "name", Kind: rpc.ArgString, Required: true, Help: "name to associate with key in keychain"},
			{Name: "key", Kind: rpc.ArgFile, Required: true, Help: "key provided by generate or export"},
		},
		Options: []rpc.Option{
			ipnsBaseOption,
			{Names: []string{"format", "f"}, Type: rpc.String, Default: keyFormatLibp2p, Help: "The format of the private key to import, libp2p-protobuf-cleartext or pem-pkcs8-cleartext."},
			{Names: []string{"allow-any-key-type"}, Type: rpc.Bool, Default: false, Help: "Allow importing any key type."},
		},
		Output: rpc.OutSingle,
		Run:    runKeyImport,
		Type:   func() any { return &KeyOutput{} },
		Text:   keyIDText,
	}, {
		Path:     "key/export",
		Synopsis: "Export a keypair",
		Help: `Exports a named libp2p key to disk.

By default, the output will be stored at './<key-name>.key', but an alternate
path can be specified with '--output=<path>' or '-o=<path>'. The file is
created readable by its owner only (0600).

It is possible to export a private key to interoperable PEM PKCS8 format by explicitly
passing '--format=pem-pkcs8-cleartext'. The resulting PEM file can then be consumed
elsewhere. For example, using openssl to get a PEM with public key:

  $ cairn key export testkey --format=pem-pkcs8-cleartext -o privkey.pem
  $ openssl pkey -in privkey.pem -pubout > pubkey.pem

This command runs only in the CLI (never over the HTTP RPC); it reads the
keystore directly, so it works while the daemon runs.`,
		Args: []rpc.Arg{{Name: "name", Kind: rpc.ArgString, Required: true, Stdin: true, Help: "name of key to export"}},
		Options: []rpc.Option{
			{Names: []string{"output", "o"}, Type: rpc.String, Help: "The path where the output should be stored."},
			{Names: []string{"format", "f"}, Type: rpc.String, Default: keyFormatLibp2p, Help: "The format of the exported private key, libp2p-protobuf-cleartext or pem-pkcs8-cleartext."},
		},
		NoRemote:     true,
		NoRepo:       true,
		Output:       rpc.OutBytes,
		Run:          runKeyExport,
		ClientOutput: keyExportOutput,
	}, {
		Path:     "key/rotate",
		Synopsis: "Rotates the IPFS identity.",
		Help: `Generates a new identity and saves it to the config file.
Your existing identity key will be backed up in the Keystore.
The daemon must not be running when calling this command.`,
		Options: []rpc.Option{
			{Names: []string{"oldkey", "o"}, Type: rpc.String, Help: "Keystore name to use for backing up your existing identity"},
			keyTypeOption, keySizeOption,
		},
		NoRemote: true,
		Output:   rpc.OutNone,
		Run:      runKeyRotate,
	}, {
		Path:     "key/sign",
		Synopsis: "Generates a signature for the given data with a specified key. Useful for proving the key ownership.",
		Help: `Sign arbitrary bytes, such as to prove ownership of a Peer ID or an IPNS Name.
To avoid signature reuse, the signed payload is always prefixed with
"libp2p-key signed message:".`,
		Args: []rpc.Arg{{Name: "data", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "The data to sign."}},
		Options: []rpc.Option{
			{Names: []string{"key", "k"}, Type: rpc.String, Help: "The name of the key to use for signing."},
			ipnsBaseOption,
		},
		Output: rpc.OutSingle,
		Run:    runKeySign,
		Type:   func() any { return &KeySignOutput{} },
	}, {
		Path:     "key/verify",
		Synopsis: "Verify that the given data and signature match.",
		Help: `Verify if the given data and signatures match. To avoid the signature reuse,
the signed payload is always prefixed with "libp2p-key signed message:".`,
		Args: []rpc.Arg{{Name: "data", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "The data to verify against the given signature."}},
		Options: []rpc.Option{
			{Names: []string{"key", "k"}, Type: rpc.String, Help: "The name of the key to use for verifying."},
			{Names: []string{"signature", "s"}, Type: rpc.String, Help: "Multibase-encoded signature to verify."},
			ipnsBaseOption,
		},
		Output: rpc.OutSingle,
		Run:    runKeyVerify,
		Type:   func() any { return &KeyVerifyOutput{} },
	}}

// KeySignOutput is the output of key/sign.
type KeySignOutput struct {
	Key       KeyOutput
	Signature string
}

// KeyVerifyOutput is the output of key/verify.
type KeyVerifyOutput struct {
	Key            KeyOutput
	SignatureValid bool
}

// signedPrefix is prepended to what key/sign signs (Kubo's).
const signedPrefix = "libp2p-key signed message:"

// readDataArg reads key/sign's and key/verify's data (at most 1 MiB).
func readDataArg(r *rpc.Request) ([]byte, error) {
	_, f, err := firstFilePart(r)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil {
		return nil, err
	}
	if len(data) > 1<<20 {
		return nil, errors.New("data larger than 1 MiB")
	}
	return append([]byte(signedPrefix), data...), nil
}

func runKeySign(r *rpc.Request, e rpc.Emitter) error {
	enc, err := keyEncoderOf(r)
	if err != nil {
		return err
	}
	name := r.String("key")
	if name == "" {
		name = node.SelfKey
	}
	data, err := readDataArg(r)
	if err != nil {
		return err
	}
	sk, err := r.Node.Keys().PrivateKey(name)
	if err != nil {
		return err
	}
	id, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return err
	}
	sig, err := sk.Sign(data)
	if err != nil {
		return err
	}
	s, err := mbase.Encode(mbase.Base64url, sig)
	if err != nil {
		return err
	}
	return e.Emit(&KeySignOutput{Key: KeyOutput{Name: name, Id: enc.FormatID(id)}, Signature: s})
}

func runKeyVerify(r *rpc.Request, e rpc.Emitter) error {
	enc, err := keyEncoderOf(r)
	if err != nil {
		return err
	}
	_, sig, err := mbase.Decode(r.String("signature"))
	if err != nil {
		return err
	}
	data, err := readDataArg(r)
	if err != nil {
		return err
	}
	name := r.String("key")
	var pk crypto.PubKey
	if name == "" || name == node.SelfKey {
		name, pk = node.SelfKey, r.Node.PrivKey.GetPublic()
	} else if sk, err := r.Node.Keys().PrivateKey(name); err == nil {
		pk = sk.GetPublic()
	} else if n, err := ipns.NameFromString(name); err == nil {
		if pk, err = n.Peer().ExtractPublicKey(); err != nil {
			return err
		}
		name = ""
	} else {
		return fmt.Errorf("'%q' is not a known key, an IPNS Name, or a valid PeerID", name)
	}
	id, err := peer.IDFromPublicKey(pk)
	if err != nil {
		return err
	}
	valid, err := pk.Verify(data, sig)
	if err != nil {
		return err
	}
	return e.Emit(&KeyVerifyOutput{Key: KeyOutput{Name: name, Id: enc.FormatID(id)}, SignatureValid: valid})
}

func runKeyGen(r *rpc.Request, e rpc.Emitter) error {
	enc, err := keyEncoderOf(r)
	if err != nil {
		return err
	}
	k, err := r.Node.Keys().Generate(r.Args[0], r.String("type"), keySize(r))
	if err != nil {
		return err
	}
	return e.Emit(&KeyOutput{Name: k.Name, Id: enc.FormatID(k.ID)})
}

func runKeyList(r *rpc.Request, e rpc.Emitter) error {
	enc, err := keyEncoderOf(r)
	if err != nil {
		return fmt.Errorf("cannot get key encoder: %w", err)
	}
	keys, err := r.Node.Keys().List()
	if err != nil {
		return fmt.Errorf("listing keys failed: %w", err)
	}
	return e.Emit(keyList(enc, keys))
}

func keyList(enc keyEncoder, keys []node.Key) *KeyOutputList {
	out := &KeyOutputList{Keys: make([]KeyOutput, 0, len(keys))}
	for _, k := range keys {
		out.Keys = append(out.Keys, KeyOutput{Name: k.Name, Id: enc.FormatID(k.ID)})
	}
	return out
}

func runKeyRename(r *rpc.Request, e rpc.Emitter) error {
	enc, err := keyEncoderOf(r)
	if err != nil {
		return err
	}
	k, over, err := r.Node.Keys().Rename(r.Args[0], r.Args[1], r.Bool("force"))
	if err != nil {
		return err
	}
	return e.Emit(&KeyRenameOutput{Was: r.Args[0], Now: r.Args[1], Id: enc.FormatID(k.ID), Overwrite: over})
}

func runKeyRm(r *rpc.Request, e rpc.Emitter) error {
	enc, err := keyEncoderOf(r)
	if err != nil {
		return err
	}
	var keys []node.Key
	for _, name := range r.Args {
		k, err := r.Node.Keys().Remove(name)
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	return e.Emit(keyList(enc, keys))
}

// maxKeyFile bounds a key file to import: an RSA 8192 key in PEM is under 7 kB.
const maxKeyFile = 64 << 10

func runKeyImport(r *rpc.Request, e rpc.Emitter) error {
	name := r.Args[0]
	if name == node.SelfKey {
		return errors.New("cannot import key with name 'self'")
	}
	enc, err := keyEncoderOf(r)
	if err != nil {
		return err
	}
	_, f, err := firstFilePart(r)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return err
	}
	if len(data) > maxKeyFile {
		return fmt.Errorf("key file larger than %d bytes: not a key", maxKeyFile)
	}
	sk, err := decodeKeyFile(data, r.String("format"))
	if err != nil {
		return err
	}
	if !r.Bool("allow-any-key-type") {
		switch sk.(type) {
		case *crypto.RsaPrivateKey, *crypto.Ed25519PrivateKey, *crypto.Secp256k1PrivateKey:
		default:
			return fmt.Errorf("key type %T is not allowed to be imported, only RSA, Ed25519, or Secp256k1;"+
				" use flag --allow-any-key-type if you are sure of what you're doing", sk)
		}
	}
	k, err := r.Node.Keys().Import(name, sk)
	if err != nil {
		return err
	}
	return e.Emit(&KeyOutput{Name: k.Name, Id: enc.FormatID(k.ID)})
}

// decodeKeyFile reads a private key in one of Kubo's two formats, with
// Kubo's errors.
func decodeKeyFile(data []byte, format string) (crypto.PrivKey, error) {
	switch format {
	case keyFormatPEM:
		block, rest := pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("PEM block not found in input data:\n%s", rest)
		}
		if block.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("expected PRIVATE KEY type in PEM block but got: %s", block.Type)
		}
		sk, err := parsePKCS8(block.Bytes)
		if err != nil {
			return nil, err
		}
		return sk, nil
	case keyFormatLibp2p:
		sk, err := crypto.UnmarshalPrivateKey(data)
		if err != nil {
			if block, _ := pem.Decode(data); block != nil {
				return nil, fmt.Errorf("unexpected PEM block for format=%s: try again with format=%s", keyFormatLibp2p, keyFormatPEM)
			}
			return nil, fmt.Errorf("unable to unmarshall format=%s: %w", keyFormatLibp2p, err)
		}
		return sk, nil
	}
	return nil, fmt.Errorf("unrecognized import format: %s", format)
}

func runKeyExport(r *rpc.Request, e rpc.Emitter) error {
	name := r.Args[0]
	if name == node.SelfKey {
		return fmt.Errorf("cannot export key with name 'self'")
	}
	ks, err := node.OpenKeystore(repoDir(r))
	if err != nil {
		return err
	}
	sk, err := ks.Get(name)
	if err != nil {
		return fmt.Errorf("key with name '%s' doesn't exist", name)
	}
	var out []byte
	switch format := r.String("format"); format {
	case keyFormatPEM:
		der, err := marshalPKCS8(sk)
		if err != nil {
			return err
		}
		out = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	case keyFormatLibp2p:
		if out, err = crypto.MarshalPrivateKey(sk); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unrecognized export format: %s", format)
	}
	_, err = e.Write(out)
	return err
}

// keyExportOutput writes the exported key to --output (default
// ./<name>.key or .pem), created 0600.
func keyExportOutput(r *rpc.Request, body io.Reader, _ io.Writer) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	out := r.String("output")
	if out == "" {
		ext := "key"
		if r.String("format") == keyFormatPEM {
			ext = "pem"
		}
		out = filepath.Clean(filepath.Base(strings.TrimRight(r.Args[0]+"."+ext, "/")))
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, bytes.NewReader(data)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func runKeyRotate(r *rpc.Request, _ rpc.Emitter) error {
	old := r.String("oldkey")
	if old == "" {
		return fmt.Errorf("keystore name for backing up old key must be provided")
	}
	if old == node.SelfKey {
		return fmt.Errorf("keystore name for back up cannot be named 'self'")
	}
	return r.Node.Keys().RotateIdentity(old, r.String("type"), keySize(r))
}

func keyIDText(t *rpc.TextEnv, v any) error {
	_, err := fmt.Fprintln(t.Out, v.(*KeyOutput).Id)
	return err
}

func keyListText(t *rpc.TextEnv, v any) error {
	withID := t.Req != nil && t.Req.Bool("l")
	tw := tabwriter.NewWriter(t.Out, 1, 2, 1, ' ', 0)
	for _, k := range v.(*KeyOutputList).Keys {
		if withID {
			fmt.Fprintf(tw, "%s\t%s\t\n", k.Id, EscNonPrint(k.Name))
		} else {
			fmt.Fprintf(tw, "%s\n", EscNonPrint(k.Name))
		}
	}
	return tw.Flush()
}

func keyRenameText(t *rpc.TextEnv, v any) error {
	o := v.(*KeyRenameOutput)
	with := ""
	if o.Overwrite {
		with = " with overwriting"
	}
	_, err := fmt.Fprintf(t.Out, "Key %s renamed to %s%s\n", o.Id, EscNonPrint(o.Now), with)
	return err
}
