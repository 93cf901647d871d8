// Package fleet drives three cairn daemons with a real IPFS Cluster
// (ipfs-cluster-service and ipfs-cluster-ctl v1.1.6, built from the Go
// module proxy by scripts/cluster-install.sh into ~/.cache/cairn-fleet;
// never committed): three cluster peers with crdt consensus and trusted
// peers, each beside one cairn through the ipfshttp connector, and
// cairn's pin/remote against the cluster's own Pinning Service API
// (pinsvcapi). Everything listens on 127.0.0.1 inside a network namespace
// with only loopback up, which the test binary enters itself
// (internal/daemon.EnterNetNS): cluster 1.1.6 has no switch for its NAT
// port mapping, relay client and hole punching, so the namespace is what
// keeps them off any real network; its mDNS is turned off in the config.
//
// The test carries the build tag "fleet" and runs with `make test-fleet`
// (docs/fleet.md). It starts what it needs and stops it by PID. It logs
// the anonymous resident memory (RssAnon, peak of samples every 250 ms)
// of every cairn and cluster peer, the figures of docs/fleet.md.
//
// Environment: CAIRN_BIN (default ../../bin/cairn) and CLUSTER_DIR (default
// the cache of scripts/cluster-install.sh).
package fleet
