// Package p2p is the network layer of an online node: the libp2p host, the
// DHT, bitswap, pubsub, peering, stream mounting (the p2p commands) and
// the announcement of content. It knows nothing of the node, its config
// or its store: Start is handed plain values in Options (the key, the
// addresses, Limits, the filters, the routing type, the bootstrap and
// peering peers, the pubsub settings, a datastore for the DHT and a
// blockstore for bitswap) and returns a *Net, which Close stops. The node
// (package node) reads its config into Options, keeps what needs its own
// state (the read path over bitswap, IPNS, the pinned roots to reprovide)
// and reaches the network through Net's fields and methods.
//
// Start with net.go (Options, Start, Net, Close), then:
//
//   - host.go: the libp2p host, assembled from go-libp2p's parts (TCP and
//     QUIC, Noise and TLS, yamux, identify, ping, the AutoNAT v1 client)
//     rather than with libp2p.New, and the resource limits of go-libp2p's
//     own services; the addresses it advertises (Addresses.Announce,
//     AppendAnnounce, NoAnnounce).
//   - peers.go: the bootstrap peers and mDNS at start, Connect and
//     FindPeer (peerstore, then DHT).
//   - limits.go: Limits, the numbers the layer runs with (resource
//     manager, connection manager, bitswap, pubsub queues, provider
//     records, bandwidth caps); the node derives them from the memory budget.
//   - resources.go: the resource manager's limits beside its usage, scope
//     by scope (swarm/resources).
//   - addrfilter.go: AddrFilters, the denied address ranges
//     (Swarm.AddrFilters, swarm/filters) as a connection gater.
//   - gate.go: the work gate: how many handlers of streams peers opened,
//     and security handshakes of connections they opened, work at once
//     (a core fewer than the node has), so that floods of peer messages
//     or dials leave cores to the RPC and the gateway.
//   - bwcap.go: BandwidthLimiter, the bandwidth caps (Swarm.Bandwidth) as
//     token buckets on the streams of bitswap, the DHT, pubsub and
//     stream mounting (CappedHost).
//   - bwhistory.go: the traffic of the last hour, minute by minute.
//   - provide.go: the provide queue drained at a bounded rate, the
//     reprovide every 22 hours of what Options.Roots lists (or of every
//     stored block, sweep.go), and the counters of stats/provide.
//   - sweep.go: the reprovide of every stored block (Options.ProvideAll)
//     through kad-dht's sweeping providers, a keyspace slice at a time.
//   - providers.go: the DHT's provider store, kad-dht's with caps on the
//     records it keeps for other peers, in all and per peer
//     (Limits.ProviderRecords), a slack past the cap for peers holding
//     few that the next count evicts back from the largest holders, and
//     their counts (ProviderStats).
//   - inbound.go: the handler of the streams peers open (negotiation as
//     go-libp2p's basic host does it), with a per-peer token bucket on
//     identify, ping and unnegotiated streams (16, then one a second).
//   - shun.go: peers that keep sending provider records past those caps
//     (1,024 refused) or opening service streams past their rate (64
//     refused) are disconnected and refused for 30 s; the connection
//     gater (the address filters and those peers).
//   - pubsub.go: PubSub, gossipsub or floodsub as Kubo runs it, with
//     subscriptions whose queue is bounded.
//   - pubsubrate.go: the rate at which one peer's messages enter pubsub's
//     validation (PubsubPeerRate), so that a few flooding peers leave
//     room for the others.
//   - peerstore.go: forgetting the peerstore records of peers that left
//     a minute ago and are not needed (routing table, peering, provider
//     records).
//   - peering.go: PeeringService, which keeps a set of peers connected
//     (Peering.Peers, swarm/peering).
//   - mount.go: P2P, libp2p stream mounting (p2p/forward, p2p/listen and
//     their streams).
//
// The loggers keep Kubo's names ("peering", "p2p-mount").
//
// # Errors
//
// ErrOffline (Kubo's text) is what the parts of a stopped layer answer;
// the node's ErrOffline is the same value. Texts that Kubo clients match
// on (ErrPubsubDisabled, ErrMountingDisabled, ErrListenerExists,
// ErrProtocolNamespace) are Kubo's, word for word.
//
// # Concurrency
//
// A Net is safe for concurrent use. Its goroutines, and those started
// with Go, end when Close returns; Ctx is cancelled when Close starts.
package p2p
