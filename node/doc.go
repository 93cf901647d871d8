// Package node is a running cairn node: an open repo with its config,
// identity, store, pins, MFS and, once started, the network layer. Every
// command of httprpc and every module works through a *Node; nothing here
// knows about HTTP or argv.
//
// Start with node.go (New, Close, the Node type), then follow a request:
//
//   - add.go imports files as UnixFS DAGs with Kubo's layout choices, through
//     a write session (session.go) so that GC and the StorageMax cap see
//     every block; pins.go records the pin; leafhash.go is the balanced
//     layout with its leaves built and hashed on every core.
//   - read.go streams a file block by block from the store, decoding
//     dag-pb with pbdecode.go; resolve.go and dagpath.go turn paths into
//     CIDs; tar.go and car.go write archives.
//   - fetch.go is the read path on an online node: a block missing from the
//     store (blockstore.go, which also serves filestore references) is
//     fetched with bitswap, and the DAG below it prefetched; block.go gives
//     single blocks through it (GetBlock, BlockSize), and a request marked
//     offline (OfflineContext) answers Kubo's offline error instead.
//   - net.go starts the network layer (package p2p) from the config with
//     the limits of budget.go, and holds the node's own part of an online
//     node; provide.go announces content (the pinned roots to reprovide);
//     p2pmount.go is the node's side of the p2p commands (whether they are
//     on, and a forward's target).
//   - the config file is package config (node/config: the type with Kubo's
//     key names, profiles, checks, the one write path); configstore.go is
//     the running node's use of it; repo.go is the repo directory (init,
//     lock, api file).
//   - keys.go is the keystore: named keys for IPNS in <repo>/keystore (one
//     0400 file per key, Kubo's layout), checked at start by CheckKeystore.
//   - gc.go collects garbage with a bounded-memory mark (walk.go) while adds
//     and reads go on; mfs.go is the files commands' tree and mfsops.go
//     their operations (cp, mv, mkdir, rm, read, write, add --to-files).
//
// The network layer is package p2p (node/p2p): the libp2p host, the DHT,
// bitswap, pubsub, peering, stream mounting and the provide queue. StartNet
// hands it plain values (p2p.Options), not the config, and Node.Net is the
// running *p2p.Net; what needs the node's own state stays in node: the
// read path over bitswap (fetch.go), IPNS over pubsub and the republisher,
// and which roots to reprovide.
//
// Imports run one way: node uses storage and board (leaves that import
// nothing of cairn's; the config's Budget section is board.Budget) and
// never imports httprpc or modules.
//
// # Errors
//
// The sentinel errors are in errors.go, one documented value each; texts
// that Kubo clients match on are Kubo's, word for word. Errors are wrapped
// on the way up with %w, so callers test them with errors.Is (for example
// ErrStorageFull from any write, ErrOffline from any network command). A
// missing block is boxo's ipld.ErrNotFound naming the block (IsNotFound).
//
// # Concurrency
//
// A Node is safe for concurrent use by many requests. The config is
// replaced whole under a lock by the config commands and is reachable only
// through Config, which returns a value that is never modified afterwards
// (the tests run under -race: make test-race). Writes are
// serialised by storage's single writer; write sessions (session.go) let a
// running GC see blocks being added, and the StorageMax cap is checked
// under one lock so that concurrent writers cannot overshoot it together.
// MFS commands bracket their changes with MFS.Begin. Net is nil while
// offline; it is set by StartNet and cleared by Close. Close stops what
// New and StartNet started and waits for it.
package node
