// keys.go: the keystore, the node's named keys for IPNS beside its own
// identity ("self").
//
// Keys live as Kubo keeps them: one file per key in <repo>/keystore (a
// directory of mode 0700), named "key_" + the lower-case unpadded base32 of
// the key's name, holding the libp2p protobuf encoding of the private key,
// mode 0400 (boxo's keystore.FSKeystore). They are never in the config
// document (config show cannot print them) and never logged: errors name
// the key and the file, never the bytes. The node's own key stays in the
// config's Identity.PrivKey, as in Kubo.

package node

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ipfs/boxo/keystore"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// KeystoreDir is the keystore's directory inside a repo.
const KeystoreDir = "keystore"

// SelfKey is the name of the node's own key.
const SelfKey = "self"

// Key is a named key pair: its name and the peer ID (IPNS name) of its
// public key.
type Key struct {
	Name string
	ID   peer.ID
}

// OpenKeystore opens (creating it, 0700) the keystore of repo. It takes no
// lock: reading keys while a daemon runs is safe (key export does).
func OpenKeystore(repo string) (*keystore.FSKeystore, error) {
	return keystore.NewFSKeystore(filepath.Join(repo, KeystoreDir))
}

// CheckKeystore reads every key file of repo's keystore and returns one
// error per file that is not a valid key (damaged, or named in a way
// boxo cannot decode). The node reports them at start; key/list skips
// them.
func CheckKeystore(repo string) []error {
	dir := filepath.Join(repo, KeystoreDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []error{fmt.Errorf("keystore %s: %w", dir, err)}
	}
	ks, err := OpenKeystore(repo)
	if err != nil {
		return []error{err}
	}
	names, err := ks.List()
	if err != nil {
		return []error{err}
	}
	var errs []error
	if len(names) < len(ents) {
		errs = append(errs, fmt.Errorf("keystore %s: %d file(s) whose names are not key_<base32 name> (ignored)", dir, len(ents)-len(names)))
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := ks.Get(name); err != nil {
			errs = append(errs, fmt.Errorf("key %q is damaged and cannot be used (remove it with 'cairn key rm' or import it again): %w", name, err))
		}
	}
	return errs
}

// keystore returns the node's keystore (opened once).
func (n *Node) keystore() (*keystore.FSKeystore, error) {
	n.Keys().mu.Lock()
	defer n.Keys().mu.Unlock()
	if n.Keys().ks == nil {
		ks, err := OpenKeystore(n.Repo)
		if err != nil {
			return nil, err
		}
		n.Keys().ks = ks
	}
	return n.Keys().ks, nil
}

// PrivateKey returns the key named name: "self" (or "") is the node's own.
func (k *Keys) PrivateKey(name string) (crypto.PrivKey, error) {
	n := k.n
	if name == "" || name == SelfKey {
		return n.PrivKey, nil
	}
	ks, err := n.keystore()
	if err != nil {
		return nil, err
	}
	return ks.Get(name)
}

// Generate makes a key of type ed25519, secp256k1 or rsa and stores it.
// size is in bits, -1 for the type's own: 2048 for RSA (libp2p refuses
// fewer than 2048 and more than 8192); ed25519 and secp256k1 keys are
// 256 bits and take no other size. Errors are Kubo's.
func (k *Keys) Generate(name, typ string, size int) (Key, error) {
	n := k.n
	if name == SelfKey {
		return Key{}, errors.New("cannot create key with name 'self'")
	}
	if err := CheckKeySize(typ, size); err != nil {
		return Key{}, err
	}
	var sk crypto.PrivKey
	var err error
	switch typ {
	case "rsa":
		if size <= 0 {
			size = 2048
		}
		sk, _, err = crypto.GenerateKeyPairWithReader(crypto.RSA, size, rand.Reader)
	case "ed25519":
		sk, _, err = crypto.GenerateEd25519Key(rand.Reader)
	case "secp256k1":
		sk, _, err = crypto.GenerateSecp256k1Key(rand.Reader)
	default:
		return Key{}, fmt.Errorf("unrecognized key type: %s", typ)
	}
	if err != nil {
		return Key{}, err
	}
	return n.storeKey(name, sk)
}

// CheckKeySize refuses a size (bits) that a key type cannot have:
// ed25519 and secp256k1 keys are always 256 bits. -1 (unset) and any
// RSA size pass (libp2p checks RSA's).
func CheckKeySize(typ string, size int) error {
	switch strings.ToLower(typ) {
	case "", "ed25519", "secp256k1":
		if size != -1 && size != 256 {
			if typ == "" {
				typ = "ed25519"
			}
			return fmt.Errorf("invalid key size %d: %s keys are always 256 bits", size, strings.ToLower(typ))
		}
	}
	return nil
}

// Import stores sk under name (which must be new and not "self").
func (k *Keys) Import(name string, sk crypto.PrivKey) (Key, error) {
	n := k.n
	if name == SelfKey {
		return Key{}, errors.New("cannot import key with name 'self'")
	}
	return n.storeKey(name, sk)
}

func (n *Node) storeKey(name string, sk crypto.PrivKey) (Key, error) {
	id, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return Key{}, err
	}
	ks, err := n.keystore()
	if err != nil {
		return Key{}, err
	}
	n.Keys().mu.Lock()
	defer n.Keys().mu.Unlock()
	if has, err := ks.Has(name); err != nil {
		return Key{}, err
	} else if has {
		return Key{}, fmt.Errorf("key with name '%s' already exists", name)
	}
	if err := ks.Put(name, sk); err != nil {
		return Key{}, err
	}
	return Key{Name: name, ID: id}, nil
}

// List returns "self" first, then the stored keys by name. Damaged
// key files are left out (CheckKeystore names them).
func (k *Keys) List() ([]Key, error) {
	n := k.n
	ks, err := n.keystore()
	if err != nil {
		return nil, err
	}
	names, err := ks.List()
	if err != nil {
		return nil, fmt.Errorf("cannot list keys in keystore: %w", err)
	}
	sort.Strings(names)
	out := []Key{{Name: SelfKey, ID: n.PeerID}}
	for _, name := range names {
		sk, err := ks.Get(name)
		if err != nil {
			continue
		}
		id, err := peer.IDFromPrivateKey(sk)
		if err != nil {
			continue
		}
		out = append(out, Key{Name: name, ID: id})
	}
	return out, nil
}

// Rename renames a stored key; with force an existing key of the new
// name is replaced (overwritten reports it). Errors are Kubo's.
func (kk *Keys) Rename(oldName, newName string, force bool) (k Key, overwritten bool, err error) {
	n := kk.n
	if oldName == SelfKey {
		return Key{}, false, errors.New("cannot rename key with name 'self'")
	}
	if newName == SelfKey {
		return Key{}, false, errors.New("cannot overwrite key with name 'self'")
	}
	ks, err := n.keystore()
	if err != nil {
		return Key{}, false, err
	}
	kk.mu.Lock()
	defer kk.mu.Unlock()
	sk, err := ks.Get(oldName)
	if err != nil {
		return Key{}, false, fmt.Errorf("no key named %s was found", oldName)
	}
	id, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return Key{}, false, err
	}
	if newName == oldName {
		return Key{Name: newName, ID: id}, false, nil
	}
	has, err := ks.Has(newName)
	if err != nil {
		return Key{}, false, err
	}
	if has {
		if !force {
			return Key{}, false, keystore.ErrKeyExists
		}
		if err := ks.Delete(newName); err != nil {
			return Key{}, false, err
		}
	}
	if err := ks.Put(newName, sk); err != nil {
		return Key{}, false, err
	}
	if err := ks.Delete(oldName); err != nil {
		return Key{}, false, err
	}
	return Key{Name: newName, ID: id}, has, nil
}

// Remove deletes a stored key ("self" never). Errors are Kubo's.
func (k *Keys) Remove(name string) (Key, error) {
	n := k.n
	if name == SelfKey {
		return Key{}, errors.New("cannot remove key with name 'self'")
	}
	ks, err := n.keystore()
	if err != nil {
		return Key{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	sk, err := ks.Get(name)
	if err != nil {
		return Key{}, fmt.Errorf("no key named %s was found", name)
	}
	id, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return Key{}, err
	}
	if err := ks.Delete(name); err != nil {
		return Key{}, err
	}
	return Key{Name: name, ID: id}, nil
}

// RotateIdentity gives the node a new identity (typ and size as
// Generate) and keeps the old key in the keystore as oldName, as Kubo's
// key rotate. It is for a node that is not serving (the CLI runs it with
// the repo lock held and no daemon): the node's PeerID and PrivKey change.
func (k *Keys) RotateIdentity(oldName, typ string, size int) error {
	n := k.n
	if oldName == "" || oldName == SelfKey {
		return fmt.Errorf("keystore name for back up cannot be named 'self'")
	}
	if typ == "rsa" && size <= 0 {
		size = 2048
	}
	id, err := NewIdentityOf(typ, size)
	if err != nil {
		return fmt.Errorf("creating identity (%v)", err)
	}
	pid, sk, err := id.Keys()
	if err != nil {
		return err
	}
	ks, err := n.keystore()
	if err != nil {
		return err
	}
	if err := ks.Put(oldName, n.PrivKey); err != nil {
		return fmt.Errorf("saving old key in keystore (%v)", err)
	}
	if err := n.cfg.SetIdentity(id); err != nil {
		return fmt.Errorf("saving new key to config (%v)", err)
	}
	n.PeerID, n.PrivKey = pid, sk
	return nil
}
