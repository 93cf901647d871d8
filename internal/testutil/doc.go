// Package testutil holds test helpers: a repo and node in a temp dir, and
// an RPC server on 127.0.0.1:0.
package testutil
