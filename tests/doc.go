// Package tests holds end-to-end suites that drive the cairn binary and
// its RPC: Kubo CID parity over every shared vector, and real clients.
package tests
