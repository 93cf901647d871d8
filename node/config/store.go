// store.go: the one write path of the config file. Every write (config
// set, replace and profile apply, config edit, identity rotation, init)
// goes through a Store's commitLocked, under the Store's lock: it writes
// the file atomically and swaps the config in effect, so readers see
// either the old config or the new one and no write is lost between a
// read and a write of another.

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Store is the config file of one repo and the config in effect. A
// running node holds the one Store of its repo; a command without a node
// (init, config edit) makes its own, holding the repo lock.
type Store struct {
	repo string
	// more are the checks Replace runs after CheckValues'.
	more []Check

	mu  sync.RWMutex
	cur *Config
}

// NewStore returns the Store of repo's config file, whose config in
// effect is cur (nil: none yet). Replace checks a new config with
// CheckValues and more.
func NewStore(repo string, cur *Config, more ...Check) *Store {
	return &Store{repo: repo, cur: cur, more: more}
}

// Config returns the config in effect. A write swaps in a new value and
// never modifies a published one, so callers may keep and read what they
// got without a lock; they must not change it (use Update).
func (s *Store) Config() *Config {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cur
}

// Doc reads the config file as a generic JSON document (unknown keys
// included), consistent with concurrent writers.
func (s *Store) Doc() (map[string]any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return ReadDoc(s.repo)
}

// Replace makes doc the config: it must decode and pass the checks;
// Identity.PrivKey is always the one in effect (whatever doc holds) and
// Identity.PeerID must be empty (filled in) or the one in effect.
func (s *Store) Replace(doc map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replaceLocked(doc)
}

// Update reads the config file, lets fn change the document and replaces
// the config with the result (as Replace), holding the lock throughout so
// concurrent updates do not interleave.
func (s *Store) Update(fn func(doc map[string]any) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := ReadDoc(s.repo)
	if err != nil {
		return err
	}
	if err := fn(doc); err != nil {
		return err
	}
	return s.replaceLocked(doc)
}

// SetIdentity gives the config a new identity, keeping every other key
// of the file (identity rotation: the only write that changes the key).
func (s *Store) SetIdentity(id Identity) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := ReadDoc(s.repo)
	if err != nil {
		return err
	}
	doc["Identity"] = map[string]any{"PeerID": id.PeerID, "PrivKey": id.PrivKey}
	cfg, err := Decode(doc)
	if err != nil {
		return err
	}
	return s.commitLocked(doc, cfg)
}

// Write stores doc as it is, identity included (init, config edit): it
// must decode; the caller checks anything more.
func (s *Store) Write(doc map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg, err := Decode(doc)
	if err != nil {
		return err
	}
	return s.commitLocked(doc, cfg)
}

// WriteConfig stores the typed values of c over the config file, keeping
// every key Config does not hold.
func (s *Store) WriteConfig(c *Config) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := ReadDoc(s.repo)
	if err != nil {
		return err
	}
	own, err := c.ToDoc()
	if err != nil {
		return err
	}
	doc = MergeDocs(doc, own)
	cfg, err := Decode(doc)
	if err != nil {
		return err
	}
	return s.commitLocked(doc, cfg)
}

// WriteDoc writes doc as the config file of repo, which no running node
// holds (init, config edit and tests, with the repo lock or before any
// node opens): Write on a Store of its own.
func WriteDoc(repo string, doc map[string]any) error { return NewStore(repo, nil).Write(doc) }

// ApplyProfile applies the named profile (a key of Profiles) to the
// config document. It returns the document before and after. Unless
// dryRun, the old file is first copied to <repo>/config-pre-<name>-<random>
// and the new document written, as Kubo does; keys the profile does not
// touch (unknown ones included) are kept.
func (s *Store) ApplyProfile(name string, dryRun bool) (before, after map[string]any, err error) {
	p, ok := Profiles[name]
	if !ok {
		return nil, nil, fmt.Errorf("%s is not a profile", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if before, err = ReadDoc(s.repo); err != nil {
		return nil, nil, err
	}
	after = CopyValue(before).(map[string]any)
	if err := p.Apply(after); err != nil {
		return nil, nil, err
	}
	// Through JSON, so that numbers compare as the file's do.
	if after, err = jsonCopy(after); err != nil {
		return nil, nil, err
	}
	if _, err := Decode(after); err != nil {
		return nil, nil, err
	}
	if dryRun {
		return before, after, nil
	}
	if err := s.backupLocked("pre-" + name + "-"); err != nil {
		return nil, nil, err
	}
	if err := s.replaceLocked(CopyValue(after).(map[string]any)); err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// backupLocked copies the config file to a new file named
// config-<prefix><random> in the repo.
func (s *Store) backupLocked(prefix string) error {
	src, err := os.Open(filepath.Join(s.repo, File))
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.CreateTemp(s.repo, File+"-"+prefix)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

func (s *Store) replaceLocked(doc map[string]any) error {
	if doc == nil {
		return errors.New("config: not a JSON object")
	}
	if s.cur == nil {
		return errors.New("config: no config in effect to replace")
	}
	self, _, err := s.cur.Identity.Keys()
	if err != nil {
		return err
	}
	var id map[string]any
	for k := range doc {
		if strings.EqualFold(k, "Identity") && k != "Identity" {
			return fmt.Errorf("config: key %q must be spelled \"Identity\"", k)
		}
	}
	switch v := doc["Identity"].(type) {
	case map[string]any:
		id = v
	case nil:
		id = map[string]any{}
		doc["Identity"] = id
	default:
		return errors.New("config: Identity is not a map")
	}
	for k := range id {
		if strings.EqualFold(k, "PrivKey") {
			delete(id, k)
		}
	}
	id["PrivKey"] = s.cur.Identity.PrivKey
	if pid, _ := id["PeerID"].(string); pid == "" {
		id["PeerID"] = self.String()
	}
	cfg, err := Decode(doc)
	if err != nil {
		if u := errors.Unwrap(err); u != nil {
			err = u
		}
		return fmt.Errorf("failure to decode config: %w", err)
	}
	if err := CheckValues(cfg, s.more...); err != nil {
		return fmt.Errorf("failure to decode config: %w", err)
	}
	if cfg.Identity.PeerID != self.String() {
		return fmt.Errorf("Identity.PeerID %s does not match the node's private key (%s)", cfg.Identity.PeerID, self)
	}
	return s.commitLocked(doc, cfg)
}

// commitLocked is the one write of the config file: doc, which decodes
// as cfg, goes to a temporary file, fsync, rename; then cfg is the config
// in effect. s.mu is held.
func (s *Store) commitLocked(doc map[string]any, cfg *Config) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(s.repo, File), append(b, '\n'), 0o600); err != nil {
		return err
	}
	s.cur = cfg
	return nil
}

// WriteFileAtomic writes data durably to path: to a temporary file in
// the same directory, fsync, rename.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return replaceFile(path, data, mode, true)
}

// WriteFileReplace writes data to a temporary file in path's directory
// and renames it over path, without fsync: a reader sees the old or the
// new contents, never half of them, but after a power cut the file may
// be empty. It is for files that describe the running process (the api
// file), which a crash makes stale anyway: an fsync there waits, on
// ext4, for every other file's dirty data in the same journal commit
// (half a second and more while a big write is being flushed).
func WriteFileReplace(path string, data []byte, mode os.FileMode) error {
	return replaceFile(path, data, mode, false)
}

func replaceFile(path string, data []byte, mode os.FileMode, sync bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
