// helpers.go: helpers shared by several command families: name quoting,
// CID output, path resolution, the online check, file arguments.

package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"cairn/node"
	"cairn/node/p2p"
	"cairn/rpc"

	"github.com/ipfs/go-cid"
)

// EscNonPrint quotes names that contain a backslash or a non-printable
// rune, as Kubo's CLI does.
func EscNonPrint(s string) string {
	needs := strings.Contains(s, `\`)
	if !needs {
		for _, r := range s {
			if !strconv.IsPrint(r) {
				needs = true
				break
			}
		}
	}
	if !needs {
		return s
	}
	q := strconv.Quote(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}

// validatePinName refuses pin names longer than Kubo's 255 bytes.
func validatePinName(name string) error {
	if len(name) > 255 {
		return fmt.Errorf("pin name is %d bytes (max 255 bytes)", len(name))
	}
	return nil
}

// encodeCid is a helper for commands that print one CID.
func encodeCid(r *rpc.Request, c cid.Cid) (string, error) {
	enc, err := r.CidEncoder()
	if err != nil {
		return "", err
	}
	return enc.Encode(c), nil
}

// resolveRoot turns a path argument into the CID it names. A bare CID
// (or /ipfs/<cid>) is not fetched, as in Kubo's ResolvePath; deeper paths
// are walked through the DAG.
func resolveRoot(ctx context.Context, n *node.Node, s string) (cid.Cid, error) {
	p, err := n.Names().ImmutablePath(ctx, s)
	if err != nil {
		return cid.Undef, err
	}
	if len(p.Segments()) <= 2 {
		return p.RootCid(), nil
	}
	res, err := n.Dag().Resolve(ctx, p.String())
	if err != nil {
		return cid.Undef, err
	}
	return res.Cid, nil
}

// online returns the node's network layer, or Kubo's offline error.
func online(r *rpc.Request) (*p2p.Net, error) {
	if r.Node == nil || r.Node.Net == nil {
		return nil, errOffline
	}
	return r.Node.Net, nil
}

// onlineSwarm is online for the swarm commands Kubo runs through its core
// API (peers, addrs, connect, disconnect), which says it in other words.
func onlineSwarm(r *rpc.Request) (*p2p.Net, error) {
	nt, err := online(r)
	if err != nil {
		return nil, node.ErrOfflineAction
	}
	return nt, nil
}

// onlineStat is online for the statistics commands (stats/bw,
// bitswap/stat, stats/bitswap): offline they answer a client error (400,
// Code 1), as Kubo does.
func onlineStat(r *rpc.Request) (*p2p.Net, error) {
	nt, err := online(r)
	if err != nil {
		return nil, rpc.ClientError("unable to run offline: %s", err)
	}
	return nt, nil
}

var errExpectedFile = errors.New("expected a file argument")

// firstFilePart returns the first file part of the request and its name
// (Kubo's GetFileArg).
func firstFilePart(r *rpc.Request) (string, io.ReadCloser, error) {
	if r.Files == nil {
		return "", nil, errExpectedFile
	}
	it := r.Files.Entries()
	if !it.Next() {
		if err := it.Err(); err != nil {
			return "", nil, err
		}
		return "", nil, errExpectedFile
	}
	f, ok := it.Node().(io.ReadCloser)
	if !ok {
		return "", nil, errExpectedFile
	}
	return it.Name(), f, nil
}

// errOffline is returned by network commands while there is no network.
var errOffline = node.ErrOffline

// notImplemented answers commands this build does not have yet.
func notImplemented(path string) error {
	return errors.New("cairn: '" + strings.ReplaceAll(path, "/", " ") + "' is not implemented yet")
}

// streamIf is an OutputFor: a stream when the bool option is set, else a
// single value (ls --stream, pin ls --stream, pin add --progress).
func streamIf(opt string) func(*rpc.Request) rpc.OutputKind {
	return func(r *rpc.Request) rpc.OutputKind {
		if r.Bool(opt) {
			return rpc.OutStream
		}
		return rpc.OutSingle
	}
}

// repoDir is the repo a command without an open node (NoRepo) works on:
// the --config/--repo-dir global option, else $CAIRN_PATH or ~/.cairn.
func repoDir(r *rpc.Request) string {
	if dir := r.String("config"); dir != "" {
		return dir
	}
	if dir := r.String("repo-dir"); dir != "" {
		return dir
	}
	return node.DefaultRepoPath()
}
