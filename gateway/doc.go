// Package gateway is the node's HTTP gateway: Kubo's path gateway and
// trustless gateway on Addresses.Gateway, read-only, over the node's one
// read path (the store, then peers unless offline or Gateway.NoFetch).
//
// Start from [New] and [Server.Serve]; request.go follows one request
// from its path to its answer. [Server.ServePath] answers one content
// path inside another fasthttp server (the http_ipfs module app), so
// that the node has one implementation of /ipfs/ over HTTP.
//
// # Behaviour
//
// GET and HEAD of /ipfs/<cid>[/path] and /ipns/<name>[/path] answer as
// Kubo 0.43's gateway does: UnixFS files with their type (from the name,
// else sniffed), Range (one part or multipart/byteranges), ETag "<cid>",
// If-None-Match (304), Cache-Control immutable for /ipfs/, ?filename= and
// ?download=true; directories redirect to their trailing slash (301),
// then serve index.html or an HTML listing (ETag
// "DirIndex-<page version>_CID-<cid>"). ?format=raw / car / ipns-record
// and their Accept types are the trustless answers; tar, dag-json,
// dag-cbor, json and cbor the other formats. Every answer carries Kubo's CORS
// headers and Gateway.HTTPHeaders. Anything but /ipfs/, /ipns/, /version
// and the root redirect is 404 (and /routing/v1/, the routing API, while
// Gateway.ExposeRoutingAPI is true): the gateway never serves the RPC.
// CONNECT opens a tunnel to the gateway itself only (connect.go).
//
// # Bounds
//
// A connection guard (internal/connlimit) caps connections and those of
// one client address; requests in flight are capped too (429 with
// Retry-After past it); every request ends within
// Gateway.MaxRequestDuration; heads and writes have deadlines, so a
// client that stops reading is dropped.
//
// # Streaming
//
// A file's bytes are written by the node's UnixFS reader straight into
// the connection's write buffer from fasthttp's own goroutine (body.go):
// no pipe, no copy of the file in memory. Answers of unknown length (a
// CAR, a tar, a listing) are written on the connection itself after the
// handler returns (fasthttp's hijack), one HTTP chunk per write, and the
// connection closes after them.
//
// # Files
//
//   - server.go: the server, its bounds, the headers every answer has,
//     the routes.
//   - connect.go: CONNECT tunnels to the gateway itself.
//   - hostname.go: the Host: known gateway hosts (PublicGateways and the
//     implicit localhost subdomain gateway), subdomains, DNSLink hosts.
//   - request.go: one request: path, format, resolution, ETags, 304,
//     error status codes.
//   - unixfs.go: files, symlinks, directories, byte ranges of content.
//   - ranges.go: the Range header.
//   - listing.go: the HTML listing of a directory.
//   - trustless.go: raw blocks, the CAR options.
//   - car.go: CARs by path, dag-scope, entity-bytes, order and dups.
//   - codec.go: dag-json, dag-cbor, json and cbor blocks.
//   - records.go: IPNS records and tar streams.
//   - redirects.go: _redirects files of subdomain and DNSLink sites.
//   - canonical.go: redirects to canonical content paths (?uri= of the
//     ipfs:// protocol handler, /ipns/<peer ID> to its base36 CIDv1).
//   - routing.go: the Delegated Routing V1 API under /routing/v1/
//     (Gateway.ExposeRoutingAPI): providers, peers, IPNS records.
//   - p2pproxy.go: the libp2p HTTP proxy under /p2p/
//     (Experimental.P2pHttpProxy).
//   - body.go: bodies that stream after the handler returns.
//   - errors.go: error pages.
package gateway
