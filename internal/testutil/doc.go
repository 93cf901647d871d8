// Package testutil holds test helpers: a repo and node in a temp dir, and
// an RPC server on 127.0.0.1:0, and (p2p.go) two nodes with a p2p tunnel
// to a TCP echo server.
package testutil
