// net.go: the running network layer: a libp2p host (host.go) with a
// resource manager and a connection manager sized from Limits, the DHT
// (client mode by default), bitswap over the blockstore Start is handed,
// mDNS when enabled (peers.go), pubsub (pubsub.go), stream mounting
// (mount.go) and peering (peering.go); Close stops it all.

package p2p

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/ipfs/boxo/bitswap"
	bsnet "github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/boxo/blockstore"
	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	gometrics "github.com/ipfs/go-metrics-interface"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p-kad-dht/dual"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/discovery/mdns"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	ma "github.com/multiformats/go-multiaddr"
)

// ErrOffline is returned by the parts of a network layer that has
// stopped: Kubo's commands' text (ErrNotOnline), word for word, 'ipfs
// daemon' included, since scripts match it.
var ErrOffline = errors.New("this command must be run in online mode. Try running 'ipfs daemon' first")

// Options is what Start needs, as plain values: the caller reads them
// from its config (the Kubo key each comes from is named).
type Options struct {
	// Key is the node's private key (its peer ID).
	Key crypto.PrivKey
	// UserAgent is announced by identify (AgentVersion).
	UserAgent string
	// Listen are the addresses to listen on (Addresses.Swarm).
	Listen []string
	// Announce, AppendAnnounce and NoAnnounce rewrite the addresses the
	// host advertises (Addresses.Announce, AppendAnnounce, NoAnnounce).
	Announce, AppendAnnounce, NoAnnounce []string
	// NATPortMap asks the router for a port mapping (the opposite of
	// Swarm.DisableNatPortMap).
	NATPortMap bool
	// Limits are the numbers the layer runs with.
	Limits Limits
	// AddrFilters are the denied address ranges (Swarm.AddrFilters).
	AddrFilters []string
	// Routing is the routing type (Routing.Type, or daemon --routing,
	// which wins); see RoutingModes.
	Routing string
	// LoopbackOnLanDHT keeps loopback addresses in the LAN DHT's records
	// (Routing.LoopbackAddressesOnLanDHT).
	LoopbackOnLanDHT bool
	// Bootstrap are the peers dialled at start (Bootstrap, with "auto"
	// already replaced by the defaults); see ParseBootstrap.
	Bootstrap []string
	// MDNS turns on local discovery (Discovery.MDNS.Enabled).
	MDNS bool
	// Pubsub starts pubsub with PubsubOptions.
	Pubsub        bool
	PubsubOptions PubsubOptions
	// Peering are the peers kept connected (Peering.Peers).
	Peering []peer.AddrInfo
	// Datastore holds the DHT's records.
	Datastore ds.Batching
	// Blockstore is what bitswap serves blocks from and stores them into.
	Blockstore blockstore.Blockstore
	// Roots lists the CIDs the periodic reprovide announces (nil: none).
	Roots func(context.Context) ([]cid.Cid, error)
	// ProvideAll, when set (Provide.Strategy "all"), makes the reprovide
	// announce every stored block instead of Roots, with kad-dht's
	// sweeping provider a keyspace slice at a time (sweep.go);
	// SweepBatch is the keys a slice aims at (0: DefaultSweepBatch).
	ProvideAll *AllKeys
	SweepBatch int
}

// Net is the running network layer of an online node.
type Net struct {
	Host host.Host
	// DHT is Kubo's dual DHT: WAN (public addresses only) and LAN
	// (private and, with Options.LoopbackOnLanDHT, loopback peers, on
	// /ipfs/lan/kad/1.0.0). Nil when the routing type is none.
	DHT     *dual.DHT
	Bitswap *bitswap.Bitswap
	ConnMgr *connmgr.BasicConnMgr
	// PubSub is nil unless pubsub is enabled (pubsub.go).
	PubSub *PubSub
	// P2P is libp2p stream mounting (mount.go).
	P2P *P2P
	// Peering keeps the peers of Options.Peering (and swarm/peering/add)
	// connected, redialling with a backoff (peering.go).
	Peering *PeeringService
	BW      *metrics.BandwidthCounter
	Limits  Limits
	Filters *AddrFilters
	Caps    *BandwidthLimiter
	// RoutingType is the effective routing type ("auto" when unset or
	// "default").
	RoutingType string

	capped host.Host // Host, with the bandwidth caps on its streams
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mdns   mdns.Service

	rm       network.ResourceManager
	rmLimits rcmgr.ConcreteLimitConfig // what rm was built with

	provideQ chan cid.Cid
	prov     ProvideStats
	provMu   sync.Mutex
	roots    func(context.Context) ([]cid.Cid, error)
	sweep    *sweeper // nil unless Options.ProvideAll
	// shun holds the peers refused for a while; services, the rate of
	// peers' service streams (shun.go, inbound.go).
	shun     *shunList
	services *serviceRate
	// providers is the DHT's provider store (nil without a DHT).
	providers *cappedProviders
	bwHist    bwHistory
	gone      goneSet // peers that left (peerstore.go)
	closeOnce sync.Once
	closeErr  error
}

// gateSize is how many peer handlers may work at once: one core fewer
// than the node has (CAIRN_PEER_WORK overrides it for measurements; 0
// turns the gate off).
func gateSize() int {
	if v, err := strconv.Atoi(os.Getenv("CAIRN_PEER_WORK")); err == nil {
		return v
	}
	return max(runtime.GOMAXPROCS(0)-1, 1)
}

// Start starts the network layer. Close stops it.
func Start(o Options) (*Net, error) {
	lim := o.Limits
	filters, err := NewAddrFilters(o.AddrFilters)
	if err != nil {
		return nil, err
	}
	caps := NewBandwidthLimiter(lim)
	rtype, wanMode, lanMode, err := RoutingModes(o.Routing)
	if err != nil {
		return nil, err
	}
	boot, err := ParseBootstrap(o.Bootstrap)
	if err != nil {
		return nil, err
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
	str, err := rcmgr.NewStatsTraceReporter()
	if err != nil {
		return nil, err
	}
	rmLimits := partial.Build(concrete)
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(rmLimits), rcmgr.WithTraceReporter(str))
	if err != nil {
		return nil, err
	}
	cm, err := connmgr.NewConnManager(lim.LowWater, lim.HighWater, connmgr.WithGracePeriod(lim.GracePeriod))
	if err != nil {
		rm.Close()
		return nil, err
	}
	bw := metrics.NewBandwidthCounter()
	listen := make([]ma.Multiaddr, 0, len(o.Listen))
	for _, s := range o.Listen {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			cm.Close()
			rm.Close()
			return nil, fmt.Errorf("config Addresses.Swarm: %q: %w", s, err)
		}
		listen = append(listen, m)
	}
	// Peers that flood the DHT with records past its caps, or open
	// identify and ping streams past their rate, are disconnected and
	// refused for a while (shun.go, inbound.go).
	shun := newShunList()
	services := newServiceRate(shun)
	var gate *workGate
	if n := gateSize(); n > 0 {
		gate = newWorkGate(n)
	}
	h, err := newHost(hostConfig{Key: o.Key, ListenAddrs: listen, UserAgent: o.UserAgent,
		RM: rm, CM: cm, Gater: shunGater{AddrFilters: filters, l: shun}, BW: bw, NATPortMap: o.NATPortMap,
		AddrsFactory: announceFactory(o.Announce, o.AppendAnnounce, o.NoAnnounce),
		Services:     services, Gate: gate})
	if err != nil {
		return nil, fmt.Errorf("starting libp2p host: %w", err)
	}
	shun.onShun = func(p peer.ID) { _ = h.Network().ClosePeer(p) }
	nctx, cancel := context.WithCancel(context.Background())
	nt := &Net{Host: h, ConnMgr: cm, BW: bw, Limits: lim, Filters: filters, Caps: caps,
		RoutingType: rtype, ctx: nctx, cancel: cancel, provideQ: make(chan cid.Cid, 1024), roots: o.Roots,
		rm: rm, rmLimits: rmLimits, shun: shun, services: services}
	// Bitswap and the DHT see streams through the bandwidth caps.
	nt.capped = h
	if caps.Enabled() {
		nt.capped = &cappedHost{Host: h, caps: caps}
	}
	if gate != nil {
		nt.capped = &gatedHost{Host: nt.capped, g: gate}
	}
	fail := func(err error) (*Net, error) {
		_ = nt.Close()
		return nil, err
	}
	if rtype != "none" {
		dstore := o.Datastore
		if dstore == nil {
			dstore = dssync.MutexWrap(ds.NewMapDatastore())
		}
		// One provider store for both tables: one count, one cap.
		if nt.providers, err = newCappedProviders(nctx, h.ID(), h.Peerstore(), dstore,
			lim.ProviderRecords, lim.ProviderRecordsPerPeer, shun); err != nil {
			return fail(fmt.Errorf("starting the DHT: %w", err))
		}
		shared := []dht.Option{dht.Datastore(dstore), dht.ProviderStore(nt.providers),
			dht.NamespacedValidator("ipns", ipns.Validator{KeyBook: h.Peerstore()})}
		lan := []dht.Option{dht.Mode(lanMode)}
		if o.LoopbackOnLanDHT {
			lan = append(lan, dht.AddressFilter(nil))
		}
		d, err := dual.New(nctx, nt.capped, dual.DHTOption(shared...),
			dual.WanDHTOption(dht.Mode(wanMode), dht.BootstrapPeers(boot...)), dual.LanDHTOption(lan...))
		if err != nil {
			return fail(fmt.Errorf("starting the DHT: %w", err))
		}
		nt.DHT = d
		if o.ProvideAll != nil {
			if nt.sweep, err = newSweeper(d, *o.ProvideAll, o.SweepBatch); err != nil {
				return fail(err)
			}
		}
	}
	bsopts := []bitswap.Option{
		bitswap.EngineTaskWorkerCount(lim.EngineTaskWorkers),
		bitswap.EngineBlockstoreWorkerCount(lim.EngineBlockstoreWorkers),
		bitswap.TaskWorkerCount(lim.TaskWorkers),
		bitswap.MaxOutstandingBytesPerPeer(lim.MaxOutstandingBytes),
		bitswap.MaxQueuedWantlistEntriesPerPeer(lim.MaxWantlistPerPeer),
		bitswap.ProviderSearchDelay(500 * time.Millisecond),
	}
	bsn := bsnet.NewFromIpfsHost(nt.capped)
	if nt.DHT != nil {
		nt.Bitswap = bitswap.New(gometrics.CtxScope(nctx, "ipfs"), bsn, nt.DHT, o.Blockstore, bsopts...)
	} else {
		nt.Bitswap = bitswap.New(gometrics.CtxScope(nctx, "ipfs"), bsn, nil, o.Blockstore, bsopts...)
	}
	if o.MDNS {
		nt.mdns = mdns.NewMdnsService(h, mdns.ServiceName, &mdnsNotifee{nt: nt})
		if err := nt.mdns.Start(); err != nil {
			return fail(fmt.Errorf("starting mDNS: %w", err))
		}
	}
	if o.Pubsub {
		if nt.PubSub, err = startPubSub(nctx, nt.capped, o.PubsubOptions, lim.PubsubQueueBytes, lim.PubsubTopics); err != nil {
			return fail(err)
		}
	}
	nt.P2P = newP2P(nctx, nt.capped)
	nt.Peering = newPeering(h, peeringBaseDelay)
	for _, ai := range o.Peering {
		nt.Peering.AddPeer(ai)
	}
	nt.wg.Add(1)
	go nt.provider()
	nt.wg.Add(1)
	go nt.sampleBW()
	nt.watchGone()
	nt.wg.Add(1)
	go nt.forgetPeers()
	if len(boot) > 0 {
		nt.wg.Add(1)
		go nt.bootstrap(boot)
	}
	return nt, nil
}

// RoutingModes maps a routing type (Routing.Type, or daemon --routing,
// which wins) to the effective type and the modes of the WAN and LAN
// DHTs. Unset, auto and default are cairn's dhtclient on the WAN, while
// the LAN DHT serves as Kubo's auto does; an explicit dhtclient is a
// client on both, as in Kubo.
func RoutingModes(setting string) (rtype string, wan, lan dht.ModeOpt, err error) {
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

// Close stops the network layer and waits for its goroutines (those
// started with Go too). Calls after the first return its error.
func (nt *Net) Close() error {
	nt.closeOnce.Do(func() { nt.closeErr = nt.close() })
	return nt.closeErr
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
	if nt.sweep != nil {
		nt.sweep.close()
	}
	if nt.DHT != nil {
		errs = append(errs, nt.DHT.Close())
	}
	if nt.providers != nil {
		errs = append(errs, nt.providers.Close())
	}
	errs = append(errs, nt.Host.Close())
	nt.wg.Wait()
	return errors.Join(errs...)
}

// ProviderStats returns the provider records stored for other peers and
// refused past the caps (zero without a DHT).
func (nt *Net) ProviderStats() ProviderStats {
	if nt.providers == nil {
		return ProviderStats{}
	}
	return nt.providers.Stats()
}

// ShunStats are the peers the node refused for a while and the service
// streams it refused past their rate, since start.
type ShunStats struct {
	Shunned        uint64 // times a peer was disconnected and refused (shun.go)
	ServiceRefused uint64 // identify, ping and unnegotiated streams reset past a peer's rate (inbound.go)
}

// ShunStats returns the counts.
func (nt *Net) ShunStats() ShunStats {
	return ShunStats{Shunned: nt.shun.Shunned(), ServiceRefused: nt.services.Refused()}
}

// Ctx is cancelled when the network layer stops.
func (nt *Net) Ctx() context.Context { return nt.ctx }

// Go runs f in a goroutine that Close waits for; f's ctx is Ctx.
func (nt *Net) Go(f func(ctx context.Context)) {
	nt.wg.Add(1)
	go func() {
		defer nt.wg.Done()
		f(nt.ctx)
	}()
}

// CappedHost is Host with the bandwidth caps applied to the streams of
// the protocols it serves and opens (Host itself when there are none).
func (nt *Net) CappedHost() host.Host { return nt.capped }
