// root.go: the root of the command table: global options and the list of
// command families. A family file declares `var <family>Commands` and is
// listed in Families below.

package httprpc

import (
	"errors"
	"strings"

	"github.com/ipfs/go-cid"
	mbase "github.com/multiformats/go-multibase"
)

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
	miscCommands,
	dagCommands,
	blockCommands,
	refsCommands,
	lsCommands,
	getCommands,
	idCommands,
	swarmCommands,
	dhtCommands,
	bitswapCommands,
	configCommands,
	pinCommands,
	repoCommands,
	filesCommands,
	filestoreCommands,
	objectCommands,
	tarCommands,
	fileLsCommands,
}

// DefaultTable is the table the daemon serves and the CLI parses against.
var DefaultTable *Table

func init() {
	DefaultTable = NewTable(GlobalOptions, append(Families, pendingCommands(Families))...)
}

// CidEncoder formats CIDs for output as Kubo's cid-base options ask:
// with no option, CIDv0 stays base58btc and CIDv1 is base32; a base other
// than base58btc upgrades CIDv0 to CIDv1.
type CidEncoder struct {
	base    mbase.Encoding
	hasBase bool
	upgrade bool
}

// CidEncoder returns the request's encoder; an unknown base name is an
// error (Kubo answers 500).
func (r *Request) CidEncoder() (CidEncoder, error) {
	var e CidEncoder
	if name := r.String("cid-base"); name != "" {
		enc, err := mbase.EncoderByName(name)
		if err != nil {
			return e, err
		}
		e.base, e.hasBase = enc.Encoding(), true
		e.upgrade = e.base != mbase.Base58BTC
	}
	if r.IsSet("upgrade-cidv0-in-output") {
		e.upgrade = r.Bool("upgrade-cidv0-in-output")
	}
	return e, nil
}

// Encode renders c.
func (e CidEncoder) Encode(c cid.Cid) string {
	if c.Version() == 0 {
		if !e.upgrade {
			return c.String()
		}
		c = cid.NewCidV1(c.Type(), c.Hash())
	}
	if !e.hasBase {
		return c.String()
	}
	s, err := c.StringOfBase(e.base)
	if err != nil {
		return c.String()
	}
	return s
}

// errOffline is returned by network commands while there is no network.
var errOffline = errors.New("this command must be run in online mode. Try running 'cairn daemon' first")

// notImplemented answers commands this build does not have yet.
func notImplemented(path string) error {
	return errors.New("cairn: '" + strings.ReplaceAll(path, "/", " ") + "' is not implemented yet")
}
