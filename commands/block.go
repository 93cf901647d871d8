// block.go: the "block" commands: raw blocks in and out of the store.

package commands

import (
	"errors"
	"fmt"
	"io"

	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/verifcid"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mc "github.com/multiformats/go-multicodec"
	mh "github.com/multiformats/go-multihash"
)

// softBlockLimit is the largest block bitswap exchanges (2 MiB).
const softBlockLimit = 2 * 1024 * 1024

var errBigBlock = errors.New("produced block is over 2MiB: big blocks can't be exchanged with other peers. consider using UnixFS for automatic chunking of bigger files, or pass --allow-big-block to override")

var blockCommands = []*rpc.Command{
	{
		Path:     "block/stat",
		Synopsis: "Print information of a raw IPFS block.",
		Help: `'cairn block stat' is a plumbing command for retrieving information
on raw IPFS blocks. It outputs the following to stdout:

	Key  - the CID of the block
	Size - the size of the block in bytes`,
		Args: []rpc.Arg{{Name: "cid", Kind: rpc.ArgString, Required: true, Stdin: true,
			Help: "The CID of an existing block to stat."}},
		Output: rpc.OutSingle,
		Run:    runBlockStat,
		Type:   func() any { return &BlockStat{} },
		Text: func(t *rpc.TextEnv, v any) error {
			bs := v.(*BlockStat)
			_, err := fmt.Fprintf(t.Out, "Key: %s\nSize: %d\n", bs.Key, bs.Size)
			return err
		},
	},
	{
		Path:     "block/get",
		Synopsis: "Get a raw IPFS block.",
		Help: `'cairn block get' is a plumbing command for retrieving raw IPFS blocks.
It takes a <cid>, and outputs the block to stdout.`,
		Args: []rpc.Arg{{Name: "cid", Kind: rpc.ArgString, Required: true, Stdin: true,
			Help: "The CID of an existing block to get."}},
		Output:      rpc.OutBytes,
		Run:         runBlockGet,
		ContentType: func(*rpc.Request) string { return "application/vnd.ipld.raw" },
	},
	{
		Path:     "block/put",
		Synopsis: "Store input as an IPFS block.",
		Help: `'cairn block put' is a plumbing command for storing raw IPFS blocks.
It reads data from stdin, and outputs the block's CID to stdout.

Unless cid-codec is specified, this command returns raw (0x55) CIDv1 CIDs.

Passing alternative --cid-codec does not modify imported data, nor run any
validation. It is provided solely for convenience for users who create blocks
in userland.

NOTE:
Do not use --format for any new code. It got superseded by --cid-codec and left
only for backward compatibility when a legacy CIDv0 is required (--format=v0).`,
		Args: []rpc.Arg{{Name: "data", Kind: rpc.ArgFile, Required: true, Variadic: true, Stdin: true,
			Help: "The data to be stored as an IPFS block."}},
		Options: []rpc.Option{
			{Names: []string{"cid-codec"}, Type: rpc.String, Default: "raw", Help: "Multicodec to use in returned CID"},
			{Names: []string{"mhtype"}, Type: rpc.String, Help: "Multihash hash function"},
			{Names: []string{"mhlen"}, Type: rpc.Int, Default: -1, Help: "Multihash hash length"},
			{Names: []string{"pin"}, Type: rpc.Bool, Default: false, Help: "Pin added blocks recursively"},
			{Names: []string{"allow-big-block"}, Type: rpc.Bool, Default: false, Help: "Disable block size check and allow creation of blocks bigger than 2MiB. WARNING: such blocks won't be transferable over the standard bitswap."},
			{Names: []string{"format", "f"}, Type: rpc.String, Help: "Use legacy format for returned CID (DEPRECATED)"},
		},
		Output: rpc.OutStream,
		Run:    runBlockPut,
		Type:   func() any { return &BlockStat{} },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := fmt.Fprintf(t.Out, "%s\n", v.(*BlockStat).Key)
			return err
		},
	},
	{
		Path:     "block/rm",
		Synopsis: "Remove IPFS block(s) from the local datastore.",
		Help: `'cairn block rm' is a plumbing command for removing raw ipfs blocks.
It takes a list of CIDs to remove from the local datastore.`,
		Args: []rpc.Arg{{Name: "cid", Kind: rpc.ArgString, Required: true, Variadic: true,
			Help: "CIDs of block(s) to remove."}},
		Options: []rpc.Option{
			{Names: []string{"force", "f"}, Type: rpc.Bool, Help: "Ignore nonexistent blocks."},
			{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Write minimal output."},
		},
		Output:   rpc.OutStream,
		Run:      runBlockRm,
		Type:     func() any { return &RemovedBlock{} },
		Text:     blockRmText,
		TextDone: blockRmTextDone,
	},
}

// BlockStat is the output of block stat and block put.
type BlockStat struct {
	Key  string
	Size int
}

// RemovedBlock is one result of block rm. An Error without a Hash means
// the removal was aborted.
type RemovedBlock struct {
	Hash  string `json:",omitempty"`
	Error string `json:",omitempty"`
}

func runBlockStat(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	c, err := resolveRoot(r.Ctx, r.Node, r.Args[0])
	if err != nil {
		return err
	}
	size, err := r.Node.Block().Size(r.Ctx, c)
	if err != nil {
		return err
	}
	return e.Emit(&BlockStat{Key: enc.Encode(c), Size: size})
}

func runBlockGet(r *rpc.Request, e rpc.Emitter) error {
	c, err := resolveRoot(r.Ctx, r.Node, r.Args[0])
	if err != nil {
		return err
	}
	blk, err := r.Node.Block().Get(r.Ctx, c)
	if err != nil {
		return err
	}
	_, err = e.Write(blk.RawData())
	return err
}

// blockHash returns the multihash code block put uses: --mhtype, else
// Import.HashFunction, else sha2-256.
func blockHash(r *rpc.Request) (uint64, error) {
	name := r.String("mhtype")
	if name == "" {
		name = "sha2-256"
		if hf := r.Node.Config().Import.HashFunction; hf.WithDefault("") != "" {
			name = hf.WithDefault("")
		}
	}
	code, ok := mh.Names[name]
	if !ok {
		return 0, fmt.Errorf("unrecognized multihash function: %s", name)
	}
	return code, nil
}

// blockPrefix builds the CID prefix of block put, applying Kubo's options
// in its order: hash, then cid-codec, then the legacy format.
func blockPrefix(code uint64, mhlen int, codec, format string) (cid.Prefix, error) {
	p := cid.Prefix{Version: 1, Codec: cid.Raw, MhType: code, MhLength: mhlen}
	if codec != "" {
		var c mc.Code
		if err := c.Set(codec); err != nil {
			return p, err
		}
		p.Codec = uint64(c)
	}
	if format == "" {
		return p, nil
	}
	if format == "v0" {
		p.Version = 0
	}
	switch format {
	case "v0", "protobuf":
		format = "dag-pb"
	case "cbor":
		format = "dag-cbor"
	}
	var c mc.Code
	if err := c.Set(format); err != nil {
		return p, err
	}
	p.Codec = uint64(c)
	if p.Version == 0 {
		if p.Codec != cid.DagProtobuf {
			return p, errors.New("only dag-pb is allowed with CIDv0")
		}
		if p.MhType != mh.SHA2_256 || (p.MhLength != -1 && p.MhLength != 32) {
			return p, errors.New("only sha2-255-32 is allowed with CIDv0")
		}
	}
	return p, nil
}

func runBlockPut(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	code, err := blockHash(r)
	if err != nil {
		return err
	}
	codec, format := r.String("cid-codec"), r.String("format")
	if format != "" {
		if codec != "" && codec != "raw" {
			return errors.New(`unable to use "format" (deprecated) and a custom "cid-codec" at the same time`)
		}
		codec = ""
	}
	// Kubo applies the codec options per block, so their errors come only
	// once there is a block.
	prefix, perr := blockPrefix(code, int(r.Int("mhlen")), codec, format)
	if r.Files == nil {
		return errors.New("expected a file argument")
	}
	it := r.Files.Entries()
	for it.Next() {
		f := files.FileFromEntry(it)
		if f == nil {
			return errors.New("expected a file")
		}
		if perr != nil {
			return perr
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return err
		}
		c, err := prefix.Sum(data)
		if err != nil {
			return err
		}
		if err := putBlock(r, c, data); err != nil {
			return err
		}
		// Kubo checks the size after storing (and pinning) the block.
		if len(data) > softBlockLimit && !r.Bool("allow-big-block") {
			return errBigBlock
		}
		if err := e.Emit(&BlockStat{Key: enc.Encode(c), Size: len(data)}); err != nil {
			return err
		}
	}
	return it.Err()
}

// putBlock stores one block (identity CIDs are not stored) and pins it
// with --pin.
func putBlock(r *rpc.Request, c cid.Cid, data []byte) error {
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
		return err
	}
	blk, err := blocks.NewBlockWithCid(data, c)
	if err != nil {
		return err
	}
	// As Kubo (PinWithMode), a pin is recorded without fetching the
	// blocks the new one links to.
	return r.Node.Block().Put(r.Ctx, r.Bool("pin"), blk)
}

func runBlockRm(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	force, quiet := r.Bool("force"), r.Bool("quiet")
	for _, arg := range r.Args {
		c, err := resolveRoot(r.Ctx, r.Node, arg)
		if err != nil {
			return err
		}
		if rerr := r.Node.Block().Remove(r.Ctx, c, force); rerr != nil {
			if err := e.Emit(&RemovedBlock{Hash: enc.Encode(c), Error: rerr.Error()}); err != nil {
				return err
			}
			continue
		}
		if !quiet {
			if err := e.Emit(&RemovedBlock{Hash: enc.Encode(c)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// blockRmState remembers failures for the final error.
type blockRmState struct{ failed bool }

func blockRmText(t *rpc.TextEnv, v any) error {
	st, _ := t.State.(*blockRmState)
	if st == nil {
		st = &blockRmState{}
		t.State = st
	}
	b := v.(*RemovedBlock)
	switch {
	case b.Hash == "" && b.Error != "":
		return fmt.Errorf("aborted: %s", b.Error)
	case b.Error != "":
		st.failed = true
		_, err := fmt.Fprintf(t.Err, "cannot remove %s: %s\n", b.Hash, b.Error)
		return err
	}
	_, err := fmt.Fprintf(t.Out, "removed %s\n", b.Hash)
	return err
}

func blockRmTextDone(t *rpc.TextEnv) error {
	if st, _ := t.State.(*blockRmState); st != nil && st.failed {
		return errors.New("some blocks not removed")
	}
	return nil
}
