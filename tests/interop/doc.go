// Package interop checks cairn against a real Kubo (v0.42.0, built from
// the Go module proxy by scripts/bench-kubo.sh into ~/.cache/cairn-bench;
// never committed): both daemons run online on 127.0.0.1 inside a network
// namespace with only loopback up, and the tests compare what each
// computes and fetch blocks from each other.
//
// The tests carry the build tag "interop" and run with `make interop`
// (docs/conformance.md); plain `go test ./...` does not build them. The
// test binary re-runs itself inside `unshare --net` before any test starts
// (internal/daemon.EnterNetNS), so it needs root or user namespaces.
//
// Environment: CAIRN_BIN (default ../../bin/cairn) and KUBO_BIN (default
// the cached Kubo of scripts/bench-kubo.sh).
package interop
