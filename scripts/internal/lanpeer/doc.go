// Package lanpeer holds what the commands in scripts/ that play other
// peers of a daemon's LAN share (make attack, make soak): a go-libp2p
// host on loopback, the daemon's peer info read from its RPC, its
// metrics scraped from /debug/metrics/prometheus, and a pubsub
// subscription through its RPC. Everything talks to 127.0.0.1 only; the
// commands run in a network namespace of their own (daemon.EnterNetNS).
//
// # Files
//
//   - lanpeer.go: New, Target, Scrape, Metrics, SubscribeRPC.
package lanpeer
