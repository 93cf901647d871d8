// diagds.go: diag datastore count, get and put (Kubo 0.43): raw access
// to the repo's key-value store for debugging, CLI only, on a stopped
// repo. Keys have Kubo's shapes: /blocks/<base32 multihash> names a
// stored block (Kubo's flatfs mount), every other key the datastore
// (/local/filesroot, /pins/..., /ipns/..., ...).

package commands

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"cairn/node"
	"cairn/rpc"

	dshelp "github.com/ipfs/boxo/datastore/dshelp"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
)

// blocksPrefix is where Kubo's datastore mounts its blockstore.
const blocksPrefix = "/blocks/"

// DiagDatastoreGet is the output of diag datastore get.
type DiagDatastoreGet struct {
	Key     string `json:"key"`
	Value   []byte `json:"value"`
	HexDump string `json:"hex_dump,omitempty"`
}

// DiagDatastoreCount is the output of diag datastore count.
type DiagDatastoreCount struct {
	Prefix string `json:"prefix"`
	Count  int64  `json:"count"`
}

const diagDatastoreHelp = `
The daemon must not be running when using this command.

WARNING: FOR DEBUGGING/TESTING ONLY`

var diagDatastoreCommands = []*rpc.Command{
	{
		Path:     "diag/datastore/get",
		Synopsis: "Read a raw key from the datastore.",
		Help: `Returns the value stored at the given datastore key.
Default output is raw bytes. Use --hex for human-readable hex dump.
Keys under /blocks/ (a base32 multihash, as Kubo's flatfs names them) read
stored blocks.` + diagDatastoreHelp,
		Args:     []rpc.Arg{{Name: "key", Kind: rpc.ArgString, Required: true, Help: "Datastore key to read (e.g., /pubsub/seqno/<peerid>)"}},
		Options:  []rpc.Option{{Names: []string{"hex"}, Type: rpc.Bool, Help: "Output hex dump instead of raw bytes"}},
		NoRemote: true,
		Output:   rpc.OutSingle,
		Run:      runDiagDatastoreGet,
		Type:     func() any { return &DiagDatastoreGet{} },
		Text: func(t *rpc.TextEnv, v any) error {
			g := v.(*DiagDatastoreGet)
			if g.HexDump != "" {
				_, err := fmt.Fprintf(t.Out, "Key: %s\nHex Dump:\n%s", g.Key, g.HexDump)
				return err
			}
			_, err := t.Out.Write(g.Value)
			return err
		},
	},
	{
		Path:     "diag/datastore/put",
		Synopsis: "Write a raw key-value pair to the datastore.",
		Help: `Stores the given value at the specified datastore key. Blocks are not
written this way (use 'cairn block put').` + diagDatastoreHelp,
		Args: []rpc.Arg{
			{Name: "key", Kind: rpc.ArgString, Required: true, Help: "Datastore key (e.g., /test/mykey)"},
			{Name: "value", Kind: rpc.ArgString, Required: true, Help: "Value to store (as a string)"},
		},
		NoRemote: true,
		Output:   rpc.OutNone,
		Run:      runDiagDatastorePut,
	},
	{
		Path:     "diag/datastore/count",
		Synopsis: "Count entries matching a datastore prefix.",
		Help: `Counts the number of datastore entries whose keys start with the given
prefix; stored blocks count under /blocks/.` + diagDatastoreHelp,
		Args:     []rpc.Arg{{Name: "prefix", Kind: rpc.ArgString, Required: true, Help: "Datastore key prefix (e.g., /pubsub/seqno/)"}},
		NoRemote: true,
		Output:   rpc.OutSingle,
		Run:      runDiagDatastoreCount,
		Type:     func() any { return &DiagDatastoreCount{} },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := fmt.Fprintf(t.Out, "%d\n", v.(*DiagDatastoreCount).Count)
			return err
		},
	},
}

func runDiagDatastoreGet(r *rpc.Request, e rpc.Emitter) error {
	k := r.Args[0]
	var val []byte
	if rest, ok := strings.CutPrefix(k, blocksPrefix); ok {
		h, err := dshelp.DsKeyToMultihash(ds.NewKey(rest))
		if err != nil {
			return fmt.Errorf("key not found: %s", k)
		}
		blk, err := r.Node.Blocks.Get(r.Ctx, cid.NewCidV1(cid.Raw, h))
		if err != nil {
			if node.IsNotFound(err) {
				return fmt.Errorf("key not found: %s", k)
			}
			return fmt.Errorf("failed to read key: %w", err)
		}
		val = blk.RawData()
	} else {
		v, err := r.Node.Store.Datastore().Get(r.Ctx, ds.NewKey(k))
		if errors.Is(err, ds.ErrNotFound) {
			return fmt.Errorf("key not found: %s", k)
		}
		if err != nil {
			return fmt.Errorf("failed to read key: %w", err)
		}
		val = v
	}
	out := &DiagDatastoreGet{Key: k, Value: val}
	if r.Bool("hex") {
		out.HexDump = hex.Dump(val)
	}
	return e.Emit(out)
}

func runDiagDatastorePut(r *rpc.Request, _ rpc.Emitter) error {
	k := ds.NewKey(r.Args[0])
	if k.String()+"/" == blocksPrefix || strings.HasPrefix(k.String(), blocksPrefix) {
		return errors.New("failed to put key: blocks are written with 'cairn block put'")
	}
	if err := r.Node.Store.Datastore().Put(r.Ctx, k, []byte(r.Args[1])); err != nil {
		return fmt.Errorf("failed to put key: %w", err)
	}
	return nil
}

func runDiagDatastoreCount(r *rpc.Request, e rpc.Emitter) error {
	prefix := r.Args[0]
	res, err := r.Node.Store.Datastore().Query(r.Ctx, dsq.Query{Prefix: prefix, KeysOnly: true})
	if err != nil {
		return fmt.Errorf("failed to query datastore: %w", err)
	}
	var n int64
	for x := range res.Next() {
		if x.Error != nil {
			res.Close()
			return fmt.Errorf("query error: %w", x.Error)
		}
		n++
	}
	res.Close()
	// The blocks: all of them when the prefix covers /blocks/, else those
	// whose key under /blocks/ starts with the rest of the prefix.
	clean := ds.NewKey(prefix).String()
	switch {
	case clean == "/" || clean+"/" == blocksPrefix:
		st, err := r.Node.Store.Stat()
		if err != nil {
			return fmt.Errorf("query error: %w", err)
		}
		n += int64(st.NumBlocks)
	case strings.HasPrefix(prefix, blocksPrefix):
		keys, err := r.Node.Blocks.AllKeysChan(r.Ctx)
		if err != nil {
			return fmt.Errorf("failed to query datastore: %w", err)
		}
		for c := range keys {
			if strings.HasPrefix(blocksPrefix+dshelp.MultihashToDsKey(c.Hash()).String()[1:], prefix) {
				n++
			}
		}
		if err := r.Ctx.Err(); err != nil {
			return err
		}
	}
	return e.Emit(&DiagDatastoreCount{Prefix: prefix, Count: n})
}
