// Package daemon starts real cairn and Kubo daemons as processes, for the
// side-by-side benchmarks (scripts/bench, scripts/benchboard,
// scripts/benchscale) and the interop tests (tests/interop, make interop).
//
// Every daemon gets a fresh repo inited with the test profile (RPC on
// 127.0.0.1 at a random port, swarm on 127.0.0.1, no bootstrap, no mDNS),
// and the callers run inside a network namespace with only loopback up
// (EnterNetNS), so nothing started here can reach past 127.0.0.1.
//
// # Concurrency
//
// A Daemon's methods may be called from several goroutines; Stop,
// Terminate and Kill once per start.
//
// # Files
//
//   - daemon.go: StartCairn and StartKubo, the Daemon they return (CLI,
//     Post, Restart, Stop, Terminate, Kill), and the network namespace
//     (EnterNetNS, LoopbackOnly).
package daemon
