// clicmds.go: "init" and "daemon", declared like every other command
// (arguments, options, help), so that the CLI parses their flags with
// Kubo's syntax and prints Kubo-style help for them. They run only here,
// never over the RPC.

package main

import (
	"fmt"
	"io"

	"cairn/commands"
	"cairn/rpc"
)

var initCommand = &rpc.Command{
	Path:     "init",
	Synopsis: "Initializes cairn config file.",
	Help: `Initializes cairn configuration files and generates a new keypair.

For the list of available profiles see 'cairn config profile --help'.
For a board, --board=NAME (or auto) sizes the memory budget and
Datastore.StorageMax for it; --board=list shows the known boards.

cairn uses a repository in the local file system. By default, the repo is
located at ~/.cairn. To change the repo location, set the $CAIRN_PATH
environment variable:

    export CAIRN_PATH=/path/to/cairnrepo`,
	Args: []rpc.Arg{{Name: "default-config", Help: "Initialize with the given configuration."}},
	Options: []rpc.Option{
		{Names: []string{"algorithm", "a"}, Type: rpc.String, Default: "ed25519", Help: "Cryptographic algorithm to use for key generation."},
		{Names: []string{"bits", "b"}, Type: rpc.Int, Help: "Number of bits to use in the generated RSA private key."},
		{Names: []string{"empty-repo", "e"}, Type: rpc.Bool, Default: true, Help: "Don't add and pin help files to the local storage."},
		{Names: []string{"profile", "p"}, Type: rpc.String, Help: "Apply profile settings to config. Multiple profiles can be separated by ','"},
		{Names: []string{"board"}, Type: rpc.String, Help: "Board profile (pi-zero-2w, pi3, pi4-8g, ...; auto to detect; list to show them)."},
		{Names: []string{"budget"}, Type: rpc.Int, Help: "Memory budget in MiB (default: the board's)."},
		{Names: []string{"storage-max"}, Type: rpc.String, Help: "Datastore.StorageMax (default with --board: 90% of the free disk)."},
	},
	NoRemote: true,
}

var daemonCommand = &rpc.Command{
	Path:     "daemon",
	Synopsis: "Run a network-connected node.",
	Help: `'cairn daemon' runs a persistent cairn daemon that can serve commands
over the network. Most applications that use IPFS will do so by
communicating with a daemon over the HTTP API. While the daemon is
running, calls to 'cairn' commands will be sent over the network to
the daemon.

The daemon listens on the addresses of 'cairn config Addresses': the RPC
on Addresses.API (127.0.0.1:5001 by default), libp2p on Addresses.Swarm.
Binding the RPC beyond loopback needs API.Authorizations (or, at your own
risk, API.AllowUnauthenticated). Module web apps listen on 5280/5281.

With --offline the daemon dials nothing. With a Budget section in the
config (cairn init --board) it applies the board's memory limits.

To shut down the daemon, send SIGINT or SIGTERM, or run 'cairn shutdown'.

Flags of Kubo's daemon that need what cairn does not have (an MFS mount,
pubsub, unencrypted transports) are accepted and refused with a message
naming the feature.`,
	Options: []rpc.Option{
		{Names: []string{"init"}, Type: rpc.Bool, Help: "Initialize cairn with default settings if not already initialized"},
		{Names: []string{"init-config"}, Type: rpc.String, Help: "Path to existing configuration file to be loaded during --init"},
		{Names: []string{"init-profile"}, Type: rpc.String, Help: "Configuration profiles to apply for --init. See cairn init --help for more"},
		{Names: []string{"routing"}, Type: rpc.String, Default: "default", Help: "Overrides the routing option (default, auto, dht, dhtclient, dhtserver, none)"},
		{Names: []string{"mount"}, Type: rpc.Bool, Help: "Mounts IPFS to the filesystem using FUSE (read-only /ipfs and /ipns)"},
		{Names: []string{"mount-ipfs"}, Type: rpc.String, Help: "Path to the mountpoint for IPFS (if using --mount). Defaults to config setting."},
		{Names: []string{"mount-ipns"}, Type: rpc.String, Help: "Path to the mountpoint for IPNS (if using --mount). Defaults to config setting."},
		{Names: []string{"mount-mfs"}, Type: rpc.String, Help: "Path to the mountpoint for MFS (not supported by cairn)."},
		{Names: []string{"unrestricted-api"}, Type: rpc.Bool, Help: "Allow RPC API access to unlisted hashes (cairn's RPC has no such restriction)"},
		{Names: []string{"disable-transport-encryption"}, Type: rpc.Bool, Help: "Disable transport encryption (not supported by cairn)"},
		{Names: []string{"enable-gc"}, Type: rpc.Bool, Help: "Enable automatic periodic repo garbage collection"},
		{Names: []string{"manage-fdlimit"}, Type: rpc.Bool, Default: true, Help: "Check and raise file descriptor limits if needed (Go raises the soft limit itself)"},
		{Names: []string{"migrate"}, Type: rpc.Bool, Help: "If true, assume yes at the migrate prompt (cairn's repo needs no migration)"},
		{Names: []string{"enable-pubsub-experiment"}, Type: rpc.Bool, Help: "DEPRECATED CLI flag. Use Pubsub.Enabled config instead"},
		{Names: []string{"enable-namesys-pubsub"}, Type: rpc.Bool, Help: "DEPRECATED CLI flag. Use Ipns.UsePubsub config instead"},
		{Names: []string{"enable-mplex-experiment"}, Type: rpc.Bool, Help: "DEPRECATED"},
		{Names: []string{"agent-version-suffix"}, Type: rpc.String, Help: "Optional suffix to the AgentVersion presented by `cairn id` and exposed via libp2p identify protocol."},
		{Names: []string{"writable"}, Type: rpc.Bool, Help: "Removed from Kubo (the writable gateway); refused"},
	},
	NoRemote: true,
}

// cliTable holds init and daemon with the global options.
var cliTable = rpc.NewTable(commands.GlobalOptions, []*rpc.Command{initCommand, daemonCommand})

// parseCLI parses argv (starting with "init" or "daemon") against
// cliTable. It prints help (and returns done) for --help, and reports a
// parse error as the other commands do.
func parseCLI(argv []string, stdout, stderr io.Writer) (inv *invocation, req *rpc.Request, done bool, code int) {
	inv, err := parseArgs(cliTable, argv)
	if err == nil && inv.help {
		usage(stdout, cliTable, inv.node, inv.path)
		return nil, nil, true, 0
	}
	var opts map[string]any
	if err == nil {
		opts, err = typedOptions(cliTable, inv)
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n\n", err)
		usage(stderr, cliTable, cliTable.Root.Children[argv[0]], argv[0])
		return nil, nil, true, 1
	}
	return inv, &rpc.Request{Command: inv.cmd, Opts: opts, Args: inv.args}, false, 0
}
