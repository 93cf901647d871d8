// net.go: starting the network layer (package p2p) from the config, and
// the node's own part of an online node: the block service reads go
// through (fetch.go), IPNS over pubsub (ipnsps.go) and the republisher.
//
// Nothing here runs unless StartNet is called (cairn daemon without
// --offline); in-process CLI runs and most tests stay offline.

package node

import (
	"context"
	"errors"
	"fmt"

	"cairn/node/config"
	"cairn/node/p2p"

	"github.com/ipfs/boxo/blockservice"
	"github.com/ipfs/boxo/ipld/merkledag"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/namespace"
	"github.com/libp2p/go-libp2p/core/peer"
)

// online is the node's state while the network layer runs, set and
// cleared together with Node.Net.
type online struct {
	net *p2p.Net
	// bserv is the block service over bitswap (fetch.go).
	bserv blockservice.BlockService
	// ipnsps is nil unless IPNS over pubsub is enabled (ipnsps.go).
	ipnsps *IpnsPubsub
}

// NetOptions tune StartNet.
type NetOptions struct {
	// UserAgent is announced by identify (AgentVersion).
	UserAgent string
	// Routing, if set, overrides Routing.Type (daemon --routing).
	Routing string
	// Pubsub turns pubsub on whatever Pubsub.Enabled says (daemon
	// --enable-pubsub-experiment).
	Pubsub bool
	// IpnsPubsub turns IPNS over pubsub on whatever Ipns.UsePubsub says
	// (daemon --enable-namesys-pubsub); it starts pubsub too, as Kubo.
	IpnsPubsub bool
}

// Online reports whether the network layer runs.
func (n *Node) Online() bool { return n.Net != nil }

// StartNet starts the network layer from the config. Close stops it.
func (n *Node) StartNet(ctx context.Context, o NetOptions) error {
	if n.Net != nil {
		return errors.New("network already started")
	}
	cfg := n.Config()
	if err := checkRepublishTimes(cfg); err != nil {
		return err
	}
	lim, err := NetLimitsOf(cfg)
	if err != nil {
		return err
	}
	setting := o.Routing
	if setting == "" {
		setting = cfg.Routing.Type.WithDefault("")
	}
	ipnsps := o.IpnsPubsub || cfg.Ipns.UsePubsub == config.True
	injectMetrics()
	bstore := &netBlockstore{Blockstore: n.Blocks, n: n}
	nt, err := p2p.Start(p2p.Options{
		Key:              n.PrivKey,
		UserAgent:        o.UserAgent,
		Listen:           cfg.Addresses.Swarm,
		Announce:         cfg.Addresses.Announce,
		AppendAnnounce:   cfg.Addresses.AppendAnnounce,
		NoAnnounce:       cfg.Addresses.NoAnnounce,
		NATPortMap:       !cfg.Swarm.DisableNatPortMap,
		Limits:           lim,
		AddrFilters:      cfg.Swarm.AddrFilters,
		Routing:          setting,
		LoopbackOnLanDHT: cfg.Routing.LoopbackAddressesOnLanDHT == config.True,
		Bootstrap:        expandAuto(cfg.Bootstrap, config.DefaultBootstrap),
		MDNS:             cfg.Discovery.MDNS.Enabled,
		Pubsub:           ipnsps || o.Pubsub || cfg.Pubsub.Enabled == config.True,
		PubsubOptions:    pubsubOptions(cfg.Pubsub),
		Peering:          cfg.Peering.Peers,
		Datastore:        namespace.Wrap(n.Store.Datastore(), ds.NewKey("/dht")),
		Blockstore:       bstore,
		Roots:            n.pinnedRoots,
		ProvideAll:       n.provideAll(cfg),
		SweepBatch:       int(cfg.Provide.DHT.KeystoreBatchSize.WithDefault(p2p.DefaultSweepBatch)),
	})
	if err != nil {
		return err
	}
	on := &online{net: nt, bserv: blockservice.New(bstore, netExchange{nt.Bitswap})}
	if ipnsps {
		if on.ipnsps, err = startIpnsPubsub(nt.Ctx(), nt.CappedHost(), nt.PubSub); err != nil {
			_ = nt.Close()
			return fmt.Errorf("starting IPNS over pubsub: %w", err)
		}
	}
	n.online = on
	n.Net = nt
	n.DAG = merkledag.NewDAGService(on.bserv)
	n.OnClose(func() error {
		n.DAG = merkledag.NewDAGService(n.localBlockService())
		n.Net = nil
		n.online = nil
		return nt.Close()
	})
	if nt.DHT != nil || on.ipnsps != nil {
		nt.Go(n.republishLoop)
	}
	return nil
}

// IpnsPubsub is the IPNS-over-pubsub router, nil unless it runs.
func (w *Network) IpnsPubsub() *IpnsPubsub {
	n := w.n
	if on := n.online; on != nil {
		return on.ipnsps
	}
	return nil
}

// BandwidthHistory returns up to 60 one-minute samples, oldest first
// (none while offline).
func (w *Network) BandwidthHistory() []p2p.BWSample {
	n := w.n
	if n.Net == nil {
		return nil
	}
	return n.Net.BandwidthHistory()
}

// PeerCount is the number of connected peers (0 while offline).
func (w *Network) PeerCount() int {
	n := w.n
	if n.Net == nil {
		return 0
	}
	return len(n.Net.Host.Network().Peers())
}

// pubsubOptions are the settings of the Pubsub section as the network
// layer takes them.
func pubsubOptions(cfg config.PubsubConfig) p2p.PubsubOptions {
	o := p2p.PubsubOptions{Router: cfg.Router, DisableSigning: cfg.DisableSigning,
		SeenMessagesStrategy: cfg.SeenMessagesStrategy.WithDefault("")}
	if !cfg.SeenMessagesTTL.IsDefault() {
		d := cfg.SeenMessagesTTL.WithDefault(0)
		o.SeenMessagesTTL = &d
	}
	return o
}

// expandAuto replaces Kubo's "auto" placeholder in a list with defaults.
func expandAuto(list, defaults []string) []string {
	var out []string
	for _, s := range list {
		if s == "auto" {
			out = append(out, defaults...)
			continue
		}
		out = append(out, s)
	}
	return out
}

// bootstrapPeers parses the Bootstrap list ("auto" is Kubo's defaults).
func bootstrapPeers(list []string) ([]peer.AddrInfo, error) {
	return p2p.ParseBootstrap(expandAuto(list, config.DefaultBootstrap))
}
