// tar.go: the deprecated "tar" family: tar/add stores a tar file in
// Kubo's "ipfs/tar" DAG format, tar/cat streams it back.

package commands

import (
	"fmt"

	"cairn/node"
	"cairn/rpc"
)

var tarCommands = []*rpc.Command{{
	Path:     "tar/add",
	Synopsis: "Import a tar file into IPFS.",
	Help: `'ipfs tar add' will parse a tar file and create a merkledag structure to
represent it.`,
	Args:   []rpc.Arg{{Name: "file", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "Tar file to add."}},
	Output: rpc.OutSingle,
	Run:    runTarAdd,
	Type:   func() any { return &node.AddEvent{} },
	Text: func(t *rpc.TextEnv, v any) error {
		_, err := fmt.Fprintln(t.Out, v.(*node.AddEvent).Hash)
		return err
	},
}, {
	Path:     "tar/cat",
	Synopsis: "Export a tar file from IPFS.",
	Help:     "'ipfs tar cat' will export a tar file from a previously imported one in IPFS.",
	Args:     []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Required: true, Stdin: true, Help: "ipfs path of archive to export."}},
	Output:   rpc.OutBytes,
	Run:      runTarCat,
}}

func runTarAdd(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	name, f, err := firstFilePart(r)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := r.Node.UnixFS().ImportTar(r.Ctx, f)
	if err != nil {
		return err
	}
	return e.Emit(&node.AddEvent{Name: name, Hash: enc.Encode(c)})
}

func runTarCat(r *rpc.Request, e rpc.Emitter) error {
	nd, err := r.Node.Dag().ResolveNode(r.Ctx, r.Args[0])
	if err != nil {
		return err
	}
	return r.Node.UnixFS().ExportTar(r.Ctx, nd, e)
}
