// Command netbench measures a transfer between two cairn daemons on
// loopback: daemon A adds a random file, daemon B (memory budget
// -budget MiB, with -peers extra libp2p peers connected to it) cats it
// through bitswap. It prints B's peak RssAnon during the transfer against
// the budget, and the transfer speed as a ratio to cat from A's local
// store. Both daemons use the test profile (loopback only, no bootstrap,
// no mDNS). Exit status 1 if the peak passes the budget.
//
//	go run ./scripts/netbench [-size 256] [-peers 50] [-budget 256] [-bin bin/cairn]
//
// With -p2p it measures p2p forwarding instead (make bench-p2p): a TCP
// echo server behind p2p/listen on B, reached through p2p/forward on A
// (both daemons with Experimental.Libp2pStreamMounting), -size MiB sent
// and echoed back at once, -runs times, each run beside a direct
// loopback connection to the same echo server; it prints the medians,
// their ratio and the daemons' peak RssAnon.
//
//	go run ./scripts/netbench -p2p [-size 256] [-runs 3] [-bin bin/cairn]
//
// # Files
//
//   - main.go: the transfer through bitswap between two daemons.
//   - p2p.go: the -p2p mode.
package main
