// net.go: the network layer's setup: a libp2p host (TCP and QUIC, Noise
// and TLS, yamux) with a resource manager and a connection manager sized
// from the memory budget, the DHT (client mode by default), bitswap over
// the node's blockstore, mDNS when enabled; bootstrap, connect and peer
// lookup. Reads that fetch from peers are in fetch.go, announcements in
// provide.go.
//
// Nothing here runs unless StartNet is called (cairn daemon without
// --offline); in-process CLI runs and most tests stay offline.

package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"cairn/node/config"

	"github.com/ipfs/boxo/bitswap"
	bsnet "github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/boxo/blockservice"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/namespace"
	gometrics "github.com/ipfs/go-metrics-interface"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p-kad-dht/dual"
	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
	"github.com/libp2p/go-libp2p/p2p/discovery/mdns"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	ma "github.com/multiformats/go-multiaddr"
)

// Net is the running network layer of an online node.
type Net struct {
	Host host.Host
	// DHT is Kubo's dual DHT: WAN (public addresses only) and LAN
	// (private and, with Routing.LoopbackAddressesOnLanDHT, loopback
	// peers, on /ipfs/lan/kad/1.0.0). Nil when Routing.Type is none.
	DHT     *dual.DHT
	Bitswap *bitswap.Bitswap
	ConnMgr *connmgr.BasicConnMgr
	// PubSub is nil unless pubsub is enabled (pubsub.go).
	PubSub *PubSub
	// P2P is libp2p stream mounting (p2p.go); Node.P2P checks that it
	// is enabled.
	P2P *P2P
	// IpnsPubsub is nil unless IPNS over pubsub is enabled (ipnsps.go).
	IpnsPubsub *IpnsPubsub
	// Peering keeps the peers of Peering.Peers (and swarm/peering/add)
	// connected, redialling with a backoff (peering.go).
	Peering *PeeringService
	BW      *metrics.BandwidthCounter
	Limits  NetLimits
	Filters *AddrFilters
	Caps    *BandwidthLimiter
	// RoutingType is the effective Routing.Type ("auto" when unset or
	// "default"); with auto and autoclient, IPNS records go to
	// Ipns.DelegatedPublishers too (delegated.go).
	RoutingType string

	bserv  blockservice.BlockService
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mdns   mdns.Service

	provideQ chan cid.Cid
	prov     ProvideStats
	provMu   sync.Mutex
	// reprovide announces the pinned roots (set by StartNet).
	reprovide func()
	bwHist    bwHistory
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
	lim, err := NetLimitsOf(cfg)
	if err != nil {
		return err
	}
	filters, err := NewAddrFilters(cfg.Swarm.AddrFilters)
	if err != nil {
		return err
	}
	caps := NewBandwidthLimiter(lim)
	rtype, wanMode, lanMode, err := routingModes(o.Routing, cfg.Routing.Type)
	if err != nil {
		return err
	}
	boot, err := bootstrapPeers(cfg.Bootstrap)
	if err != nil {
		return err
	}

	// Resource manager: libp2p's scaled defaults, then our system caps.
	scaling := rcmgr.DefaultLimits
	addServiceLimits(&scaling)
	concrete := scaling.Scale(lim.LibP2PMemory, 1024)
	partial := concrete.ToPartialLimitConfig()
	partial.System.Memory = rcmgr.LimitVal64(lim.LibP2PMemory)
	partial.System.ConnsInbound = rcmgr.LimitVal(lim.ConnsInbound)
	partial.System.ConnsOutbound = rcmgr.LimitVal(lim.ConnsOutbound)
	partial.System.Conns = rcmgr.LimitVal(lim.ConnsInbound + lim.ConnsOutbound)
	partial.System.Streams = rcmgr.LimitVal(lim.Streams)
	partial.Transient.Memory = rcmgr.LimitVal64(lim.LibP2PMemory / 4)
	injectMetrics()
	str, err := rcmgr.NewStatsTraceReporter()
	if err != nil {
		return err
	}
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(partial.Build(concrete)), rcmgr.WithTraceReporter(str))
	if err != nil {
		return err
	}
	cm, err := connmgr.NewConnManager(lim.LowWater, lim.HighWater, connmgr.WithGracePeriod(lim.GracePeriod))
	if err != nil {
		rm.Close()
		return err
	}
	bw := metrics.NewBandwidthCounter()
	listen := make([]ma.Multiaddr, 0, len(cfg.Addresses.Swarm))
	for _, s := range cfg.Addresses.Swarm {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			cm.Close()
			rm.Close()
			return fmt.Errorf("config Addresses.Swarm: %q: %w", s, err)
		}
		listen = append(listen, m)
	}
	h, err := newHost(hostConfig{Key: n.PrivKey, ListenAddrs: listen, UserAgent: o.UserAgent,
		RM: rm, CM: cm, Gater: filters, BW: bw, NATPortMap: !cfg.Swarm.DisableNatPortMap,
		AddrsFactory: announceFactory(cfg.Addresses)})
	if err != nil {
		return fmt.Errorf("starting libp2p host: %w", err)
	}
	nctx, cancel := context.WithCancel(context.Background())
	nt := &Net{Host: h, ConnMgr: cm, BW: bw, Limits: lim, Filters: filters, Caps: caps,
		RoutingType: rtype, ctx: nctx, cancel: cancel, provideQ: make(chan cid.Cid, 1024)}
	// Bitswap and the DHT see streams through the bandwidth caps.
	var capped host.Host = h
	if caps.Enabled() {
		capped = &cappedHost{Host: h, caps: caps}
	}
	fail := func(err error) error {
		nt.close()
		return err
	}
	if rtype != "none" {
		shared := []dht.Option{dht.Datastore(namespace.Wrap(n.Store.Datastore(), ds.NewKey("/dht"))),
			dht.NamespacedValidator("ipns", ipns.Validator{KeyBook: h.Peerstore()})}
		lan := []dht.Option{dht.Mode(lanMode)}
		if cfg.Routing.LoopbackAddressesOnLanDHT == config.True {
			lan = append(lan, dht.AddressFilter(nil))
		}
		d, err := dual.New(nctx, capped, dual.DHTOption(shared...),
			dual.WanDHTOption(dht.Mode(wanMode), dht.BootstrapPeers(boot...)), dual.LanDHTOption(lan...))
		if err != nil {
			return fail(fmt.Errorf("starting the DHT: %w", err))
		}
		nt.DHT = d
	}
	bstore := &netBlockstore{Blockstore: n.Blocks, n: n}
	bsopts := []bitswap.Option{
		bitswap.EngineTaskWorkerCount(lim.EngineTaskWorkers),
		bitswap.EngineBlockstoreWorkerCount(lim.EngineBlockstoreWorkers),
		bitswap.TaskWorkerCount(lim.TaskWorkers),
		bitswap.MaxOutstandingBytesPerPeer(lim.MaxOutstandingBytes),
		bitswap.MaxQueuedWantlistEntriesPerPeer(lim.MaxWantlistPerPeer),
		bitswap.ProviderSearchDelay(500 * time.Millisecond),
	}
	bsn := bsnet.NewFromIpfsHost(capped)
	if nt.DHT != nil {
		nt.Bitswap = bitswap.New(gometrics.CtxScope(nctx, "ipfs"), bsn, nt.DHT, bstore, bsopts...)
	} else {
		nt.Bitswap = bitswap.New(gometrics.CtxScope(nctx, "ipfs"), bsn, nil, bstore, bsopts...)
	}
	nt.bserv = blockservice.New(bstore, netExchange{nt.Bitswap})
	if cfg.Discovery.MDNS.Enabled {
		nt.mdns = mdns.NewMdnsService(h, mdns.ServiceName, &mdnsNotifee{nt: nt})
		if err := nt.mdns.Start(); err != nil {
			return fail(fmt.Errorf("starting mDNS: %w", err))
		}
	}
	ipnsps := o.IpnsPubsub || cfg.Ipns.UsePubsub == config.True
	if ipnsps || o.Pubsub || cfg.Pubsub.Enabled == config.True {
		if nt.PubSub, err = startPubSub(nctx, capped, cfg.Pubsub, lim.PubsubQueueBytes); err != nil {
			return fail(err)
		}
	}
	nt.P2P = newP2P(nctx, capped)
	if ipnsps {
		if nt.IpnsPubsub, err = startIpnsPubsub(nctx, capped, nt.PubSub); err != nil {
			return fail(fmt.Errorf("starting IPNS over pubsub: %w", err))
		}
	}
	nt.Peering = newPeering(h, peeringBaseDelay)
	for _, ai := range cfg.Peering.Peers {
		nt.Peering.AddPeer(ai)
	}
	n.Net = nt
	n.DAG = merkledag.NewDAGService(nt.bserv)
	n.OnClose(func() error {
		n.DAG = merkledag.NewDAGService(n.localBlockService())
		n.Net = nil
		return nt.close()
	})
	nt.reprovide = func() { _, _ = n.Reprovide(nt.ctx) }
	nt.wg.Add(1)
	go nt.provider()
	nt.wg.Add(1)
	go nt.sampleBW()
	if len(boot) > 0 {
		nt.wg.Add(1)
		go nt.bootstrap(boot)
	}
	if nt.DHT != nil || nt.IpnsPubsub != nil {
		nt.wg.Add(1)
		go func() {
			defer nt.wg.Done()
			n.republishLoop(nt.ctx)
		}()
	}
	return nil
}

// routingModes maps Routing.Type (or daemon --routing, which wins) to
// the effective type and the modes of the WAN and LAN DHTs. Unset, auto
// and default are cairn's dhtclient on the WAN, while the LAN DHT serves
// as Kubo's auto does; an explicit dhtclient is a client on both, as in
// Kubo.
func routingModes(flag string, typ *config.OptionalString) (rtype string, wan, lan dht.ModeOpt, err error) {
	setting := flag
	if setting == "" {
		setting = typ.WithDefault("")
	}
	switch setting {
	case "", "auto", "default":
		return "auto", dht.ModeClient, dht.ModeServer, nil
	case "dhtclient", "autoclient": // autoclient: Kubo's DHT client plus delegated routers (cairn has none) and IPNS publishers
		return setting, dht.ModeClient, dht.ModeClient, nil
	case "dht":
		return setting, dht.ModeAutoServer, dht.ModeServer, nil
	case "dhtserver":
		return setting, dht.ModeServer, dht.ModeServer, nil
	case "none":
		return setting, 0, 0, nil
	}
	return "", 0, 0, fmt.Errorf("config Routing.Type %q: want dhtclient, autoclient, dht, dhtserver or none", setting)
}

// ActiveDHT is the table queries that name no table use, as Kubo picks
// it: the WAN DHT once it has peers, else the LAN DHT. Nil without a DHT.
func (nt *Net) ActiveDHT() *dht.IpfsDHT {
	if nt.DHT == nil {
		return nil
	}
	if nt.DHT.WANActive() {
		return nt.DHT.WAN
	}
	return nt.DHT.LAN
}

func (nt *Net) close() error {
	nt.cancel()
	var errs []error
	if nt.Peering != nil {
		nt.Peering.Close()
	}
	if nt.P2P != nil {
		nt.P2P.close()
	}
	if nt.mdns != nil {
		errs = append(errs, nt.mdns.Close())
	}
	if nt.Bitswap != nil {
		errs = append(errs, nt.Bitswap.Close())
	}
	if nt.DHT != nil {
		errs = append(errs, nt.DHT.Close())
	}
	errs = append(errs, nt.Host.Close())
	nt.wg.Wait()
	return errors.Join(errs...)
}

// Ctx is cancelled when the network layer stops.
func (nt *Net) Ctx() context.Context { return nt.ctx }

// bootstrap dials the bootstrap peers (a few at a time) and refreshes
// the DHT's routing table.
func (nt *Net) bootstrap(peers []peer.AddrInfo) {
	defer nt.wg.Done()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, ai := range peers {
		wg.Add(1)
		sem <- struct{}{}
		go func(ai peer.AddrInfo) {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(nt.ctx, 30*time.Second)
			defer cancel()
			_ = nt.Host.Connect(ctx, ai)
		}(ai)
	}
	wg.Wait()
	if nt.DHT != nil && nt.ctx.Err() == nil {
		_ = nt.DHT.Bootstrap(nt.ctx)
	}
}

type mdnsNotifee struct{ nt *Net }

func (m *mdnsNotifee) HandlePeerFound(ai peer.AddrInfo) {
	if ai.ID == m.nt.Host.ID() {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(m.nt.ctx, 10*time.Second)
		defer cancel()
		_ = m.nt.Host.Connect(ctx, ai)
	}()
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
	var boot []peer.AddrInfo
	for _, s := range expandAuto(list, config.DefaultBootstrap) {
		ai, err := parseBootstrap(s)
		if err != nil {
			return nil, fmt.Errorf("config Bootstrap: %w", err)
		}
		boot = append(boot, ai)
	}
	return boot, nil
}

// parseBootstrap parses a /.../p2p/<id> address.
func parseBootstrap(s string) (peer.AddrInfo, error) {
	m, err := ma.NewMultiaddr(s)
	if err != nil {
		return peer.AddrInfo{}, fmt.Errorf("%q: %w", s, err)
	}
	ai, err := peer.AddrInfoFromP2pAddr(m)
	if err != nil {
		return peer.AddrInfo{}, fmt.Errorf("%q: %w", s, err)
	}
	return *ai, nil
}

// announceFactory applies Addresses.Announce, AppendAnnounce and
// NoAnnounce (exact matches) to the addresses the host advertises.
func announceFactory(a config.Addresses) func([]ma.Multiaddr) []ma.Multiaddr {
	if len(a.Announce) == 0 && len(a.AppendAnnounce) == 0 && len(a.NoAnnounce) == 0 {
		return nil
	}
	parse := func(list []string) []ma.Multiaddr {
		var out []ma.Multiaddr
		for _, s := range list {
			if m, err := ma.NewMultiaddr(s); err == nil {
				out = append(out, m)
			}
		}
		return out
	}
	announce, appendA, no := parse(a.Announce), parse(a.AppendAnnounce), parse(a.NoAnnounce)
	return func(in []ma.Multiaddr) []ma.Multiaddr {
		out := in
		if len(announce) > 0 {
			out = announce
		}
		out = append(append([]ma.Multiaddr{}, out...), appendA...)
		kept := out[:0]
		for _, m := range out {
			drop := false
			for _, x := range no {
				if m.Equal(x) {
					drop = true
				}
			}
			if !drop {
				kept = append(kept, m)
			}
		}
		return kept
	}
}

// Connect dials a peer, looking its addresses up in the DHT when the
// peerstore has none. A dial to the node itself fails at once with the
// error Kubo's host gives.
func (nt *Net) Connect(ctx context.Context, ai peer.AddrInfo) error {
	if ai.ID == nt.Host.ID() {
		return fmt.Errorf("failed to dial: %w", swarm.ErrDialToSelf)
	}
	if len(ai.Addrs) == 0 && len(nt.Host.Peerstore().Addrs(ai.ID)) == 0 {
		found, err := nt.FindPeer(ctx, ai.ID)
		if err != nil {
			return err
		}
		ai = found
	}
	return nt.Host.Connect(ctx, ai)
}

// FindPeer looks a peer's addresses up (peerstore, then DHT).
func (nt *Net) FindPeer(ctx context.Context, p peer.ID) (peer.AddrInfo, error) {
	if addrs := nt.Host.Peerstore().Addrs(p); len(addrs) > 0 {
		return peer.AddrInfo{ID: p, Addrs: addrs}, nil
	}
	if nt.DHT == nil {
		return peer.AddrInfo{}, routing.ErrNotSupported
	}
	ai, err := nt.DHT.FindPeer(ctx, p)
	if errors.Is(err, kb.ErrLookupFailure) {
		// An empty table: Kubo's routers answer "routing: not found".
		err = routing.ErrNotFound
	}
	return ai, err
}
