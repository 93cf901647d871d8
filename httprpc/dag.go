// dag.go: the "dag" family. dag/put is here; the other dag commands come
// with the DAG/CAR work.

package httprpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"

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
	mc "github.com/multiformats/go-multicodec"
	mh "github.com/multiformats/go-multihash"
)

// maxBlockSize is the largest block peers exchange (2 MiB).
const maxBlockSize = 2 << 20

var dagCommands = []*Command{{
	Path:     "dag/put",
	Synopsis: "Add an object to the IPLD DAG.",
	Help: `Parses each input as --input-codec and stores it encoded as --store-codec.
The 0.9 options --format and --input-enc are accepted as aliases.`,
	Args: []Arg{{Name: "object data", Kind: ArgFile, Required: true, Variadic: true, Stdin: true,
		Help: "The object to put"}},
	Options: []Option{
		{Names: []string{"store-codec"}, Type: String, Default: "dag-cbor", Help: "Codec that the stored object will be encoded with."},
		{Names: []string{"input-codec"}, Type: String, Default: "dag-json", Help: "Codec that the input object is encoded in."},
		{Names: []string{"format"}, Type: String, Help: "Deprecated (0.9): codec to store with (cbor, protobuf, raw, ...)."},
		{Names: []string{"input-enc"}, Type: String, Help: "Deprecated (0.9): input encoding (json, cbor, raw)."},
		{Names: []string{"pin"}, Type: Bool, Help: "Pin this object when adding."},
		{Names: []string{"hash"}, Type: String, Default: "sha2-256", Help: "Hash function to use."},
		{Names: []string{"allow-big-block"}, Type: Bool, Help: "Disable block size check and allow creation of blocks bigger than 2MiB."},
	},
	Output: OutStream,
	Run:    runDagPut,
	Type:   func() any { return &DagPutResult{} },
	Text: func(t *TextEnv, v any) error {
		_, err := fmt.Fprintln(t.Out, v.(*DagPutResult).Cid.Cid)
		return err
	},
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

func runDagPut(r *Request, e Emitter) error {
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
		return fmt.Errorf("%s in not a valid multihash name", r.String("hash"))
	}
	dec, err := multicodec.LookupDecoder(inputCode)
	if err != nil {
		return fmt.Errorf("no decoder for input codec %s", input)
	}
	enc, err := multicodec.LookupEncoder(storeCode)
	if err != nil {
		return fmt.Errorf("no encoder for store codec %s", store)
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
			return fmt.Errorf("failed to decode input as %s: %w", input, err)
		}
		var buf bytes.Buffer
		if err := enc(nb.Build(), &buf); err != nil {
			return fmt.Errorf("failed to encode as %s: %w", store, err)
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
	if err := r.Node.PutBlocks(r.Ctx, r.Bool("pin"), blks...); err != nil {
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
