// Package benchutil holds what the benchmark commands in scripts/ share:
// reading a daemon's memory from /proc, waiting for its RPC, and streaming
// add and cat through it. Everything talks to 127.0.0.1 only.
package benchutil
