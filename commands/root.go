// root.go: the root of the command table: global options and the list of
// command families. A family file declares `var <family>Commands` and is
// listed in Families below.

package commands

import ()

// GlobalOptions are accepted by every command (spec/rpc-wire.md 1.8).
var GlobalOptions = []Option{
	{Names: []string{"encoding", "enc"}, Type: String, Help: "The encoding type the output should be encoded with (json, xml, or text)."},
	{Names: []string{"stream-channels"}, Type: Bool, Help: "Stream channel output."},
	{Names: []string{"timeout"}, Type: String, Help: "Set a global timeout on the command."},
	{Names: []string{"offline"}, Type: Bool, Help: "Run the command offline."},
	{Names: []string{"local", "L"}, Type: Bool, Help: "Deprecated alias of --offline."},
	{Names: []string{"cid-base"}, Type: String, Help: "Multibase encoding used for version 1 CIDs in output."},
	{Names: []string{"upgrade-cidv0-in-output"}, Type: Bool, Help: "Upgrade version 0 to version 1 CIDs in output."},
	{Names: []string{"api"}, Type: String, Help: "Use a specific API instance (defaults to $CAIRN_PATH/api)."},
	{Names: []string{"api-auth"}, Type: String, Help: "Optional RPC API authorization secret (basic:user:pass or bearer:token)."},
	{Names: []string{"config", "c"}, Type: String, Help: "Path to the repo (defaults to $CAIRN_PATH or ~/.cairn)."},
	{Names: []string{"repo-dir"}, Type: String, Help: "Path to the repo (same as --config)."},
	{Names: []string{"debug", "D"}, Type: Bool, Help: "Operate in debug mode."},
	{Names: []string{"help"}, Type: Bool, Help: "Show the full command help text."},
	{Names: []string{"h"}, Type: Bool, Help: "Show a short version of the command help text."},
}

// Families lists every command family; the table is built from it.
var Families = [][]*Command{
	addCommands,
	catCommands,
	cidCommands,
	versionCommands,
	commandsCommands,
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
	bitswapCommands,
	configCommands,
	configEditCommands,
	updateCommands,
	diagCommands,
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
	ipnsPubsubCommands,
}

// DefaultTable is the table the daemon serves and the CLI parses against.
var DefaultTable *Table

func init() {
	DefaultTable = NewTable(GlobalOptions, append(Families, pendingCommands(Families))...)
}
