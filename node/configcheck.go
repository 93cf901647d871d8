// configcheck.go: checking a config before it is stored (config replace,
// config set, config edit): it must decode, its identity must hold
// together, and every value cairn reads must be one it can use.

package node

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

// CheckConfigDoc reports why doc cannot be a node's config: it does not
// decode into Config (a value of the wrong type), or its identity is
// missing or inconsistent. It returns the decoded config otherwise.
func CheckConfigDoc(doc map[string]any) (*Config, error) {
	if doc == nil {
		return nil, errors.New("config: not a JSON object")
	}
	cfg, err := DecodeConfig(doc)
	if err != nil {
		return nil, err
	}
	if err := CheckConfigValues(cfg); err != nil {
		return nil, err
	}
	if _, _, err := cfg.Identity.Keys(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// CheckConfigValues reports the first value of a key cairn reads that it
// could not use, parsed by the code that uses it: sizes (StorageMax,
// Swarm.Bandwidth, Import thresholds, Modules sizes), durations (GCPeriod,
// ConnMgr.GracePeriod, Ipns and Pubsub times, Modules timeouts),
// multiaddrs (Addresses, Bootstrap, Swarm.AddrFilters), the URLs of
// Ipns.DelegatedPublishers and the settings
// with a fixed set of values the daemon checks at start (Routing.Type,
// Pubsub). Import's chunker, hash and layout are checked when add uses
// them, as Kubo does. Values of the wrong JSON type are DecodeConfig's. The config commands run it
// before they store anything (replaceLocked, CheckConfigDoc); a repo
// opens without it, so a stored bad value can still be fixed.
func CheckConfigValues(c *Config) error {
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
	if _, err := bootstrapPeers(c.Bootstrap); err != nil {
		return err
	}
	if _, err := NewAddrFilters(c.Swarm.AddrFilters); err != nil {
		return err
	}
	if _, err := c.NetLimits(); err != nil { // ConnMgr, Swarm.Bandwidth
		return err
	}
	if _, _, _, err := routingModes("", c.Routing.Type); err != nil {
		return err
	}
	if _, err := durationOr(c.Ipns.RepublishPeriod, time.Hour, "Ipns.RepublishPeriod"); err != nil {
		return err
	}
	if _, err := durationOr(c.Ipns.RecordLifetime, time.Hour, "Ipns.RecordLifetime"); err != nil {
		return err
	}
	if _, _, err := c.Ipns.maxCacheTTL(); err != nil {
		return err
	}
	if _, err := c.delegatedPublishers(); err != nil {
		return err
	}
	if _, _, err := c.Pubsub.seenMessages(); err != nil {
		return err
	}
	if t := c.ImportSettings().UnixFSHAMTDirectorySizeThreshold; t != nil && *t != "" {
		if _, err := parseSize("Import.UnixFSHAMTDirectorySizeThreshold", *t); err != nil {
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
func (d DatastoreConfig) GCInterval() (time.Duration, error) {
	return durationOr(d.GCPeriod, time.Hour, "Datastore.GCPeriod")
}
