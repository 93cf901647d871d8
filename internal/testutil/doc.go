// Package testutil holds test helpers: a repo and node in a temp dir, and
// an RPC server on 127.0.0.1:0, and (p2p.go) two nodes with a p2p tunnel
// to a TCP echo server.
//
// # Files
//
//   - testutil.go: a test repo and node (MustInitRepo, MustOpenNode), an RPC
//     server on 127.0.0.1:0 (StartServer), the Kubo vectors' path and
//     OverwriteBlock and FlipBit.
//   - p2p.go: two online nodes with a p2p tunnel to a TCP echo server.
//   - ipnspub.go: IpnsPublisher, a delegated IPNS publisher on 127.0.0.1 that
//     records and checks what it is sent; LocalRecord, a node's own record.
//   - gateway.go: Gateway, a node's HTTP gateway for the module host
//     (the http_ipfs app serves through it).
//   - logs.go: CaptureLog, the lines go-log writes during a test.
//   - chromium.go: FindChromium and LaunchChromium, a headless Chromium
//     and a minimal DevTools client (CDP) on its page; ArtifactDir, where
//     the screenshots are kept.
//   - jsondoc.go: JSONRoundTrip, a document as it reads back from its JSON
//     text.
package testutil
