// dag.go: the "dag" family: put, get, resolve, stat, export and import
// (CAR files).

package commands

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	gopath "path"
	"strings"

	"cairn/node"
	"cairn/rpc"

	humanize "github.com/dustin/go-humanize"
	"github.com/ipfs/boxo/path"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/verifcid"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	dagpb "github.com/ipld/go-codec-dagpb"
	ipld "github.com/ipld/go-ipld-prime"
	_ "github.com/ipld/go-ipld-prime/codec/cbor" // registers cbor
	_ "github.com/ipld/go-ipld-prime/codec/dagcbor"
	_ "github.com/ipld/go-ipld-prime/codec/dagjson"
	_ "github.com/ipld/go-ipld-prime/codec/json"
	_ "github.com/ipld/go-ipld-prime/codec/raw"
	"github.com/ipld/go-ipld-prime/multicodec"
	basicnode "github.com/ipld/go-ipld-prime/node/basicnode"
	"github.com/ipld/go-ipld-prime/traversal"
	mbase "github.com/multiformats/go-multibase"
	mc "github.com/multiformats/go-multicodec"
	mh "github.com/multiformats/go-multihash"
)

// maxBlockSize is the largest block peers exchange (2 MiB).
const maxBlockSize = 2 << 20

var dagCommands = []*rpc.Command{{
	Path:     "dag/put",
	Synopsis: "Add an object to the IPLD DAG.",
	Help: `Parses each input as --input-codec and stores it encoded as --store-codec.
The 0.9 options --format and --input-enc are accepted as aliases.`,
	Args: []rpc.Arg{{Name: "object data", Kind: rpc.ArgFile, Required: true, Variadic: true, Stdin: true,
		Help: "The object to put"}},
	Options: []rpc.Option{
		{Names: []string{"store-codec"}, Type: rpc.String, Default: "dag-cbor", Help: "Codec that the stored object will be encoded with."},
		{Names: []string{"input-codec"}, Type: rpc.String, Default: "dag-json", Help: "Codec that the input object is encoded in."},
		{Names: []string{"format"}, Type: rpc.String, Help: "Deprecated (0.9): codec to store with (cbor, protobuf, raw, ...)."},
		{Names: []string{"input-enc"}, Type: rpc.String, Help: "Deprecated (0.9): input encoding (json, cbor, raw)."},
		{Names: []string{"pin"}, Type: rpc.Bool, Help: "Pin this object when adding."},
		{Names: []string{"hash"}, Type: rpc.String, Default: "sha2-256", Help: "Hash function to use."},
		{Names: []string{"allow-big-block"}, Type: rpc.Bool, Help: "Disable block size check and allow creation of blocks bigger than 2MiB."},
	},
	Output: rpc.OutStream,
	Run:    runDagPut,
	Type:   func() any { return &DagPutResult{} },
	Text: func(t *rpc.TextEnv, v any) error {
		_, err := fmt.Fprintln(t.Out, v.(*DagPutResult).Cid.Cid)
		return err
	},
}, {
	Path:     "dag/get",
	Synopsis: "Get a DAG node from IPFS.",
	Help: `'ipfs dag get' fetches a DAG node from IPFS and prints it out in the specified
format.`,
	Args: []rpc.Arg{{Name: "ref", Kind: rpc.ArgString, Required: true, Stdin: true, Help: "The object to get"}},
	Options: []rpc.Option{
		{Names: []string{"output-codec"}, Type: rpc.String, Default: "dag-json", Help: "Format that the object will be encoded as."},
	},
	Output: rpc.OutBytes,
	Run:    runDagGet,
}, {
	Path:     "dag/resolve",
	Synopsis: "Resolve IPLD block.",
	Help:     "'ipfs dag resolve' fetches a DAG node from IPFS, prints its address and remaining path.",
	Args:     []rpc.Arg{{Name: "ref", Kind: rpc.ArgString, Required: true, Stdin: true, Help: "The path to resolve"}},
	Output:   rpc.OutSingle,
	Run:      runDagResolve,
	Type:     func() any { return &DagResolveResult{} },
	Text:     dagResolveText,
}, {
	Path:     "dag/stat",
	Synopsis: "Gets stats for a DAG.",
	Help: `'ipfs dag stat' fetches a DAG and returns various statistics about it.
Statistics include size and number of blocks.

Note: This command skips duplicate blocks in reporting both size and the number of blocks`,
	Args: []rpc.Arg{{Name: "root", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
		Help: "CID of a DAG root to get statistics for"}},
	Options: []rpc.Option{
		{Names: []string{"progress", "p"}, Type: rpc.Bool, Help: "Stream progress data. Defaults to true when stderr is a terminal."},
	},
	Output:   rpc.OutStream,
	Run:      runDagStat,
	Type:     func() any { return &DagStatResult{} },
	Text:     dagStatText,
	TextDone: dagStatTextDone,
}, {
	Path:     "dag/export",
	Synopsis: "Streams the selected DAG as a .car stream on stdout.",
	Help: `'ipfs dag export' fetches a DAG and streams it out as a well-formed .car file.
Note that at present only single root selections / .car files are supported.
The output of blocks happens in strict DAG-traversal, first-seen, order.
CAR file follows the CARv1 format: https://ipld.io/specs/transport/car/carv1/

Use --local-only for a best-effort export from the local blockstore: blocks
that are missing locally (and their subtrees) are skipped, so the resulting
CAR is partial.`,
	Args: []rpc.Arg{{Name: "root", Kind: rpc.ArgString, Required: true, Stdin: true, Help: "CID of a root to recursively export"}},
	Options: []rpc.Option{
		{Names: []string{"progress", "p"}, Type: rpc.Bool, Help: "Stream progress data. Defaults to true when stderr is a terminal."},
		{Names: []string{"local-only"}, Type: rpc.Bool, Help: "Best-effort export of locally-available blocks; missing blocks (and their subtrees) are skipped. Implies --offline."},
	},
	Output:      rpc.OutBytes,
	Run:         runDagExport,
	ContentType: func(*rpc.Request) string { return "application/vnd.ipld.car" },
}, {
	Path:     "dag/import",
	Synopsis: "Import the contents of .car files",
	Help: `'ipfs dag import' imports all blocks present in supplied .car
( Content Address aRchive ) files, recursively pinning any roots
specified in the CAR file headers, unless --pin-roots is set to false.

Every block must match its CID; a truncated or damaged CAR is refused and
nothing of the request is kept or pinned. The pinning of the roots happens
after all car files are processed. If the imported blocks and what is
already stored do not form a complete DAG, pinning that root fails and
its error is reported.

Maximum supported CAR version: 2`,
	Args: []rpc.Arg{{Name: "path", Kind: rpc.ArgFile, Required: true, Variadic: true, Stdin: true, Help: "The path of a .car file."}},
	Options: []rpc.Option{
		{Names: []string{"pin-roots"}, Type: rpc.Bool, Help: "Pin optional roots listed in the .car headers after importing. Default: true."},
		{Names: []string{"local-only"}, Type: rpc.Bool, Help: "Import a partial CAR (e.g. from 'dag export --local-only'). Implies --pin-roots=false."},
		{Names: []string{"silent"}, Type: rpc.Bool, Help: "No output."},
		{Names: []string{"stats"}, Type: rpc.Bool, Help: "Output stats."},
		{Names: []string{"fast-provide-root"}, Type: rpc.Bool, Help: "Immediately provide root CIDs. Accepted for Kubo compatibility and ignored: cairn announces pinned roots from its own rate-limited queue."},
		{Names: []string{"fast-provide-dag"}, Type: rpc.Bool, Help: "Provide the full DAG after import. Accepted for Kubo compatibility and ignored: cairn announces pinned roots from its own rate-limited queue."},
		{Names: []string{"fast-provide-wait"}, Type: rpc.Bool, Help: "Wait for the provide to complete. Accepted for Kubo compatibility and ignored: cairn announces pinned roots from its own rate-limited queue."},
		{Names: []string{"allow-big-block"}, Type: rpc.Bool, Help: "Disable block size check and allow creation of blocks bigger than 2MiB. WARNING: such blocks won't be transferable over the standard bitswap."},
	},
	Output: rpc.OutStream,
	Run:    runDagImport,
	Type:   func() any { return &CarImportOutput{} },
	Text:   dagImportText,
}}

// CidLink is a CID written as {"/": "<cid>"}.
type CidLink struct {
	Cid string `json:"/"`
}

// DagPutResult is one line of dag/put.
type DagPutResult struct {
	Cid CidLink
}

func codecByName(name string) (uint64, error) {
	var c mc.Code
	if err := c.Set(name); err != nil {
		return 0, fmt.Errorf("unknown multicodec: %q", name)
	}
	return uint64(c), nil
}

var legacyStore = map[string]string{"cbor": "dag-cbor", "protobuf": "dag-pb", "json": "dag-json"}
var legacyInput = map[string]string{"json": "dag-json", "cbor": "dag-cbor", "raw": "raw", "protobuf": "dag-pb"}

func runDagPut(r *rpc.Request, e rpc.Emitter) error {
	store, input := r.String("store-codec"), r.String("input-codec")
	if f := r.String("format"); f != "" {
		if s, ok := legacyStore[f]; ok {
			f = s
		}
		store = f
	}
	if f := r.String("input-enc"); f != "" {
		if s, ok := legacyInput[f]; ok {
			f = s
		}
		input = f
	}
	storeCode, err := codecByName(store)
	if err != nil {
		return err
	}
	inputCode, err := codecByName(input)
	if err != nil {
		return err
	}
	hcode, ok := mh.Names[r.String("hash")]
	if !ok {
		return fmt.Errorf("unknown multicodec: %q", r.String("hash")) // go-multicodec's text, as Kubo
	}
	// Errors from here on are the codecs' own, unwrapped, as Kubo's.
	dec, err := multicodec.LookupDecoder(inputCode)
	if err != nil {
		return err
	}
	enc, err := multicodec.LookupEncoder(storeCode)
	if err != nil {
		return err
	}
	prefix := cid.Prefix{Version: 1, Codec: storeCode, MhType: hcode, MhLength: -1}
	if r.Files == nil {
		return errors.New("expected a file argument")
	}
	it := r.Files.Entries()
	var blks []blocks.Block
	for it.Next() {
		f, ok := it.Node().(files.File)
		if !ok {
			return errors.New("file argument was nil")
		}
		var proto ipld.NodePrototype = basicnode.Prototype.Any
		if storeCode == cid.DagProtobuf {
			proto = dagpb.Type.PBNode
		}
		nb := proto.NewBuilder()
		if err := dec(nb, io.LimitReader(f, maxBlockSize*4)); err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := enc(nb.Build(), &buf); err != nil {
			return err
		}
		if buf.Len() > maxBlockSize && !r.Bool("allow-big-block") {
			return errors.New("produced block is over 2MiB: big blocks can't be exchanged with other peers. consider using UnixFS for automatic chunking of bigger files, or pass --allow-big-block to override")
		}
		c, err := prefix.Sum(buf.Bytes())
		if err != nil {
			return err
		}
		if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
			return err
		}
		blk, err := blocks.NewBlockWithCid(buf.Bytes(), c)
		if err != nil {
			return err
		}
		blks = append(blks, blk)
	}
	if err := it.Err(); err != nil {
		return err
	}
	if len(blks) == 0 {
		return errors.New("expected a file argument")
	}
	if err := r.Node.Block().Put(r.Ctx, r.Bool("pin"), blks...); err != nil {
		return err
	}
	// CID links ({"/": ...}) always use the CID's default text form.
	for _, b := range blks {
		if err := e.Emit(&DagPutResult{Cid: CidLink{Cid: b.Cid().String()}}); err != nil {
			return err
		}
	}
	return nil
}

func runDagGet(r *rpc.Request, e rpc.Emitter) error {
	var codec mc.Code
	if err := codec.Set(r.String("output-codec")); err != nil {
		return err
	}
	c, rest, err := r.Node.Dag().ResolvePath(r.Ctx, r.Args[0])
	if err != nil {
		return err
	}
	nd, err := r.Node.Dag().LoadNode(r.Ctx, c)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		nd, err = traversal.Get(nd, ipld.ParsePath(path.SegmentsToString(rest...)))
		if err != nil {
			return err
		}
	}
	enc, err := multicodec.LookupEncoder(uint64(codec))
	if err != nil {
		return fmt.Errorf("invalid encoding: %s - %s", codec, err)
	}
	// Nodes are at most a block: encode whole, so that an encoding error
	// is a plain error rather than a cut stream.
	var buf bytes.Buffer
	if err := enc(nd, &buf); err != nil {
		return err
	}
	_, err = e.Write(buf.Bytes())
	return err
}

// DagResolveResult is the output of dag/resolve.
type DagResolveResult struct {
	Cid     CidLink
	RemPath string
}

func runDagResolve(r *rpc.Request, e rpc.Emitter) error {
	c, rest, err := r.Node.Dag().ResolvePath(r.Ctx, r.Args[0])
	if err != nil {
		return err
	}
	return e.Emit(&DagResolveResult{Cid: CidLink{Cid: c.String()}, RemPath: path.SegmentsToString(rest...)})
}

// cidEncoderFromPath is Kubo's encoder for dag resolve text without
// --cid-base: the base of the CID in the argument (CIDv0: base58, no
// upgrade).
func cidEncoderFromPath(p string) (rpc.CidEncoder, bool) {
	comps := strings.SplitN(p, "/", 4)
	maybe := comps[0]
	if maybe == "" {
		if len(comps) < 3 {
			return rpc.CidEncoder{}, false
		}
		maybe = comps[2]
	}
	c, err := cid.Decode(maybe)
	if err != nil {
		return rpc.CidEncoder{}, false
	}
	if c.Version() == 0 {
		return rpc.CidEncoder{}, true
	}
	encoding, _, err := mbase.Decode(maybe)
	if err != nil {
		return rpc.CidEncoder{}, false
	}
	return rpc.BaseCidEncoder(encoding), true
}

func dagResolveText(t *rpc.TextEnv, v any) error {
	out := v.(*DagResolveResult)
	c, err := cid.Decode(out.Cid.Cid)
	if err != nil {
		return err
	}
	enc, ok := rpc.CidEncoder{}, false
	if t.Req.String("cid-base") == "" && len(t.Req.Args) > 0 {
		enc, ok = cidEncoderFromPath(t.Req.Args[0])
	}
	if !ok {
		if enc, err = t.Req.CidEncoder(); err != nil {
			return err
		}
	}
	p := enc.Encode(c)
	if out.RemPath != "" {
		p = gopath.Join(p, out.RemPath)
	}
	_, err = fmt.Fprint(t.Out, p)
	return err
}

// DagStatEntry is one root of dag/stat.
type DagStatEntry struct {
	Cid       string `json:"Cid"`
	Size      uint64 `json:",omitempty"`
	NumBlocks int64  `json:",omitempty"`
}

// DagStatResult is one value of dag/stat. It carries both shapes: 0.9's
// {"Size","NumBlocks"} (totals over all roots) and 0.42's summary
// ({"UniqueBlocks","TotalSize","SharedSize","Ratio","DagStats"}), so
// that clients of either release decode it. Progress values have no
// Ratio; the last value (with Ratio) is the result.
type DagStatResult struct {
	Size          uint64
	NumBlocks     int64
	UniqueBlocks  int             `json:",omitempty"`
	TotalSize     uint64          `json:",omitempty"`
	SharedSize    uint64          `json:",omitempty"`
	Ratio         float32         `json:",omitempty"`
	DagStatsArray []*DagStatEntry `json:"DagStats,omitempty"`
}

func runDagStat(r *rpc.Request, e rpc.Emitter) error {
	progressive := true
	if r.IsSet("progress") {
		progressive = r.Bool("progress")
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	var roots []cid.Cid
	for _, a := range r.Args {
		c, rest, err := r.Node.Dag().ResolvePath(r.Ctx, a)
		if err != nil {
			return err
		}
		if len(rest) > 0 {
			return errors.New("cannot return size for anything other than a DAG with a root CID")
		}
		roots = append(roots, c)
	}
	all := node.NewCidSet()
	out := &DagStatResult{DagStatsArray: []*DagStatEntry{}}
	var redundant uint64
	emit := func() error {
		v := *out
		v.DagStatsArray = make([]*DagStatEntry, len(out.DagStatsArray))
		for i, s := range out.DagStatsArray {
			cp := *s
			v.DagStatsArray[i] = &cp
		}
		return e.Emit(&v)
	}
	for _, c := range roots {
		if _, err := r.Node.Block().Get(r.Ctx, c); err != nil {
			return err
		}
		st := &DagStatEntry{Cid: enc.Encode(c)}
		out.DagStatsArray = append(out.DagStatsArray, st)
		err := r.Node.Dag().WalkUnique(r.Ctx, c, node.WalkOptions{}, func(b cid.Cid, data []byte) error {
			size := uint64(len(data))
			st.Size += size
			st.NumBlocks++
			out.Size += size
			out.NumBlocks++
			if all.Visit(b) {
				out.TotalSize += size
			}
			redundant += size
			if progressive {
				return emit()
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("error traversing DAG: %w", err)
		}
	}
	out.UniqueBlocks = all.Len()
	if out.TotalSize > 0 {
		out.Ratio = float32(redundant) / float32(out.TotalSize)
	}
	out.SharedSize = redundant - out.TotalSize
	return emit()
}

type dagStatState struct{ last *DagStatResult }

func dagStatText(t *rpc.TextEnv, v any) error {
	st, _ := t.State.(*dagStatState)
	if st == nil {
		st = &dagStatState{}
		t.State = st
	}
	st.last = v.(*DagStatResult)
	show := t.TTY
	if t.Req.IsSet("progress") {
		show = t.Req.Bool("progress")
	}
	if show && st.last.Ratio == 0 {
		var blocks int64
		var size uint64
		for _, s := range st.last.DagStatsArray {
			blocks += s.NumBlocks
			size += s.Size
		}
		fmt.Fprintf(t.Err, "Fetched/Processed %d blocks, %d bytes (%s)\r", blocks, size, humanize.Bytes(size))
	}
	return nil
}

func dagStatTextDone(t *rpc.TextEnv) error {
	show := t.TTY
	if t.Req.IsSet("progress") {
		show = t.Req.Bool("progress")
	}
	if show {
		fmt.Fprint(t.Err, "\033[2K\r")
	}
	st, _ := t.State.(*dagStatState)
	if st == nil || st.last == nil || len(st.last.DagStatsArray) == 0 {
		return nil
	}
	ev := st.last
	w := t.Out
	fmt.Fprintln(w)
	cw := csv.NewWriter(w)
	cw.Comma = '\t'
	pad := len(ev.DagStatsArray[0].Cid)
	if err := cw.Write([]string{fmt.Sprintf("%-*s", pad, "CID"), fmt.Sprintf("%-15s", "Blocks"), "Size"}); err != nil {
		return err
	}
	for _, s := range ev.DagStatsArray {
		if err := cw.Write([]string{s.Cid, fmt.Sprintf("%-15s", fmt.Sprint(s.NumBlocks)), fmt.Sprint(s.Size)}); err != nil {
			return err
		}
	}
	cw.Flush()
	fmt.Fprint(w, "\nSummary\n")
	_, err := fmt.Fprintf(w, "Total Size: %d (%s)\nUnique Blocks: %d\nShared Size: %d (%s)\nRatio: %f\n\n\n",
		ev.TotalSize, humanize.Bytes(ev.TotalSize), ev.UniqueBlocks,
		ev.SharedSize, humanize.Bytes(ev.SharedSize), ev.Ratio)
	return err
}

func runDagExport(r *rpc.Request, e rpc.Emitter) error {
	localOnly := r.Bool("local-only")
	if localOnly && r.IsSet("offline") && !r.Bool("offline") {
		return errors.New("--local-only implies --offline and cannot be combined with --offline=false; please drop one of them")
	}
	c, _, err := r.Node.Dag().ResolvePath(r.Ctx, r.Args[0])
	if err != nil {
		return err
	}
	return r.Node.Dag().ExportCAR(r.Ctx, c, e, localOnly)
}

// CarImportStats counts the blocks dag/import read.
type CarImportStats struct {
	BlockCount      uint64
	BlockBytesCount uint64
}

// RootMeta is the pin outcome of one CAR root.
type RootMeta struct {
	Cid         CidLink
	PinErrorMsg string
}

// CarImportOutput is one line of dag/import: a root or the stats.
type CarImportOutput struct {
	Root  *RootMeta       `json:",omitempty"`
	Stats *CarImportStats `json:",omitempty"`
}

func runDagImport(r *rpc.Request, e rpc.Emitter) (err error) {
	pin := true
	if r.IsSet("pin-roots") {
		pin = r.Bool("pin-roots")
	}
	if r.Bool("local-only") {
		if r.IsSet("pin-roots") && r.Bool("pin-roots") {
			return errors.New("--local-only implies --pin-roots=false and cannot be combined with --pin-roots=true; please drop one of them")
		}
		pin = false
	}
	if r.Files == nil {
		return errors.New("expected a file handle")
	}
	im := r.Node.Dag().NewCarImporter()
	im.AllowBigBlock = r.Bool("allow-big-block")
	defer func() {
		if err != nil {
			im.Abort(r.Ctx)
		}
	}()
	it := r.Files.Entries()
	for it.Next() {
		f := files.FileFromEntry(it)
		if f == nil {
			return errors.New("expected a file handle")
		}
		err := im.Read(r.Ctx, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	pins, err := im.Finish(r.Ctx, pin)
	if err != nil {
		return err
	}
	for _, p := range pins {
		m := &RootMeta{Cid: CidLink{Cid: p.Cid.String()}}
		if p.Err != nil {
			m.PinErrorMsg = p.Err.Error()
		}
		if err := e.Emit(&CarImportOutput{Root: m}); err != nil {
			return err
		}
	}
	if r.Bool("stats") {
		return e.Emit(&CarImportOutput{Stats: &CarImportStats{BlockCount: im.Stats.Blocks, BlockBytesCount: im.Stats.Bytes}})
	}
	return nil
}

func dagImportText(t *rpc.TextEnv, v any) error {
	if t.Req.Bool("silent") {
		return nil
	}
	ev := v.(*CarImportOutput)
	if ev.Root == nil {
		if ev.Stats == nil {
			return errors.New("unexpected message from DAG import")
		}
		if t.Req.Bool("stats") {
			fmt.Fprintf(t.Out, "Imported %d blocks (%d bytes)\n", ev.Stats.BlockCount, ev.Stats.BlockBytesCount)
		}
		return nil
	}
	if ev.Stats != nil {
		return errors.New("unexpected message from DAG import")
	}
	enc, err := t.Req.CidEncoder()
	if err != nil {
		return err
	}
	c, err := cid.Decode(ev.Root.Cid.Cid)
	if err != nil {
		return err
	}
	if ev.Root.PinErrorMsg != "" {
		return fmt.Errorf("pinning root %q FAILED: %s", enc.Encode(c), ev.Root.PinErrorMsg)
	}
	_, err = fmt.Fprintf(t.Out, "Pinned root\t%s\tsuccess\n", enc.Encode(c))
	return err
}
