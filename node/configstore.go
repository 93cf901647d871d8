// configstore.go: changing the config of a running node. Every write goes
// through replaceLocked: it validates the document, keeps the node's
// private key, writes the file atomically and swaps n.config, all under
// n.cfgMu, so readers see either the old config or the new one.

package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"cairn/node/kuboconf"
)

// Config returns the config in effect. A config change swaps in a new
// value and never modifies a published one, so callers may keep and read
// what they got without a lock; they must not change it (use UpdateConfig).
func (n *Node) Config() *Config {
	n.cfgMu.RLock()
	defer n.cfgMu.RUnlock()
	return n.config
}

// ConfigDoc reads the config file as a generic JSON document (unknown
// keys included), consistent with concurrent writers.
func (n *Node) ConfigDoc() (map[string]any, error) {
	n.cfgMu.RLock()
	defer n.cfgMu.RUnlock()
	return ReadConfigDoc(n.Repo)
}

// ReplaceConfig makes doc the node's config: it must decode as a Config;
// Identity.PrivKey is always the node's own key (whatever doc holds) and
// Identity.PeerID must be empty (filled in) or the node's ID. The file is
// replaced atomically.
func (n *Node) ReplaceConfig(doc map[string]any) error {
	n.cfgMu.Lock()
	defer n.cfgMu.Unlock()
	return n.replaceLocked(doc)
}

// UpdateConfig reads the config file, lets fn change the document and
// replaces the config with the result (as ReplaceConfig), holding the
// config lock throughout so concurrent updates do not interleave.
func (n *Node) UpdateConfig(fn func(doc map[string]any) error) error {
	n.cfgMu.Lock()
	defer n.cfgMu.Unlock()
	doc, err := ReadConfigDoc(n.Repo)
	if err != nil {
		return err
	}
	if err := fn(doc); err != nil {
		return err
	}
	return n.replaceLocked(doc)
}

// ApplyProfile applies the named profile (a key of Profiles) to the
// config document. It returns the document before and after. Unless
// dryRun, the old file is first copied to <repo>/config-pre-<name>-<random>
// and the new document written, as Kubo does; keys the profile does not
// touch (unknown ones included) are kept.
func (n *Node) ApplyProfile(name string, dryRun bool) (before, after map[string]any, err error) {
	p, ok := Profiles[name]
	if !ok {
		return nil, nil, fmt.Errorf("%s is not a profile", name)
	}
	n.cfgMu.Lock()
	defer n.cfgMu.Unlock()
	if before, err = ReadConfigDoc(n.Repo); err != nil {
		return nil, nil, err
	}
	after = kuboconf.CopyValue(before).(map[string]any)
	if err := p.Apply(after); err != nil {
		return nil, nil, err
	}
	// Through JSON, so that numbers compare as the file's do.
	if after, err = jsonCopy(after); err != nil {
		return nil, nil, err
	}
	if _, err := DecodeConfig(after); err != nil {
		return nil, nil, err
	}
	if dryRun {
		return before, after, nil
	}
	if err := n.backupLocked("pre-" + name + "-"); err != nil {
		return nil, nil, err
	}
	if err := n.replaceLocked(kuboconf.CopyValue(after).(map[string]any)); err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// jsonCopy returns doc as it reads back from JSON.
func jsonCopy(doc map[string]any) (map[string]any, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// backupLocked copies the config file to a new file named
// config-<prefix><random> in the repo.
func (n *Node) backupLocked(prefix string) error {
	src, err := os.Open(filepath.Join(n.Repo, ConfigFile))
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.CreateTemp(n.Repo, ConfigFile+"-"+prefix)
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

func (n *Node) replaceLocked(doc map[string]any) error {
	if doc == nil {
		return errors.New("config: not a JSON object")
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
	id["PrivKey"] = n.config.Identity.PrivKey
	if pid, _ := id["PeerID"].(string); pid == "" {
		id["PeerID"] = n.PeerID.String()
	}
	cfg, err := DecodeConfig(doc)
	if err != nil {
		if u := errors.Unwrap(err); u != nil {
			err = u
		}
		return fmt.Errorf("failure to decode config: %w", err)
	}
	if err := CheckConfigValues(cfg); err != nil {
		return fmt.Errorf("failure to decode config: %w", err)
	}
	if cfg.Identity.PeerID != n.PeerID.String() {
		return fmt.Errorf("Identity.PeerID %s does not match the node's private key (%s)", cfg.Identity.PeerID, n.PeerID)
	}
	if err := WriteConfigDoc(n.Repo, doc); err != nil {
		return err
	}
	n.config = cfg
	return nil
}

// GetKeyExact returns the value at a dotted key, matching names exactly
// (Kubo's MapGetKV): "A.B not found", "A key is not a map".
func GetKeyExact(doc map[string]any, key string) (any, error) {
	var cur any = doc
	parts := strings.Split(key, ".")
	for i, part := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s key is not a map", strings.Join(parts[:i], "."))
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("%s not found", strings.Join(parts[:i+1], "."))
		}
	}
	return cur, nil
}

// SetKeyExact sets the value at a dotted key, matching names exactly and
// creating missing (or null) maps on the way (Kubo's MapSetKV).
func SetKeyExact(doc map[string]any, key string, value any) error {
	var cur any = doc
	parts := strings.Split(key, ".")
	for i, part := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("%s key is not a map", strings.Join(parts[:i], "."))
		}
		if i == len(parts)-1 {
			m[part] = value
			return nil
		}
		next, ok := m[part]
		if !ok || next == nil {
			next = map[string]any{}
			m[part] = next
		}
		cur = next
	}
	return nil
}

// CheckConfigKey reports whether key names a config key, as Kubo's
// config.CheckKey does: a key of Kubo 0.42 (kuboconf.CheckKey) or a
// field of cairn's Config. Names are Go field names, matched exactly;
// any key is accepted inside a map section. Errors (Kubo's): "A.B not
// found", "A key is not a map".
func CheckConfigKey(key string) error {
	kuboErr := kuboconf.CheckKey(key)
	if kuboErr == nil || checkOwnKey(key) == nil {
		return nil
	}
	return kuboErr
}

// checkOwnKey is CheckConfigKey for the fields of Config.
func checkOwnKey(key string) error { return kuboconf.CheckKeyIn(reflect.TypeOf(Config{}), key) }

// MergeConfigDocs returns a copy of left with right merged in: where both
// hold a map the maps are merged recursively, otherwise right's value wins.
func MergeConfigDocs(left, right map[string]any) map[string]any {
	out := maps.Clone(left)
	if out == nil {
		out = map[string]any{}
	}
	for k, rv := range right {
		if rm, ok := rv.(map[string]any); ok {
			if lm, ok := out[k].(map[string]any); ok {
				out[k] = MergeConfigDocs(lm, rm)
				continue
			}
		}
		out[k] = rv
	}
	return out
}
