// root.go: the root of the command table: global options and the list of
// command families. A family file declares `var <family>Commands` and is
// listed in Families below.

package commands

import "cairn/rpc"

// GlobalOptions are accepted by every command.
var GlobalOptions = []rpc.Option{
	{Names: []string{"encoding", "enc"}, Type: rpc.String, Help: "The encoding type the output should be encoded with (json, xml, or text)."},
	{Names: []string{"stream-channels"}, Type: rpc.Bool, Help: "Stream channel output."},
	{Names: []string{"timeout"}, Type: rpc.String, Help: "Set a global timeout on the command."},
	{Names: []string{"offline"}, Type: rpc.Bool, Help: "Run the command offline."},
	{Names: []string{"local", "L"}, Type: rpc.Bool, Help: "Deprecated alias of --offline."},
	{Names: []string{"cid-base"}, Type: rpc.String, Help: "Multibase encoding used for version 1 CIDs in output."},
	{Names: []string{"upgrade-cidv0-in-output"}, Type: rpc.Bool, Help: "Upgrade version 0 to version 1 CIDs in output."},
	{Names: []string{"api"}, Type: rpc.String, Help: "Use a specific API instance (defaults to $CAIRN_PATH/api)."},
	{Names: []string{"api-auth"}, Type: rpc.String, Help: "Optional RPC API authorization secret (basic:user:pass or bearer:token)."},
	{Names: []string{"config", "c"}, Type: rpc.String, Help: "Path to the repo (defaults to $CAIRN_PATH or ~/.cairn)."},
	{Names: []string{"repo-dir"}, Type: rpc.String, Help: "Path to the repo (same as --config)."},
	{Names: []string{"debug", "D"}, Type: rpc.Bool, Help: "Operate in debug mode."},
	{Names: []string{"help"}, Type: rpc.Bool, Help: "Show the full command help text."},
	{Names: []string{"h"}, Type: rpc.Bool, Help: "Show a short version of the command help text."},
}

// Families lists every command family; the table is built from it.
var Families = [][]*rpc.Command{
	addCommands,
	catCommands,
	cidCommands,
	multibaseCommands,
	versionCommands,
	commandsCommands,
	completionCommands,
	shutdownCommands,
	dagCommands,
	blockCommands,
	refsCommands,
	lsCommands,
	getCommands,
	idCommands,
	swarmCommands,
	peeringCommands,
	pubsubCommands,
	p2pCommands,
	pingCommands,
	bootstrapCommands,
	dhtCommands,
	routingCommands,
	provideMoreCommands,
	bitswapCommands,
	configCommands,
	configEditCommands,
	updateCommands,
	updateSubcommands,
	diagCommands,
	diagDatastoreCommands,
	logCommands,
	mountCommands,
	pinCommands,
	remotePinCommands,
	repoCommands,
	filesCommands,
	filestoreCommands,
	objectCommands,
	tarCommands,
	fileLsCommands,
	resolveCommands,
	keyCommands,
	nameCommands,
	nameRecordCommands,
	ipnsPubsubCommands,
}

// DefaultTable is the table the daemon serves and the CLI parses against.
var DefaultTable *rpc.Table

func init() {
	DefaultTable = rpc.NewTable(GlobalOptions, append(Families, pendingCommands(Families))...)
}
