// resolve.go: the resolve command (a path or name to the item it names),
// as Kubo's core/commands/resolve.go.

package commands

import (
	"errors"
	"fmt"
	"strings"

	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/namesys"
	"github.com/ipfs/boxo/path"
)

// ResolvedPath is the output of resolve, name/resolve and dns.
type ResolvedPath struct {
	Path string
}

func resolvedPathText(t *rpc.TextEnv, v any) error {
	_, err := fmt.Fprintln(t.Out, v.(*ResolvedPath).Path)
	return err
}

var resolveCommands = []*rpc.Command{{
	Path:     "resolve",
	Synopsis: "Resolve the value of names to IPFS.",
	Help: `There are a number of mutable name protocols that can link among
themselves and into IPNS. For example IPNS references can (currently)
point at an IPFS object, and DNS links can point at other DNS links, IPNS
entries, or IPFS objects. This command accepts any of these
identifiers and resolves them to the referenced item.

EXAMPLES

Resolve the value of an IPFS DAG path:

  $ cairn resolve /ipfs/QmeZy1fGbwgVSrqbfh9fKQrAWgeyRnj7h8fsHS1oy3k99x/beep/boop
  /ipfs/QmYRMjyvAiHKN9UTi8Bzt1HUspmSRD8T8DwxfSMzLgBon1`,
	Args: []rpc.Arg{{Name: "name", Kind: rpc.ArgString, Required: true, Stdin: true, Help: "The name to resolve."}},
	Options: []rpc.Option{
		{Names: []string{"recursive", "r"}, Type: rpc.Bool, Default: true, Help: "Resolve until the result is an IPFS name."},
		{Names: []string{"dht-record-count", "dhtrc"}, Type: rpc.Int, Help: "Number of records to request for DHT resolution."},
		{Names: []string{"dht-timeout", "dhtt"}, Type: rpc.String, Help: "Max time to collect values during DHT resolution e.g. \"30s\". Pass 0 for no timeout."},
	},
	Output: rpc.OutSingle,
	Run:    runResolve,
	Type:   func() any { return &ResolvedPath{} },
	Text:   resolvedPathText,
}}

func runResolve(r *rpc.Request, e rpc.Emitter) error {
	name := node.FromURI(r.Args[0])
	if strings.HasPrefix(name, "/ipns/") && !r.Bool("recursive") {
		// One step of the name.
		o, err := nameResolveOptions(r, false)
		if err != nil {
			return err
		}
		p, err := r.Node.Names().Resolve(r.Ctx, name, o)
		if err != nil && !errors.Is(err, namesys.ErrResolveRecursion) {
			return err
		}
		return e.Emit(&ResolvedPath{Path: p.String()})
	}
	enc, ok := rpc.CidEncoder{}, false
	if r.String("cid-base") == "" && !strings.HasPrefix(name, "/ipns/") {
		enc, ok = cidEncoderFromPath(name)
	}
	if !ok {
		var err error
		if enc, err = r.CidEncoder(); err != nil {
			return err
		}
	}
	c, rest, err := r.Node.Dag().ResolvePath(r.Ctx, name)
	if err != nil {
		return err
	}
	ns := "/ipfs/"
	if strings.HasPrefix(name, "/ipld/") {
		ns = "/ipld/"
	}
	p := ns + enc.Encode(c)
	if len(rest) != 0 {
		p += path.SegmentsToString(rest...)
	}
	return e.Emit(&ResolvedPath{Path: p})
}
