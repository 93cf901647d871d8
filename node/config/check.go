// check.go: checking a config before it is stored (config replace,
// config set, config edit): it must decode, its identity must hold
// together, and every value cairn reads must be one it can use.

package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// Keys decodes the identity's private key and checks that PeerID (when
// set) is the ID of that key.
func (id Identity) Keys() (peer.ID, crypto.PrivKey, error) {
	if id.PrivKey == "" {
		return "", nil, errors.New("config has no Identity.PrivKey")
	}
	raw, err := base64.StdEncoding.DecodeString(id.PrivKey)
	if err != nil {
		return "", nil, fmt.Errorf("config Identity.PrivKey: %w", err)
	}
	sk, err := crypto.UnmarshalPrivateKey(raw)
	if err != nil {
		return "", nil, fmt.Errorf("config Identity.PrivKey: %w", err)
	}
	pid, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return "", nil, err
	}
	if id.PeerID != "" && id.PeerID != pid.String() {
		return "", nil, fmt.Errorf("config Identity.PeerID %s does not match the private key (%s)", id.PeerID, pid)
	}
	return pid, sk, nil
}

// A Check reports why a decoded config cannot be used. The node adds the
// checks of its network settings to CheckValues' with one.
type Check func(*Config) error

// CheckDoc reports why doc cannot be a node's config: it does not decode
// (a value of the wrong type), a value fails CheckValues or one of more,
// or its identity is missing or inconsistent. It returns the decoded
// config otherwise.
func CheckDoc(doc map[string]any, more ...Check) (*Config, error) {
	if doc == nil {
		return nil, errors.New("config: not a JSON object")
	}
	cfg, err := Decode(doc)
	if err != nil {
		return nil, err
	}
	if err := CheckValues(cfg, more...); err != nil {
		return nil, err
	}
	if _, _, err := cfg.Identity.Keys(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// CheckValues reports the first value of a key cairn reads that it could
// not use, parsed by the code that uses it: sizes (StorageMax, Import
// thresholds, Modules sizes), durations (GCPeriod, Ipns times, Modules
// timeouts) and the multiaddrs of Addresses; then each of more in turn
// (the node's: Bootstrap, Swarm, Routing.Type, Ipns.DelegatedPublishers,
// Pubsub). Import's chunker, hash and layout are checked when add uses
// them, as Kubo does. Values of the wrong JSON type are Decode's. The
// config commands run it before they store anything (Store.Replace,
// CheckDoc); a repo opens without it, so a stored bad value can still be
// fixed.
func CheckValues(c *Config, more ...Check) error {
	if _, err := ParseStorageMax(c.Datastore.StorageMax); err != nil {
		return err
	}
	if _, err := c.Datastore.GCInterval(); err != nil {
		return err
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"Addresses.Swarm", c.Addresses.Swarm}, {"Addresses.Announce", c.Addresses.Announce},
		{"Addresses.AppendAnnounce", c.Addresses.AppendAnnounce}, {"Addresses.NoAnnounce", c.Addresses.NoAnnounce},
		{"Addresses.API", c.Addresses.API}, {"Addresses.Gateway", c.Addresses.Gateway}} {
		if _, err := ParseAddrs(l.key, l.list); err != nil {
			return err
		}
	}
	for _, check := range more {
		if err := check(c); err != nil {
			return err
		}
	}
	if _, err := DurationOr(c.Ipns.RepublishPeriod, time.Hour, "Ipns.RepublishPeriod"); err != nil {
		return err
	}
	if _, err := DurationOr(c.Ipns.RecordLifetime, time.Hour, "Ipns.RecordLifetime"); err != nil {
		return err
	}
	if _, _, err := c.Ipns.CacheTTL(); err != nil {
		return err
	}
	if t := c.ImportSettings().UnixFSHAMTDirectorySizeThreshold; !t.IsDefault() && t.WithDefault("") != "" {
		if _, err := ParseSize("Import.UnixFSHAMTDirectorySizeThreshold", t.WithDefault("")); err != nil {
			return err
		}
	}
	_, err := c.Modules.Limits()
	return err
}

// ParseAddrs parses the multiaddrs of the config key key.
func ParseAddrs(key string, list []string) ([]ma.Multiaddr, error) {
	out := make([]ma.Multiaddr, 0, len(list))
	for _, s := range list {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return nil, fmt.Errorf("config %s %q: %w", key, s, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// GCInterval is Datastore.GCPeriod, one hour when unset.
func (d Datastore) GCInterval() (time.Duration, error) {
	return DurationOr(d.GCPeriod, time.Hour, "Datastore.GCPeriod")
}

// DurationOr parses a Go duration of the config key key, "" giving def;
// it must be positive.
func DurationOr(s string, def time.Duration, key string) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("config %s: %w", key, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("config %s: %s is not positive", key, s)
	}
	return d, nil
}

// CacheTTL is Ipns.MaxCacheTTL: false when unset; it must be positive.
func (c Ipns) CacheTTL() (time.Duration, bool, error) {
	if c.MaxCacheTTL.IsDefault() {
		return 0, false, nil
	}
	d := c.MaxCacheTTL.WithDefault(0)
	if d <= 0 {
		return 0, false, fmt.Errorf("config Ipns.MaxCacheTTL: %s is not positive", d)
	}
	return d, true, nil
}
