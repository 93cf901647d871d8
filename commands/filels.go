// filels.go: the deprecated "file/ls" command (replaced by ls), in its
// own shape: {"Arguments": {arg: hash}, "Objects": {hash: object}}.

package commands

import (
	"errors"
	"fmt"
	"sort"
	"text/tabwriter"

	"cairn/rpc"

	dag "github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	ipld "github.com/ipfs/go-ipld-format"
)

var fileLsCommands = []*rpc.Command{{
	Path:     "file/ls",
	Synopsis: "List directory contents for Unix filesystem objects. Deprecated: Use 'ipfs ls' and 'ipfs files ls' instead.",
	Help: `Displays the contents of an IPFS or IPNS object(s) at the given path.

The JSON output contains size information. For files, the child size
is the total size of the file contents. For directories, the child
size is the IPFS link size.

The path can be a prefixless ref; in this case, we assume it to be an
/ipfs ref and not /ipns.`,
	Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
		Help: "The path to the IPFS object(s) to list links from."}},
	BodyArgs: true,
	Output:   rpc.OutSingle,
	Run:      runFileLs,
	Type:     func() any { return &FileLsOutput{} },
	Text:     fileLsText,
}}

// FileLsLink is one directory entry of file/ls.
type FileLsLink struct {
	Name, Hash string
	Size       uint64
	Type       string
}

// FileLsObject is one listed object of file/ls.
type FileLsObject struct {
	Hash  string
	Size  uint64
	Type  string
	Links []FileLsLink
}

// FileLsOutput is the output of file/ls.
type FileLsOutput struct {
	Arguments map[string]string
	Objects   map[string]*FileLsObject
}

// fileLsType is the UnixFS type name and size of nd as file/ls shows
// them (raw blocks are files).
func fileLsType(nd ipld.Node) (*ft.FSNode, string, uint64, error) {
	switch nd := nd.(type) {
	case *dag.RawNode:
		return nil, "File", uint64(len(nd.RawData())), nil
	case *dag.ProtoNode:
		fsn, err := ft.FSNodeFromBytes(nd.Data())
		if err != nil {
			return nil, "", 0, err
		}
		return fsn, fsn.Type().String(), fsn.FileSize(), nil
	}
	return nil, "", 0, dag.ErrNotProtobuf
}

func runFileLs(r *rpc.Request, e rpc.Emitter) error {
	out := &FileLsOutput{Arguments: map[string]string{}, Objects: map[string]*FileLsObject{}}
	for _, p := range r.Args {
		nd, err := r.Node.Dag().ResolveNode(r.Ctx, p)
		if err != nil {
			return err
		}
		hash := nd.Cid().String()
		out.Arguments[p] = hash
		if _, ok := out.Objects[hash]; ok {
			continue
		}
		fsn, typ, size, err := fileLsType(nd)
		if err != nil {
			return err
		}
		obj := &FileLsObject{Hash: hash, Type: typ, Size: size}
		out.Objects[hash] = obj
		if fsn == nil {
			continue
		}
		switch fsn.Type() {
		case ft.TFile:
		case ft.THAMTShard:
			return errors.New("cannot list large directories yet")
		case ft.TDirectory:
			obj.Links = make([]FileLsLink, len(nd.Links()))
			for i, l := range nd.Links() {
				child, err := r.Node.DAG.Get(r.Ctx, l.Cid)
				if err != nil {
					return err
				}
				cfs, ctyp, csize, err := fileLsType(child)
				if err != nil {
					return err
				}
				ll := FileLsLink{Name: l.Name, Hash: l.Cid.String(), Type: ctyp, Size: l.Size}
				if cfs == nil || cfs.Type() == ft.TFile {
					ll.Size = csize
				}
				obj.Links[i] = ll
			}
		case ft.TSymlink:
			return errors.New("cannot list symlinks yet")
		default:
			return fmt.Errorf("unrecognized type: %s", fsn.Type())
		}
	}
	return e.Emit(out)
}

func fileLsText(t *rpc.TextEnv, v any) error {
	out := v.(*FileLsOutput)
	tw := tabwriter.NewWriter(t.Out, 1, 2, 1, ' ', 0)
	var nonDirs, dirs []string
	for arg, hash := range out.Arguments {
		obj, ok := out.Objects[hash]
		if !ok {
			return fmt.Errorf("unresolved hash: %s", hash)
		}
		if obj.Type == "Directory" {
			dirs = append(dirs, arg)
		} else {
			nonDirs = append(nonDirs, arg)
		}
	}
	sort.Strings(nonDirs)
	sort.Strings(dirs)
	for _, arg := range nonDirs {
		fmt.Fprintf(tw, "%s\n", arg)
	}
	seen := map[string]bool{}
	for i, arg := range dirs {
		hash := out.Arguments[arg]
		if seen[hash] {
			continue
		}
		seen[hash] = true
		if i > 0 || len(nonDirs) > 0 {
			fmt.Fprintln(tw)
		}
		if len(out.Arguments) > 1 {
			for _, a := range dirs[i:] {
				if out.Arguments[a] == hash {
					fmt.Fprintf(tw, "%s:\n", EscNonPrint(a))
				}
			}
		}
		for _, l := range out.Objects[hash].Links {
			fmt.Fprintf(tw, "%s\n", EscNonPrint(l.Name))
		}
	}
	return tw.Flush()
}
