// host.go: the libp2p host, assembled from go-libp2p's parts (peerstore,
// swarm, upgrader, transports, basic host) rather than with libp2p.New,
// and the addresses it advertises (announceFactory).
//
// Why not libp2p.New: the go-libp2p package and its config package
// import every transport go-libp2p has (WebRTC, WebTransport, WebSocket,
// the relay client and service, AutoNAT v2) and the fx/dig dependency
// injector; a package's imports are linked with it whatever options are
// used, so libp2p.New alone carried pion/webrtc and its ~15 modules,
// quic-go's http3, fx, dig and more into the binary (about 4.5 MB of
// the arm64 release build, docs/performance.md). cairn runs only what
// Kubo 0.42 needs to talk to Kubo: TCP and QUIC v1, Noise and TLS,
// yamux, identify, ping and the AutoNAT v1 client; newHost builds that
// host the way libp2p.New would with cairn's options (DisableRelay,
// DisableMetrics, no hole punching, no AutoNAT service or v2).

package p2p

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"

	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/p2p/host/autonat"
	bhost "github.com/libp2p/go-libp2p/p2p/host/basic"
	"github.com/libp2p/go-libp2p/p2p/host/eventbus"
	"github.com/libp2p/go-libp2p/p2p/host/observedaddrs"
	"github.com/libp2p/go-libp2p/p2p/host/peerstore/pstoremem"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	tptu "github.com/libp2p/go-libp2p/p2p/net/upgrader"
	circuit "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	"github.com/libp2p/go-libp2p/p2p/protocol/identify"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
	quicgo "github.com/quic-go/quic-go"
	"golang.org/x/crypto/hkdf"
)

// hostConfig is what newHost needs.
type hostConfig struct {
	Key         crypto.PrivKey
	ListenAddrs []ma.Multiaddr
	UserAgent   string // identify's AgentVersion; "" for go-libp2p's default
	RM          network.ResourceManager
	CM          connmgr.ConnManager
	Gater       connmgr.ConnectionGater
	BW          metrics.Reporter
	NATPortMap  bool
	// AddrsFactory, if set, rewrites the addresses the host advertises.
	AddrsFactory func([]ma.Multiaddr) []ma.Multiaddr
	// Services, if set, is the rate of peers' service streams
	// (inbound.go); nil lets them open as many as they like.
	Services *serviceRate
	// Gate, if set, is the peer work gate inbound security handshakes
	// pass (gate.go).
	Gate *workGate
}

// libp2pHost is the running host: the basic host plus the parts it does
// not close itself.
type libp2pHost struct {
	*bhost.BasicHost
	obs  *observedaddrs.Manager
	quic *quicreuse.ConnManager
}

// Close stops the host (which closes the swarm, the peerstore, the
// connection and resource managers), then the observed-address manager
// and the shared QUIC sockets.
func (h *libp2pHost) Close() error {
	err := h.BasicHost.Close()
	return errors.Join(err, h.obs.Close(), h.quic.Close())
}

// newHost builds and starts the host and listens on c.ListenAddrs (an
// error only when none of them can be listened on, as libp2p.New). On
// error it has closed c.RM and c.CM.
func newHost(c hostConfig) (_ host.Host, err error) {
	var closers []func() error
	cleanup := func() {
		for _, f := range slices.Backward(closers) {
			_ = f()
		}
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	closers = append(closers, c.RM.Close, c.CM.Close)

	id, err := peer.IDFromPrivateKey(c.Key)
	if err != nil {
		return nil, err
	}
	ps, err := pstoremem.NewPeerstore()
	if err != nil {
		return nil, err
	}
	closers = append(closers, ps.Close)
	if err := ps.AddPrivKey(id, c.Key); err != nil {
		return nil, err
	}
	if err := ps.AddPubKey(id, c.Key.GetPublic()); err != nil {
		return nil, err
	}

	// QUIC's stateless reset and token keys are derived from the node's
	// key, so they survive a restart.
	resetKey, tokenKey, err := quicKeys(c.Key)
	if err != nil {
		return nil, err
	}
	rm := c.RM
	qcm, err := quicreuse.NewConnManager(resetKey, tokenKey,
		quicreuse.ConnContext(func(ctx context.Context, ci *quicgo.ClientInfo) (context.Context, error) {
			addr, err := quicreuse.ToQuicMultiaddr(ci.RemoteAddr, quicgo.Version1)
			if err != nil {
				addr = nil // the resource manager decides without it
			}
			scope, err := rm.OpenConnection(network.DirInbound, false, addr)
			if err != nil {
				return ctx, err
			}
			ctx = network.WithConnManagementScope(ctx, scope)
			context.AfterFunc(ctx, scope.Done)
			return ctx, nil
		}),
		quicreuse.VerifySourceAddress(func(addr net.Addr) bool { return rm.VerifySourceAddress(addr) }))
	if err != nil {
		return nil, err
	}
	closers = append(closers, qcm.Close)

	// The event bus reports to the default Prometheus registry, as it
	// does under libp2p.New even with metrics disabled.
	bus := eventbus.NewBus(eventbus.WithMetricsTracer(eventbus.NewMetricsTracer()))
	sw, err := swarm.NewSwarm(id, ps, bus,
		swarm.WithUDPBlackHoleSuccessCounter(&swarm.BlackHoleSuccessCounter{N: 100, MinSuccesses: 5, Name: "UDP"}),
		swarm.WithIPv6BlackHoleSuccessCounter(&swarm.BlackHoleSuccessCounter{N: 100, MinSuccesses: 5, Name: "IPv6"}),
		swarm.WithMetrics(c.BW),
		swarm.WithConnectionGater(c.Gater),
		swarm.WithResourceManager(c.RM))
	if err != nil {
		return nil, err
	}
	closers = append(closers, sw.Close)

	// Security in order of preference (Noise, then TLS), then yamux.
	muxers := []tptu.StreamMuxer{{ID: yamux.ID, Muxer: yamux.DefaultTransport}}
	nt, err := noise.New(noise.ID, c.Key, muxers)
	if err != nil {
		return nil, err
	}
	tt, err := libp2ptls.New(libp2ptls.ID, c.Key, muxers)
	if err != nil {
		return nil, err
	}
	secs := []sec.SecureTransport{nt, tt}
	if c.Gate != nil {
		secs = []sec.SecureTransport{gatedSecurity{nt, c.Gate}, gatedSecurity{tt, c.Gate}}
	}
	up, err := tptu.New(secs, muxers, nil, c.RM, c.Gater)
	if err != nil {
		return nil, err
	}
	tcpT, err := tcp.NewTCPTransport(up, c.RM, nil)
	if err != nil {
		return nil, err
	}
	quicT, err := quic.NewTransport(c.Key, qcm, nil, c.Gater, c.RM)
	if err != nil {
		return nil, err
	}
	if err := sw.AddTransport(tcpT); err != nil {
		return nil, err
	}
	if err := sw.AddTransport(quicT); err != nil {
		return nil, err
	}

	obs, err := observedaddrs.NewManager(bus, sw)
	if err != nil {
		return nil, err
	}
	closers = append(closers, obs.Close)
	opts := &bhost.HostOpts{
		EventBus:             bus,
		ConnManager:          c.CM,
		EnablePing:           true,
		UserAgent:            c.UserAgent,
		ObservedAddrsManager: obs,
	}
	if c.AddrsFactory != nil {
		opts.AddrsFactory = c.AddrsFactory
	}
	if c.NATPortMap {
		opts.NATManager = bhost.NewNATManager
	}
	bh, err := bhost.NewHost(sw, opts)
	if err != nil {
		return nil, err
	}
	if c.Services != nil {
		sw.SetStreamHandler(inboundHandler(bh.Mux(), c.Services))
	}
	// From here the host closes the swarm, the peerstore and both managers.
	closers = []func() error{qcm.Close, obs.Close, bh.Close}
	if err := sw.Listen(c.ListenAddrs...); err != nil {
		return nil, err
	}
	obs.Start(sw)
	bh.Start()

	// The AutoNAT v1 client (no service), asking peers about the public
	// addresses only, as libp2p.New sets it up.
	addrs := func() []ma.Multiaddr {
		all := bh.AllAddrs()
		if c.AddrsFactory != nil {
			all = slices.Clone(c.AddrsFactory(all))
		}
		return slices.DeleteFunc(all, func(a ma.Multiaddr) bool { return !manet.IsPublicAddr(a) })
	}
	an, err := autonat.New(bh, autonat.UsingAddresses(addrs))
	if err != nil {
		return nil, fmt.Errorf("autonat: %w", err)
	}
	bh.SetAutoNat(an)
	return &libp2pHost{BasicHost: bh, obs: obs, quic: qcm}, nil
}

// announceFactory applies Announce, AppendAnnounce and NoAnnounce
// (exact matches) to the addresses the host advertises.
func announceFactory(announceList, appendList, noList []string) func([]ma.Multiaddr) []ma.Multiaddr {
	if len(announceList) == 0 && len(appendList) == 0 && len(noList) == 0 {
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
	announce, appendA, no := parse(announceList), parse(appendList), parse(noList)
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

// quicKeys derives QUIC's stateless reset key and token generator key
// from the node's private key (HKDF-SHA256, go-libp2p's info strings, so
// the keys are the ones libp2p.New derived).
func quicKeys(k crypto.PrivKey) (reset quicgo.StatelessResetKey, token quicgo.TokenGeneratorKey, err error) {
	raw, err := k.Raw()
	if err != nil {
		return reset, token, err
	}
	if _, err := io.ReadFull(hkdf.New(sha256.New, raw, nil, []byte("libp2p quic stateless reset key")), reset[:]); err != nil {
		return reset, token, err
	}
	_, err = io.ReadFull(hkdf.New(sha256.New, raw, nil, []byte("libp2p quic token generator key")), token[:])
	return reset, token, err
}

// addServiceLimits sets the resource limits of go-libp2p's own services
// to the values its SetDefaultServiceLimits gives them (that function
// lives in the go-libp2p package, which newHost does not link).
func addServiceLimits(c *rcmgr.ScalingLimitConfig) {
	type lim = rcmgr.BaseLimit
	type inc = rcmgr.BaseLimitIncrease
	const idPeerMem = 32 * (256<<20 + 16<<10)
	c.AddServiceLimit(identify.ServiceName,
		lim{StreamsInbound: 64, StreamsOutbound: 64, Streams: 128, Memory: 4 << 20},
		inc{StreamsInbound: 64, StreamsOutbound: 64, Streams: 128, Memory: 4 << 20})
	c.AddServicePeerLimit(identify.ServiceName, lim{StreamsInbound: 16, StreamsOutbound: 16, Streams: 32, Memory: 1 << 20}, inc{})
	for _, id := range [...]protocol.ID{identify.ID, identify.IDPush} {
		c.AddProtocolLimit(id,
			lim{StreamsInbound: 64, StreamsOutbound: 64, Streams: 128, Memory: 4 << 20},
			inc{StreamsInbound: 64, StreamsOutbound: 64, Streams: 128, Memory: 4 << 20})
		c.AddProtocolPeerLimit(id, lim{StreamsInbound: 16, StreamsOutbound: 16, Streams: 32, Memory: idPeerMem}, inc{})
	}
	// A service and its protocol get the same limits.
	both := func(name string, id protocol.ID, l lim, i inc, peer lim) {
		c.AddServiceLimit(name, l, i)
		c.AddProtocolLimit(id, l, i)
		c.AddServicePeerLimit(name, peer, inc{})
		c.AddProtocolPeerLimit(id, peer, inc{})
	}
	both(ping.ServiceName, ping.ID,
		lim{StreamsInbound: 64, StreamsOutbound: 64, Streams: 64, Memory: 4 << 20},
		inc{StreamsInbound: 64, StreamsOutbound: 64, Streams: 64, Memory: 4 << 20},
		lim{StreamsInbound: 2, StreamsOutbound: 3, Streams: 4, Memory: idPeerMem})
	both(autonat.ServiceName, autonat.AutoNATProto,
		lim{StreamsInbound: 64, StreamsOutbound: 64, Streams: 64, Memory: 4 << 20},
		inc{StreamsInbound: 4, StreamsOutbound: 4, Streams: 4, Memory: 2 << 20},
		lim{StreamsInbound: 2, StreamsOutbound: 2, Streams: 2, Memory: 1 << 20})
	both(holepunch.ServiceName, holepunch.Protocol,
		lim{StreamsInbound: 32, StreamsOutbound: 32, Streams: 64, Memory: 4 << 20},
		inc{StreamsInbound: 8, StreamsOutbound: 8, Streams: 16, Memory: 4 << 20},
		lim{StreamsInbound: 2, StreamsOutbound: 2, Streams: 2, Memory: 1 << 20})
	c.AddServiceLimit(relayv2.ServiceName,
		lim{StreamsInbound: 256, StreamsOutbound: 256, Streams: 256, Memory: 16 << 20},
		inc{StreamsInbound: 256, StreamsOutbound: 256, Streams: 256, Memory: 16 << 20})
	c.AddServicePeerLimit(relayv2.ServiceName, lim{StreamsInbound: 64, StreamsOutbound: 64, Streams: 64, Memory: 1 << 20}, inc{})
	for _, id := range [...]protocol.ID{circuit.ProtoIDv2Hop, circuit.ProtoIDv2Stop} {
		c.AddProtocolLimit(id,
			lim{StreamsInbound: 640, StreamsOutbound: 640, Streams: 640, Memory: 16 << 20},
			inc{StreamsInbound: 640, StreamsOutbound: 640, Streams: 640, Memory: 16 << 20})
		c.AddProtocolPeerLimit(id, lim{StreamsInbound: 128, StreamsOutbound: 128, Streams: 128, Memory: 32 << 20}, inc{})
	}
}
