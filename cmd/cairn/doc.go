// Command cairn is a Kubo-compatible IPFS node for small boards.
//
// With a daemon running (an api file in the repo, or --api), commands are
// sent to it over the RPC; without one they open the repo and run here.
//
// # Files
//
//   - main.go: the entry point: global options, choosing between the daemon
//     and an in-process node, running one command.
//   - parse.go: argv against the command table, with Kubo's CLI syntax.
//   - files.go: command-line arguments turned into string arguments and a file
//     tree, as Kubo's CLI does.
//   - clicmds.go: "init" and "daemon" declared like every other command, so
//     their flags parse and their help prints as Kubo's.
//   - daemon.go: what "cairn init" and "cairn daemon" do.
//   - logging.go: the one logging setup of the process (go-log as the only
//     sink).
//   - mount.go: the daemon's FUSE mounts (daemon --mount, the mount command).
package main
