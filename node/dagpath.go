// dagpath.go: resolving paths through any IPLD data (not just UnixFS
// directories), as Kubo's dag and object commands do: /ipfs/ paths walk
// dag-pb nodes as UnixFS (directory entries, HAMT shards), /ipld/ paths
// walk the raw data model; the walk stops at the last link it can follow
// and returns the rest of the path.

package node

import (
	"bytes"
	"context"

	_ "cairn/internal/dagjose" // dag-jose, as Kubo's dagjose plugin

	bsfetcher "github.com/ipfs/boxo/fetcher/impl/blockservice"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/boxo/path/resolver"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/ipfs/go-unixfsnode"
	dagpb "github.com/ipld/go-codec-dagpb"
	prime "github.com/ipld/go-ipld-prime"
	_ "github.com/ipld/go-ipld-prime/codec/cbor" // codecs DecodeBlock reads
	_ "github.com/ipld/go-ipld-prime/codec/dagcbor"
	_ "github.com/ipld/go-ipld-prime/codec/dagjson"
	_ "github.com/ipld/go-ipld-prime/codec/json"
	_ "github.com/ipld/go-ipld-prime/codec/raw"
	"github.com/ipld/go-ipld-prime/multicodec"
	basicnode "github.com/ipld/go-ipld-prime/node/basicnode"
)

// resolvers builds Kubo's two path resolvers over the local blocks.
func (n *Node) resolvers() (ipldRes, unixfsRes resolver.Resolver) {
	bs := n.localBlockService()
	if on := n.online; on != nil {
		bs = on.bserv // missing blocks come from peers, unless offline
	}
	fc := bsfetcher.NewFetcherConfig(bs)
	fc.PrototypeChooser = dagpb.AddSupportToChooser(bsfetcher.DefaultPrototypeChooser)
	return resolver.NewBasicResolver(fc), resolver.NewBasicResolver(fc.WithReifier(unixfsnode.Reify))
}

// ResolvePath resolves s (an /ipfs/, /ipns/ or /ipld/ path, or "<cid>[/rest]")
// to the CID of the last block it reaches and the path left inside that
// block (empty when s names a block).
func (d *Dag) ResolvePath(ctx context.Context, s string) (cid.Cid, []string, error) {
	n := d.n
	p, err := n.Names().ImmutablePath(ctx, s)
	if err != nil {
		return cid.Undef, nil, err
	}
	if len(p.Segments()) <= 2 {
		return p.RootCid(), nil, nil
	}
	ipldRes, unixfsRes := n.resolvers()
	res := unixfsRes
	if p.Namespace() == path.IPLDNamespace {
		res = ipldRes
	}
	c, rest, err := res.ResolveToLastNode(ctx, p)
	if err != nil {
		return cid.Undef, nil, err
	}
	return c, rest, nil
}

// ResolveNode resolves s and returns the decoded block it names (the rest
// of the path, if any, is ignored, as in Kubo's ResolveNode).
func (d *Dag) ResolveNode(ctx context.Context, s string) (ipld.Node, error) {
	n := d.n
	c, _, err := d.ResolvePath(ctx, s)
	if err != nil {
		return nil, err
	}
	return n.DAG.Get(ctx, c)
}

// DecodeBlock decodes a stored block into the IPLD data model: dag-pb
// with the dag-pb schema (so dag-json shows Data and Links as Kubo does),
// other codecs into basic nodes. Unknown codecs are an error.
func DecodeBlock(c cid.Cid, data []byte) (prime.Node, error) {
	dec, err := multicodec.LookupDecoder(c.Type())
	if err != nil {
		return nil, err
	}
	var nb prime.NodeBuilder
	if c.Type() == cid.DagProtobuf {
		nb = dagpb.Type.PBNode.NewBuilder()
	} else {
		nb = basicnode.Prototype.Any.NewBuilder()
	}
	if err := dec(nb, bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return nb.Build(), nil
}

// LoadNode reads block c (as Block.Get does) and decodes it with
// DecodeBlock.
func (d *Dag) LoadNode(ctx context.Context, c cid.Cid) (prime.Node, error) {
	n := d.n
	var nd prime.Node
	var data []byte
	err := n.view(ctx, c, func(b []byte) error {
		data = append([]byte(nil), b...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	nd, err = DecodeBlock(c, data)
	return nd, err
}
