// Package commands holds cairn's RPC commands: the Kubo-compatible command
// families (add, cat, block, dag, pin, files, swarm, ...) declared as data
// and served by the wire framework in package rpc.
//
// Start with root.go: the global options, the list of families and
// DefaultTable, which the daemon serves and the CLI parses against. Each
// family is one file (add.go, block.go, dag.go, files.go, swarm.go,
// ping.go, bootstrap.go, version.go, commands.go, shutdown.go, ...), as in
// Kubo's core/commands/: a `var <family>Commands = []*rpc.Command{...}` with
// the options, arguments, output shape and text renderer of each command,
// and Run functions that decode the request and call package node (files.go,
// for one, checks paths and options and calls node's MFS methods; block
// and dag reads go through node.GetBlock and its read path). Families write
// the framework's names with their package, rpc.Request, rpc.Emitter,
// rpc.OutStream, as Kubo's families write cmds.Request. Helpers several
// families share are in helpers.go; pending.go lists the commands of the
// reference this build lacks, which answer a clear error; progress.go draws
// the CLI progress bar.
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
