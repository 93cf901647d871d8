// repo.go: the repo directory: init, the lock, the api file.

package node

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"cairn/node/config"
	"cairn/storage"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Files inside a repo.
const (
	LockFile    = "repo.lock"
	APIFile     = "api"
	VersionFile = "version"
	// RepoVersion is what repo/version reports.
	RepoVersion = "1"
)

// DefaultRepoPath returns $CAIRN_PATH, else ~/.cairn.
func DefaultRepoPath() string {
	if p := os.Getenv("CAIRN_PATH"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".cairn"
	}
	return filepath.Join(home, ".cairn")
}

// IsInitialized reports whether repo holds a config file.
func IsInitialized(repo string) bool {
	_, err := os.Stat(filepath.Join(repo, config.File))
	return err == nil
}

// NewIdentity makes an ed25519 identity in Kubo's encoding.
func NewIdentity() (config.Identity, error) { return NewIdentityOf("ed25519", -1) }

// NewIdentityOf makes an identity with Kubo's init key choices: algorithm
// ed25519 (the default, "" too), secp256k1, or rsa with bits. bits 0 or
// -1 is the type's own size (2048 for RSA); other bits than 256 are
// refused for the first two (CheckKeySize).
func NewIdentityOf(algorithm string, bits int) (config.Identity, error) {
	if bits == 0 {
		bits = -1
	}
	if err := CheckKeySize(algorithm, bits); err != nil {
		return config.Identity{}, err
	}
	var sk crypto.PrivKey
	var pk crypto.PubKey
	var err error
	switch strings.ToLower(algorithm) {
	case "", "ed25519":
		sk, pk, err = crypto.GenerateEd25519Key(rand.Reader)
	case "rsa":
		if bits <= 0 {
			bits = 2048
		}
		sk, pk, err = crypto.GenerateRSAKeyPair(bits, rand.Reader)
	case "secp256k1":
		sk, pk, err = crypto.GenerateSecp256k1Key(rand.Reader)
	default:
		return config.Identity{}, fmt.Errorf("unrecognized key type: %s", algorithm)
	}
	if err != nil {
		return config.Identity{}, err
	}
	id, err := peer.IDFromPublicKey(pk)
	if err != nil {
		return config.Identity{}, err
	}
	raw, err := crypto.MarshalPrivateKey(sk)
	if err != nil {
		return config.Identity{}, err
	}
	return config.Identity{PeerID: id.String(), PrivKey: base64.StdEncoding.EncodeToString(raw)}, nil
}

// Init creates a repo at dir with the given comma-separated profiles. It
// fails if a repo is already there.
func Init(dir, profiles string) (*config.Config, error) {
	return InitRepo(dir, InitOptions{Profiles: profiles})
}

// InitOptions are the choices of `cairn init` (Kubo's init flags).
type InitOptions struct {
	// Profiles is a comma-separated list of profiles to apply.
	Profiles string
	// Algorithm and Bits choose the key (NewIdentityOf).
	Algorithm string
	Bits      int
	// Doc, if set, is the config document to start from instead of
	// config.DefaultDoc (`cairn init <default-config>`); its Identity is
	// kept, and Kubo keys it lacks read as Kubo's defaults.
	Doc map[string]any
}

// InitRepo creates a repo at dir. It fails if a repo is already there.
func InitRepo(dir string, o InitOptions) (*config.Config, error) {
	if IsInitialized(dir) {
		return nil, fmt.Errorf("cairn configuration file already exists!\nReinitializing would overwrite your keys (%s)", filepath.Join(dir, config.File))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	doc := o.Doc
	if doc == nil {
		id, err := NewIdentityOf(o.Algorithm, o.Bits)
		if err != nil {
			return nil, err
		}
		doc = config.DefaultDoc(id)
	} else {
		doc = config.CopyValue(doc).(map[string]any)
		config.FillMissing(doc)
		c, err := config.Decode(doc)
		if err != nil {
			return nil, fmt.Errorf("init: the config file: %w", err)
		}
		if _, _, err := c.Identity.Keys(); err != nil {
			return nil, fmt.Errorf("init: the config file's identity: %w", err)
		}
	}
	if err := config.ApplyProfiles(doc, o.Profiles); err != nil {
		return nil, err
	}
	cfg, err := config.Decode(doc)
	if err != nil {
		return nil, err
	}
	lk, err := LockRepo(dir)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	st, err := storage.Open(filepath.Join(dir, storage.FileName), nil)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	if err := config.WriteFileAtomic(filepath.Join(dir, VersionFile), []byte(RepoVersion+"\n"), 0o644); err != nil {
		return nil, err
	}
	// The config goes last: its presence marks an initialised repo.
	if err := config.WriteDoc(dir, doc); err != nil {
		return nil, err
	}
	return cfg, nil
}

// RepoLock is an exclusive flock on <repo>/repo.lock. The kernel drops it
// when the process dies, so a killed daemon leaves no stale lock.
type RepoLock struct{ f *os.File }

// LockRepo takes the repo lock without waiting.
func LockRepo(dir string) (*RepoLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: cannot acquire lock on %s (is a cairn daemon already running?)", ErrRepoLocked, dir)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return &RepoLock{f: f}, nil
}

// Unlock releases the lock.
func (l *RepoLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
	return err
}

// WriteAPIFile records the bound API multiaddr, as Kubo does (no newline,
// written to a temporary file and renamed). It is not synced: the file
// only names the running daemon, and one that a power cut left empty
// reads as no daemon (ReadAPIFile).
func WriteAPIFile(dir, maddr string) error {
	return config.WriteFileReplace(filepath.Join(dir, APIFile), []byte(maddr), 0o600)
}

// RemoveAPIFile deletes the api file.
func RemoveAPIFile(dir string) error {
	err := os.Remove(filepath.Join(dir, APIFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// ReadAPIFile returns the multiaddr in the api file, or "" if none.
func ReadAPIFile(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, APIFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 2048)
	n, err := f.Read(buf)
	if err != nil && n == 0 {
		return "", nil
	}
	if n >= 2048 {
		return "", fmt.Errorf("api file %s too large", filepath.Join(dir, APIFile))
	}
	return strings.TrimSpace(string(buf[:n])), nil
}
