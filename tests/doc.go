// Package tests holds end-to-end suites that drive the cairn binary and
// its RPC: Kubo CID parity over every shared vector, and real clients; and
// (gateway_browser_test.go) headless Chromium playing and seeking a video
// from the binary's HTTP gateway and showing a directory listing.
package tests
