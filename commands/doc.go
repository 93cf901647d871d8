// Package commands holds cairn's RPC commands: the Kubo-compatible command
// families (add, cat, block, dag, pin, files, swarm, ...) declared as data
// and served by the wire framework in package rpc.
//
// Start with root.go: the global options, the list of families and
// DefaultTable, which the daemon serves and the CLI parses against. Each
// family is one file, as in Kubo's core/commands/: a
// `var <family>Commands = []*rpc.Command{...}` with the options, arguments,
// output shape and text renderer of each command, and Run functions that
// decode the request and call package node (files.go, for one, checks paths
// and options and calls node's MFS methods; block and dag reads go through
// n.Block().Get and its read path). Families write the framework's names
// with their package, rpc.Request, rpc.Emitter, rpc.OutStream, as Kubo's
// families write cmds.Request.
//
// The families: add.go, bitswap.go (bitswap, stats/bitswap, stats/bw),
// block.go, bootstrap.go, cat.go, cid.go, commands.go, config.go and
// configedit.go (config edit, CLI only), dag.go, dht.go, diag.go (with
// profile.go, the collectors of diag/profile), filels.go (file/ls),
// files.go, filestore.go, get.go, id.go, ipnsps.go (name/pubsub), key.go,
// log.go, ls.go, mount.go, name.go (and dns), object.go, p2p.go,
// peering.go (swarm/peering), pin.go, ping.go, pubsub.go, refs.go,
// remotepin.go (pin/remote), repo.go, resolve.go, routing.go, shutdown.go,
// swarm.go, tar.go, update.go (CLI only), version.go. Helpers several
// families share are in helpers.go; pending.go lists the commands of the
// reference this build lacks, which answer a clear error; progress.go draws
// the CLI progress bar; readme.go renders the README's command table from
// the table.
//
// A family's tests are in its own test file (pin_test.go tests pin.go);
// root_test.go holds the tests of the whole table (the wire golden files in
// testdata/wire, the options each Run reads, multipart without a body, the
// decoding fuzz target); doc_test.go checks the rule below; three files
// test what crosses families: net_test.go (nodes talking to each other),
// metrics_test.go (the metrics scrape after real commands ran),
// unixfsmeta_test.go (UnixFS mode and mtime through add, ls and files);
// helpers_test.go holds the helpers the test files share.
//
// Families do not import any HTTP package (TestFamiliesDoNotTouchHTTP):
// what a command sees is an *rpc.Request (arguments, typed options, file
// arguments, the node) and an rpc.Emitter. The same Run serves HTTP, the
// CLI without a daemon, and tests (rpc.Call).
//
// # Errors
//
// A Run returns Kubo's error text for Kubo's case. Errors that are the
// caller's fault are built with rpc.ClientError (HTTP 400); other errors are
// answered 500 with Code 0, as Kubo does. Option and argument errors never
// reach Run: the framework answers them (see rpc's doc). Commands that need
// the network answer errOffline when the node runs without it.
//
// # Concurrency
//
// Commands run concurrently, each in its own goroutine, against one shared
// *node.Node, which does its own locking. A Run must return when r.Ctx is
// done and when Emit or Write fails (the client went). The command table
// and the families' vars are static after init; nothing here keeps state
// across requests.
package commands
