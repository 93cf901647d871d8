// Package node is a running cairn node: an open repo with its config,
// identity, store, pins, MFS and, once started, the network layer. Every
// command of package commands and every module works through a *Node;
// nothing here knows about HTTP or argv.
//
// Start with node.go (New, Close, the Node type) and facets.go. A *Node
// hands out one facet per concept, as Kubo's coreapi does: n.Pins(),
// n.UnixFS(), n.Dag(), n.Block(), n.Names(), n.Keys(), n.RemotePins(),
// n.Storage(), n.Network() and n.ConfigFile(). A facet holds its
// concept's methods and state; the Node itself keeps only what every
// concept shares (Config, the store, the DAG service, the identity, MFS,
// StartNet, Close).
//
// # Sub-packages
//
// Each is one concept and never imports node (TestImportRules):
//
//   - config (node/config): the config file's one Go type with Kubo's key
//     names, its one decode path, size grammar, profiles, checks and the
//     one write path (config.Store).
//   - p2p (node/p2p): the libp2p networking layer (host, resource limits,
//     DHT, bitswap, pubsub, peering, stream mounting, the provide queue),
//     handed plain values (p2p.Options) by StartNet.
//   - unixfs (node/unixfs): the file layouts with leaves hashed on every
//     core, the leaf encoder, and the dag-pb decoder of the read paths.
//   - pinsvc (node/pinsvc): the client of the Pinning Service API.
//
// # Files, by facet
//
// The node:
//
//   - node.go: New, Close, OnClose, the Node type.
//   - facets.go: the facet types, their accessors and their state.
//   - repo.go: the repo directory (init, the lock, the api file).
//   - configstore.go: the config of the running node (Config, and the
//     ConfigFile facet: Doc, Replace, Update, ApplyProfile) over
//     config.Store; mounts.go: the Mounts section (ConfigFile.Mounts).
//   - errors.go: the sentinel errors; log.go: the node's logger;
//     version.go: cairn's version and agent string; metrics.go: the
//     Prometheus metrics and Vitals; sysinfo.go: diag/sys.
//
// Files (UnixFS facet):
//
//   - add.go: importing files and directories as UnixFS DAGs with Kubo's
//     layout choices (NewAdder); import.go: the import settings (CID
//     version, hash, chunker, layout) resolved in one place.
//   - dagwriter.go: the DAG services an import writes through (a storage
//     batch, or hashing only); edit.go: boxo builders and editors run
//     against a write session (Dag.Edit).
//   - read.go: streaming a file from the store (FileSize, WriteFile);
//     ls.go: directory listings and the links of any block.
//   - tar.go: a DAG as a tar stream (get); tarfmt.go: Kubo's "ipfs/tar"
//     format (tar add, tar cat); urlstore.go: urlstore add.
//   - welcome.go: what init seeds a repo with (AddWelcomeDocs,
//     PinEmptyDir); initdoc/ holds the welcome texts.
//
// DAGs and blocks (Dag and Block facets):
//
//   - resolve.go: "/ipfs/<cid>/a/b" to the CID it names (Dag.Resolve);
//     dagpath.go: paths through any IPLD data (dag get, dag resolve).
//   - walk.go: depth-first walks with bounded memory (Dag.Walk); car.go:
//     walks that visit each block once, CAR export and import.
//   - block.go: single blocks through the one read path (Block.Get, Size,
//     Remove); verify.go: whole DAGs and blocks checked (Dag.Verify,
//     Block.Verify).
//   - blockstore.go: storage's blocks with the filestore as fallback,
//     and the log of a failed or damaged block read; fetch.go: the read
//     path on an online node (bitswap, prefetch, a damaged block fetched
//     again from peers, and Kubo's offline error for requests marked
//     offline).
//
// Pins, GC and storage (Pins, RemotePins and Storage facets):
//
//   - pins.go: local pins as records in the datastore.
//   - remotepin.go: the remote pinning services of the config, the remote
//     pin workflow (RemotePins.Pin: the request, the node offered as an
//     origin, the wait) and the holds that keep a DAG from GC meanwhile.
//   - gc.go: mark and sweep with a bounded-memory mark; every holder of
//     roots (Pins, the MFS root, RemotePins) names them through one
//     interface, rootSet.
//   - session.go: write sessions, which a running GC sees and which keep
//     the StorageMax cap (Storage.BeginWrite, Block.Put).
//   - filestore.go: blocks whose bytes stay in files (add --nocopy) or
//     behind URLs.
//   - mfs.go: the files commands' tree; mfsops.go: their operations.
//
// Names and keys (Names and Keys facets):
//
//   - names.go: IPNS publishing and resolving through boxo's namesys;
//     dns.go: DNSLink; republish.go: the republisher; ipnsps.go: IPNS
//     over pubsub; delegated.go: HTTP delegated publishing.
//   - clock.go: the node's clock (a seam for tests), and the floor below
//     which no IPNS record is signed (a board booted without the time):
//     the newer of ClockFloor and the last time seen, kept in ClockFile.
//   - keys.go: the keystore (one 0400 file per key, Kubo's layout).
//
// The network (Network facet):
//
//   - net.go: StartNet turns the config into p2p.Options and keeps the
//     node's own part of an online node (the block service over bitswap,
//     IPNS over pubsub); budget.go: the network limits derived from the
//     memory budget (NetLimitsOf).
//   - provide.go: Provide and Reprovide (the pinned roots); p2pmount.go:
//     the node's side of the p2p commands.
//
// Imports run one way: node uses its sub-packages, storage and board, and
// never imports commands, rpc or modules.
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
// replaced whole under config.Store's lock and is reachable only through
// Config, which returns a value that is never modified afterwards (the
// tests run under -race: make test-race). Writes are serialised by
// storage's single writer; write sessions (session.go) let a running GC
// see blocks being added, and the StorageMax cap is checked under one lock
// so that concurrent writers cannot overshoot it together. MFS commands
// bracket their changes with MFS.Begin. Net is nil while offline; it is
// set by StartNet and cleared by Close. Close stops what New and StartNet
// started and waits for it.
package node
