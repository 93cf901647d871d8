// Command bench measures add and cat of a large random file through the
// RPC of a cairn daemon started from bin/cairn, and reports the figures as
// ratios to single-core SHA-256 speed measured in the same run. It also
// reports the daemon's peak RssAnon during each phase, its start-to-ready
// time and the binary size. Only loopback is used.
//
//	go run ./scripts/bench [-size 256] [-bin bin/cairn]
package main
