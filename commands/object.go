// object.go: the deprecated "object" family (dag-pb nodes): data, diff,
// get, links, new, put, stat and the patch commands.
//
// Kubo 0.42 keeps only diff, patch/add-link and patch/rm-link (with
// their UnixFS checks and --allow-non-unixfs); the others answer
// "removed" there. cairn serves them all, with the behaviour of the last
// Kubo release that had them (0.27), which is also the 0.9 interface.

package commands

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"cairn/node"
	"cairn/rpc"

	humanize "github.com/dustin/go-humanize"
	dag "github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipld/merkledag/dagutils"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// objectInputLimit bounds object put input (Kubo: 2 MiB + 10 bytes).
const objectInputLimit = 2<<20 + 10

// objectBigDataLimit bounds patch data with --allow-big-block.
const objectBigDataLimit = 32 << 20

var errDataEncoding = errors.New("unknown data field encoding")

var allowBigBlockOpt = rpc.Option{Names: []string{"allow-big-block"}, Type: rpc.Bool, Default: false,
	Help: "Disable block size check and allow creation of blocks bigger than 2MiB. WARNING: such blocks won't be transferable over the standard bitswap."}

func objectKeyArg(help string) []rpc.Arg {
	return []rpc.Arg{{Name: "key", Kind: rpc.ArgString, Required: true, Stdin: true, Help: help}}
}

func objectHashText(t *rpc.TextEnv, v any) error {
	_, err := fmt.Fprintln(t.Out, v.(*ObjectResult).Hash)
	return err
}

var objectCommands = []*rpc.Command{{
	Path:     "object/data",
	Synopsis: "Deprecated way to read the raw bytes of a dag-pb object: use 'dag get' instead.",
	Help: `'ipfs object data' is a deprecated plumbing command for retrieving the raw
bytes stored in a dag-pb node. It outputs to stdout, and <key> is a base58
encoded multihash. Provided for legacy reasons. Use 'ipfs dag get' instead.`,
	Args:   objectKeyArg("Key of the object to retrieve, in base58-encoded multihash format."),
	Output: rpc.OutBytes,
	Run:    runObjectData,
}, {
	Path:     "object/links",
	Synopsis: "Deprecated way to output links in the specified dag-pb object: use 'dag get' instead.",
	Args:     objectKeyArg("Key of the dag-pb object to retrieve, in base58-encoded multihash format."),
	Options: []rpc.Option{
		{Names: []string{"headers", "v"}, Type: rpc.Bool, Help: "Print table headers (Hash, Size, Name)."},
	},
	Output: rpc.OutSingle,
	Run:    runObjectLinks,
	Type:   func() any { return &ObjectResult{} },
	Text:   objectLinksText,
}, {
	Path:     "object/get",
	Synopsis: "Deprecated way to get and serialize the dag-pb node. Use 'dag get' instead",
	Args:     objectKeyArg("Key of the dag-pb object to retrieve, in base58-encoded multihash format."),
	Options: []rpc.Option{
		{Names: []string{"data-encoding"}, Type: rpc.String, Default: "text", Help: `Encoding type of the data field, either "text" or "base64".`},
	},
	Output: rpc.OutSingle,
	Run:    runObjectGet,
	Type:   func() any { return &ObjectNode{} },
}, {
	Path:     "object/stat",
	Synopsis: "Deprecated way to read stats for the dag-pb node. Use 'files stat' instead.",
	Args:     objectKeyArg("Key of the object to retrieve, in base58-encoded multihash format."),
	Options: []rpc.Option{
		{Names: []string{"human"}, Type: rpc.Bool, Help: "Print sizes in human readable format (e.g., 1K 234M 2G)"},
	},
	Output: rpc.OutSingle,
	Run:    runObjectStat,
	Type:   func() any { return &ObjectStat{} },
	Text:   objectStatText,
}, {
	Path:     "object/put",
	Synopsis: "Deprecated way to store input as a DAG object. Use 'dag put' instead.",
	Help: `'ipfs object put' is a plumbing command for storing dag-pb nodes.
It reads from stdin, and the output is a base58 encoded multihash.`,
	Args: []rpc.Arg{{Name: "data", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "Data to be stored as a dag-pb object."}},
	Options: []rpc.Option{
		{Names: []string{"inputenc"}, Type: rpc.String, Default: "json", Help: `Encoding type of input data. One of: {"protobuf", "json"}.`},
		{Names: []string{"datafieldenc"}, Type: rpc.String, Default: "text", Help: `Encoding type of the data field, either "text" or "base64".`},
		{Names: []string{"pin"}, Type: rpc.Bool, Help: "Pin this object when adding."},
		{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Write minimal output."},
	},
	Output: rpc.OutSingle,
	Run:    runObjectPut,
	Type:   func() any { return &ObjectResult{} },
	Text: func(t *rpc.TextEnv, v any) error {
		h := v.(*ObjectResult).Hash
		if !t.Req.Bool("quiet") {
			h = "added " + h
		}
		_, err := fmt.Fprintln(t.Out, h)
		return err
	},
}, {
	Path:     "object/new",
	Synopsis: "Deprecated way to create a new dag-pb object from a template.",
	Help: `'ipfs object new' is a plumbing command for creating new dag-pb nodes.
By default it creates and returns a new empty merkledag node, but
you may pass an optional template argument to create a preformatted
node.

Available templates:
	* unixfs-dir`,
	Args:   []rpc.Arg{{Name: "template", Kind: rpc.ArgString, Help: "Template to use. Optional."}},
	Output: rpc.OutSingle,
	Run:    runObjectNew,
	Type:   func() any { return &ObjectResult{} },
	Text:   objectHashText,
}, {
	Path:     "object/diff",
	Synopsis: "Display the diff between two IPFS objects.",
	Help: `'ipfs object diff' is a command used to show the differences between
two IPFS objects.`,
	Args: []rpc.Arg{
		{Name: "obj_a", Kind: rpc.ArgString, Required: true, Help: "Object to diff against."},
		{Name: "obj_b", Kind: rpc.ArgString, Required: true, Help: "Object to diff."},
	},
	Options: []rpc.Option{
		{Names: []string{"verbose", "v"}, Type: rpc.Bool, Help: "Print extra information."},
	},
	Output: rpc.OutSingle,
	Run:    runObjectDiff,
	Type:   func() any { return &ObjectChanges{} },
	Text:   objectDiffText,
}, {
	Path:     "object/patch/add-link",
	Synopsis: "Deprecated way to add a link to a given dag-pb.",
	Help: `Add a Merkle-link to the given object and return the hash of the result.

This command operates at the dag-pb level and only supports adding links
to small, flat UnixFS directories (not HAMTShard). Use 'files' commands
for anything else.`,
	Args: []rpc.Arg{
		{Name: "root", Kind: rpc.ArgString, Required: true, Help: "The hash of the node to modify."},
		{Name: "name", Kind: rpc.ArgString, Required: true, Help: "Name of link to create."},
		{Name: "ref", Kind: rpc.ArgString, Required: true, Help: "IPFS object to add link to."},
	},
	Options: []rpc.Option{
		{Names: []string{"create", "p"}, Type: rpc.Bool, Help: "Create intermediary nodes."},
		{Names: []string{"allow-non-unixfs"}, Type: rpc.Bool, Help: "Skip UnixFS validation, allowing links on non-directory nodes."},
		allowBigBlockOpt,
	},
	Output: rpc.OutSingle,
	Run:    runObjectAddLink,
	Type:   func() any { return &ObjectResult{} },
	Text:   objectHashText,
}, {
	Path:     "object/patch/rm-link",
	Synopsis: "Deprecated way to remove a link from dag-pb object.",
	Args: []rpc.Arg{
		{Name: "root", Kind: rpc.ArgString, Required: true, Help: "The hash of the node to modify."},
		{Name: "name", Kind: rpc.ArgString, Required: true, Help: "Name of the link to remove."},
	},
	Options: []rpc.Option{
		{Names: []string{"allow-non-unixfs"}, Type: rpc.Bool, Help: "Skip UnixFS validation, allowing link removal on non-directory nodes."},
		allowBigBlockOpt,
	},
	Output: rpc.OutSingle,
	Run:    runObjectRmLink,
	Type:   func() any { return &ObjectResult{} },
	Text:   objectHashText,
}, {
	Path:     "object/patch/append-data",
	Synopsis: "Deprecated way to append data to the data segment of a DAG node.",
	Help: `Append data to what already exists in the data segment in the given object.

NOTE: This does not append data to a file - it modifies the actual raw
data within a dag-pb object.`,
	Args: []rpc.Arg{
		{Name: "root", Kind: rpc.ArgString, Required: true, Help: "The hash of the node to modify."},
		{Name: "data", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "Data to append."},
	},
	Options: []rpc.Option{allowBigBlockOpt},
	Output:  rpc.OutSingle,
	Run:     func(r *rpc.Request, e rpc.Emitter) error { return runObjectPatchData(r, e, true) },
	Type:    func() any { return &ObjectResult{} },
	Text:    objectHashText,
}, {
	Path:     "object/patch/set-data",
	Synopsis: "Deprecated way to set the data field of dag-pb object.",
	Help:     "Set the data of an IPFS object from stdin or with the contents of a file.",
	Args: []rpc.Arg{
		{Name: "root", Kind: rpc.ArgString, Required: true, Help: "The hash of the node to modify."},
		{Name: "data", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "The data to set the object to."},
	},
	Options: []rpc.Option{allowBigBlockOpt},
	Output:  rpc.OutSingle,
	Run:     func(r *rpc.Request, e rpc.Emitter) error { return runObjectPatchData(r, e, false) },
	Type:    func() any { return &ObjectResult{} },
	Text:    objectHashText,
}}

// ObjectLink is one link of object get, links and put.
type ObjectLink struct {
	Name, Hash string
	Size       uint64
}

// ObjectResult is the {"Hash","Links"} shape of most object commands.
type ObjectResult struct {
	Hash  string       `json:"Hash,omitempty"`
	Links []ObjectLink `json:"Links,omitempty"`
}

// ObjectNode is the output of object get and the JSON/XML input of
// object put.
type ObjectNode struct {
	Links []ObjectLink
	Data  string
}

// ObjectStat is the output of object stat.
type ObjectStat struct {
	Hash           string
	NumLinks       int
	BlockSize      int
	LinksSize      int
	DataSize       int
	CumulativeSize int
}

// ObjectChange is one change of object diff (0: added, 1: removed,
// 2: modified); Before/After are null when absent.
type ObjectChange struct {
	Type   int
	Path   string
	Before *CidLink
	After  *CidLink
}

// ObjectChanges is the output of object diff.
type ObjectChanges struct {
	Changes []*ObjectChange
}

// lowLevelCidEncoder is Kubo's encoder of the object commands: a
// --cid-base does not upgrade CIDv0 by itself.
func lowLevelCidEncoder(r *rpc.Request) (rpc.CidEncoder, error) {
	e, err := r.CidEncoder()
	if err != nil {
		return e, err
	}
	if !r.IsSet("upgrade-cidv0-in-output") {
		e = e.WithUpgrade(false)
	}
	return e, nil
}

// protoNodeAt resolves p and returns its dag-pb node.
func protoNodeAt(r *rpc.Request, p string) (*dag.ProtoNode, error) {
	nd, err := r.Node.Dag().ResolveNode(r.Ctx, p)
	if err != nil {
		return nil, err
	}
	pb, ok := nd.(*dag.ProtoNode)
	if !ok {
		return nil, dag.ErrNotProtobuf
	}
	return pb, nil
}

func runObjectData(r *rpc.Request, e rpc.Emitter) error {
	pb, err := protoNodeAt(r, r.Args[0])
	if err != nil {
		return err
	}
	_, err = e.Write(pb.Data())
	return err
}

func runObjectLinks(r *rpc.Request, e rpc.Emitter) error {
	enc, err := lowLevelCidEncoder(r)
	if err != nil {
		return err
	}
	c, _, err := r.Node.Dag().ResolvePath(r.Ctx, r.Args[0])
	if err != nil {
		return err
	}
	nd, err := r.Node.DAG.Get(r.Ctx, c)
	if err != nil {
		return err
	}
	out := &ObjectResult{Hash: enc.Encode(c)}
	for _, l := range nd.Links() {
		out.Links = append(out.Links, ObjectLink{Hash: enc.Encode(l.Cid), Name: l.Name, Size: l.Size})
	}
	return e.Emit(out)
}

func objectLinksText(t *rpc.TextEnv, v any) error {
	out := v.(*ObjectResult)
	tw := tabwriter.NewWriter(t.Out, 1, 2, 1, ' ', 0)
	if t.Req.Bool("headers") {
		fmt.Fprintln(tw, "Hash\tSize\tName")
	}
	for _, l := range out.Links {
		fmt.Fprintf(tw, "%s\t%v\t%s\n", l.Hash, l.Size, EscNonPrint(l.Name))
	}
	return tw.Flush()
}

func encodeObjectData(data []byte, encoding string) (string, error) {
	switch encoding {
	case "text":
		return string(data), nil
	case "base64":
		return base64.StdEncoding.EncodeToString(data), nil
	}
	return "", errDataEncoding
}

func runObjectGet(r *rpc.Request, e rpc.Emitter) error {
	enc, err := lowLevelCidEncoder(r)
	if err != nil {
		return err
	}
	pb, err := protoNodeAt(r, r.Args[0])
	if err != nil {
		return err
	}
	data, err := encodeObjectData(pb.Data(), r.String("data-encoding"))
	if err != nil {
		return err
	}
	out := &ObjectNode{Links: make([]ObjectLink, len(pb.Links())), Data: data}
	for i, l := range pb.Links() {
		out.Links[i] = ObjectLink{Hash: enc.Encode(l.Cid), Name: l.Name, Size: l.Size}
	}
	return e.Emit(out)
}

func runObjectStat(r *rpc.Request, e rpc.Emitter) error {
	enc, err := lowLevelCidEncoder(r)
	if err != nil {
		return err
	}
	nd, err := r.Node.Dag().ResolveNode(r.Ctx, r.Args[0])
	if err != nil {
		return err
	}
	st, err := nd.Stat()
	if err != nil {
		return err
	}
	return e.Emit(&ObjectStat{
		Hash:           enc.Encode(nd.Cid()),
		NumLinks:       st.NumLinks,
		BlockSize:      st.BlockSize,
		LinksSize:      st.LinksSize,
		DataSize:       st.DataSize,
		CumulativeSize: st.CumulativeSize,
	})
}

func objectStatText(t *rpc.TextEnv, v any) error {
	out := v.(*ObjectStat)
	tw := tabwriter.NewWriter(t.Out, 0, 0, 1, ' ', 0)
	fw := func(s string, n int) { fmt.Fprintf(tw, "%s:\t%d\n", s, n) }
	fw("NumLinks", out.NumLinks)
	fw("BlockSize", out.BlockSize)
	fw("LinksSize", out.LinksSize)
	fw("DataSize", out.DataSize)
	if t.Req.Bool("human") {
		fmt.Fprintf(tw, "%s:\t%s\n", "CumulativeSize", humanize.Bytes(uint64(out.CumulativeSize)))
	} else {
		fw("CumulativeSize", out.CumulativeSize)
	}
	return tw.Flush()
}

// objectFromFields builds a dag-pb node from object get's shape.
func objectFromFields(nd *ObjectNode, dataEnc string) (*dag.ProtoNode, error) {
	pb := new(dag.ProtoNode)
	switch dataEnc {
	case "text":
		pb.SetData([]byte(nd.Data))
	case "base64":
		data, err := base64.StdEncoding.DecodeString(nd.Data)
		if err != nil {
			return nil, err
		}
		pb.SetData(data)
	default:
		return nil, errDataEncoding
	}
	links := make([]*ipld.Link, len(nd.Links))
	for i, l := range nd.Links {
		c, err := cid.Decode(l.Hash)
		if err != nil {
			return nil, err
		}
		links[i] = &ipld.Link{Name: l.Name, Size: l.Size, Cid: c}
	}
	if err := pb.SetLinks(links); err != nil {
		return nil, err
	}
	return pb, nil
}

func runObjectPut(r *rpc.Request, e rpc.Emitter) error {
	enc, err := lowLevelCidEncoder(r)
	if err != nil {
		return err
	}
	_, f, err := firstFilePart(r)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, objectInputLimit))
	if err != nil {
		return err
	}
	var pb *dag.ProtoNode
	switch r.String("inputenc") {
	case "json":
		var nd ObjectNode
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&nd); err != nil {
			return err
		}
		if pb, err = objectFromFields(&nd, r.String("datafieldenc")); err != nil {
			return err
		}
	case "protobuf":
		if pb, err = dag.DecodeProtobuf(data); err != nil {
			return err
		}
	case "xml":
		var nd ObjectNode
		if err := xml.Unmarshal(data, &nd); err != nil {
			return err
		}
		if pb, err = objectFromFields(&nd, r.String("datafieldenc")); err != nil {
			return err
		}
	default:
		return errors.New("unknown object encoding")
	}
	if err := r.Node.Block().Put(r.Ctx, r.Bool("pin"), pb); err != nil {
		return err
	}
	return e.Emit(&ObjectResult{Hash: enc.Encode(pb.Cid())})
}

func runObjectNew(r *rpc.Request, e rpc.Emitter) error {
	enc, err := lowLevelCidEncoder(r)
	if err != nil {
		return err
	}
	tmpl := "empty"
	if len(r.Args) == 1 {
		tmpl = r.Args[0]
	}
	var nd *dag.ProtoNode
	switch tmpl {
	case "empty":
		nd = new(dag.ProtoNode)
	case "unixfs-dir":
		nd = ft.EmptyDirNode()
	default:
		return fmt.Errorf("unknown node type: %s", tmpl)
	}
	if err := r.Node.Block().Put(r.Ctx, false, nd); err != nil {
		return err
	}
	return e.Emit(&ObjectResult{Hash: enc.Encode(nd.Cid())})
}

func runObjectDiff(r *rpc.Request, e rpc.Emitter) error {
	a, err := r.Node.Dag().ResolveNode(r.Ctx, r.Args[0])
	if err != nil {
		return err
	}
	b, err := r.Node.Dag().ResolveNode(r.Ctx, r.Args[1])
	if err != nil {
		return err
	}
	changes, err := dagutils.Diff(r.Ctx, r.Node.DAG, a, b)
	if err != nil {
		return err
	}
	out := &ObjectChanges{Changes: make([]*ObjectChange, len(changes))}
	for i, c := range changes {
		ch := &ObjectChange{Type: int(c.Type), Path: c.Path}
		if c.Before.Defined() {
			ch.Before = &CidLink{Cid: c.Before.String()}
		}
		if c.After.Defined() {
			ch.After = &CidLink{Cid: c.After.String()}
		}
		out.Changes[i] = ch
	}
	return e.Emit(out)
}

func objectDiffText(t *rpc.TextEnv, v any) error {
	enc, err := t.Req.CidEncoder()
	if err != nil {
		return err
	}
	show := func(l *CidLink) string {
		if l == nil {
			return cid.Undef.String()
		}
		c, err := cid.Decode(l.Cid)
		if err != nil {
			return l.Cid
		}
		return enc.Encode(c)
	}
	verbose := t.Req.Bool("verbose")
	w := t.Out
	for _, c := range v.(*ObjectChanges).Changes {
		switch {
		case verbose && c.Type == int(dagutils.Add):
			fmt.Fprintf(w, "Added new link %q pointing to %s.\n", c.Path, show(c.After))
		case verbose && c.Type == int(dagutils.Mod):
			fmt.Fprintf(w, "Changed %q from %s to %s.\n", c.Path, show(c.Before), show(c.After))
		case verbose && c.Type == int(dagutils.Remove):
			fmt.Fprintf(w, "Removed link %q (was %s).\n", c.Path, show(c.Before))
		case c.Type == int(dagutils.Add):
			fmt.Fprintf(w, "+ %s %q\n", show(c.After), c.Path)
		case c.Type == int(dagutils.Mod):
			fmt.Fprintf(w, "~ %s %s %q\n", show(c.Before), show(c.After), c.Path)
		case c.Type == int(dagutils.Remove):
			fmt.Fprintf(w, "- %s %q\n", show(c.Before), c.Path)
		}
	}
	return nil
}

// checkPatchTarget is Kubo 0.42's guard of add-link and rm-link: only
// plain UnixFS directories can be edited link by link.
func checkPatchTarget(pb *dag.ProtoNode, adding bool) error {
	fsn, err := ft.FSNodeFromBytes(pb.Data())
	if err != nil {
		if adding {
			return errors.New("cannot add named links to a non-UnixFS dag-pb node; pass --allow-non-unixfs to skip validation")
		}
		return errors.New("cannot remove links from a non-UnixFS dag-pb node; pass --allow-non-unixfs to skip validation")
	}
	switch fsn.Type() {
	case ft.TDirectory:
		return nil
	case ft.THAMTShard:
		if adding {
			return errors.New("cannot add links to a HAMTShard at the dag-pb level (would corrupt the HAMT bitfield); use 'ipfs files' commands instead, or pass --allow-non-unixfs to override")
		}
		return errors.New("cannot remove links from a HAMTShard at the dag-pb level (would corrupt the HAMT bitfield); use 'ipfs files rm' instead, or pass --allow-non-unixfs to override")
	}
	if adding {
		return fmt.Errorf("cannot add named links to a UnixFS %s node, only Directory nodes support link addition at the dag-pb level (see https://specs.ipfs.tech/unixfs/)", fsn.Type())
	}
	return fmt.Errorf("cannot remove links from a UnixFS %s node, only Directory nodes support link removal at the dag-pb level (see https://specs.ipfs.tech/unixfs/)", fsn.Type())
}

// checkNodeSize is Kubo's guard of the patch commands: without
// --allow-big-block the new node may not exceed 2 MiB. As in Kubo the
// size measured is the node's cumulative size (its block plus the sizes
// its links declare), so linking a file over 2 MiB is refused too. It
// runs before anything is stored.
func checkNodeSize(r *rpc.Request, nd *dag.ProtoNode) error {
	size, err := nd.Size()
	if err != nil {
		return err
	}
	if size > node.MaxBlockSize && !r.Bool("allow-big-block") {
		return node.ErrBigBlock
	}
	return nil
}

// editAndStore applies edit to a dagutils editor over base, checks the
// new root's size, then stores what the edit made.
func editAndStore(r *rpc.Request, base *dag.ProtoNode, edit func(ed *dagutils.Editor) error) (cid.Cid, error) {
	ed := dagutils.NewDagEditor(base, r.Node.DAG)
	if err := edit(ed); err != nil {
		return cid.Undef, err
	}
	if err := checkNodeSize(r, ed.GetNode()); err != nil {
		return cid.Undef, err
	}
	var root cid.Cid
	err := r.Node.Dag().Edit(r.Ctx, func(ds ipld.DAGService) error {
		nd, err := ed.Finalize(r.Ctx, ds)
		if err != nil {
			return err
		}
		root = nd.Cid()
		return nil
	})
	return root, err
}

func runObjectAddLink(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	baseNd, err := r.Node.Dag().ResolveNode(r.Ctx, r.Args[0])
	if err != nil {
		return err
	}
	child, err := r.Node.Dag().ResolveNode(r.Ctx, r.Args[2])
	if err != nil {
		return err
	}
	base, ok := baseNd.(*dag.ProtoNode)
	if !ok {
		return dag.ErrNotProtobuf
	}
	if !r.Bool("allow-non-unixfs") {
		if err := checkPatchTarget(base, true); err != nil {
			return err
		}
	}
	var create func() *dag.ProtoNode
	if r.Bool("create") {
		create = ft.EmptyDirNode
	}
	root, err := editAndStore(r, base, func(ed *dagutils.Editor) error {
		return ed.InsertNodeAtPath(r.Ctx, r.Args[1], child, create)
	})
	if err != nil {
		return err
	}
	return e.Emit(&ObjectResult{Hash: enc.Encode(root)})
}

func runObjectRmLink(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	base, err := protoNodeAt(r, r.Args[0])
	if err != nil {
		return err
	}
	if !r.Bool("allow-non-unixfs") {
		if err := checkPatchTarget(base, false); err != nil {
			return err
		}
	}
	root, err := editAndStore(r, base, func(ed *dagutils.Editor) error {
		return ed.RmLink(r.Ctx, r.Args[1])
	})
	if err != nil {
		return err
	}
	return e.Emit(&ObjectResult{Hash: enc.Encode(root)})
}

func runObjectPatchData(r *rpc.Request, e rpc.Emitter, appendData bool) error {
	pb, err := protoNodeAt(r, r.Args[0])
	if err != nil {
		return err
	}
	_, f, err := firstFilePart(r)
	if err != nil {
		return err
	}
	defer f.Close()
	limit := int64(node.MaxBlockSize)
	if r.Bool("allow-big-block") {
		limit = objectBigDataLimit
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > limit {
		if limit == objectBigDataLimit {
			return fmt.Errorf("data over %s is not accepted", humanize.IBytes(uint64(limit)))
		}
		return node.ErrBigBlock
	}
	if appendData {
		data = append(append([]byte(nil), pb.Data()...), data...)
	}
	pb.SetData(data)
	if err := checkNodeSize(r, pb); err != nil {
		return err
	}
	if err := r.Node.Block().Put(r.Ctx, false, pb); err != nil {
		return err
	}
	return e.Emit(&ObjectResult{Hash: pb.Cid().String()})
}
