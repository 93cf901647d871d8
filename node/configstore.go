// configstore.go: the config of a running node. The node holds its
// repo's config.Store, the one write path of the config file: every
// change goes through it, under its lock, so readers see either the old
// config or the new one. The checks of the network settings, whose
// parsers are the network layer's, are added here to config's.

package node

import (
	"cairn/node/config"
	"cairn/node/p2p"
)

// Config returns the config in effect. A config change swaps in a new
// value and never modifies a published one, so callers may keep and read
// what they got without a lock; they must not change it (use ConfigFile.Update).
func (n *Node) Config() *config.Config { return n.cfg.Config() }

// Doc reads the config file as a generic JSON document (unknown
// keys included), consistent with concurrent writers.
func (c *ConfigFile) Doc() (map[string]any, error) { return c.n.cfg.Doc() }

// Replace makes doc the node's config: it must decode as a Config;
// Identity.PrivKey is always the node's own key (whatever doc holds) and
// Identity.PeerID must be empty (filled in) or the node's ID. The file is
// replaced atomically.
func (c *ConfigFile) Replace(doc map[string]any) error { return c.n.cfg.Replace(doc) }

// Update reads the config file, lets fn change the document and
// replaces the config with the result (as ConfigFile.Replace), holding the
// config lock throughout so concurrent updates do not interleave.
func (c *ConfigFile) Update(fn func(doc map[string]any) error) error { return c.n.cfg.Update(fn) }

// ApplyProfile applies the named profile (a key of config.Profiles) to
// the config, as config.Store's ApplyProfile.
func (c *ConfigFile) ApplyProfile(name string, dryRun bool) (before, after map[string]any, err error) {
	n := c.n
	return n.cfg.ApplyProfile(name, dryRun)
}

// CheckConfigDoc reports why doc cannot be a node's config (config.CheckDoc
// with the network checks); it returns the decoded config otherwise.
func CheckConfigDoc(doc map[string]any) (*config.Config, error) {
	return config.CheckDoc(doc, checkNetConfig)
}

// CheckConfigValues is config.CheckValues with the network checks.
func CheckConfigValues(c *config.Config) error { return config.CheckValues(c, checkNetConfig) }

// checkNetConfig parses the network settings as the network layer does:
// Bootstrap, Swarm.AddrFilters, ConnMgr and Swarm.Bandwidth, Routing.Type,
// the URLs of Ipns.DelegatedPublishers and Pubsub.
func checkNetConfig(c *config.Config) error {
	if _, err := bootstrapPeers(c.Bootstrap); err != nil {
		return err
	}
	if _, err := p2p.NewAddrFilters(c.Swarm.AddrFilters); err != nil {
		return err
	}
	if _, err := NetLimitsOf(c); err != nil { // ConnMgr, Swarm.Bandwidth
		return err
	}
	if _, _, _, err := p2p.RoutingModes(c.Routing.Type.WithDefault("")); err != nil {
		return err
	}
	if _, err := delegatedPublishers(c); err != nil {
		return err
	}
	_, _, err := pubsubOptions(c.Pubsub).SeenMessages()
	return err
}
