// leafenc.go: a file leaf built around its chunk in one buffer.
//
// boxo's DagBuilderHelper.NewLeafNode copies a chunk twice: into the UnixFS
// Data message, then into the dag-pb node around it. A leaf is a fixed
// shape, so leafEncoder writes the two headers in front of the chunk and
// the Filesize field after it, in the buffer the chunk was read into, and
// hashes that: the same bytes as NewLeafNode's (TestLeafEncoder_MatchesBoxo),
// with the chunk copied once, from the reader into its buffer.

package unixfs

import (
	"encoding/binary"

	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	pb "github.com/ipfs/boxo/ipld/unixfs/pb"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// A leaf buffer holds leafHead bytes of room, the chunk, then leafTail.
// The headers of a dag-pb leaf take at most 1+3+2+1+3 bytes for chunks up
// to helpers.BlockSizeLimit (1 MiB: varints of 3 bytes), its trailer 1+3.
const (
	leafHead = 16
	leafTail = 8
)

// leafEncoder builds leaves as NewLeafNode(chunk, typ) of a DagBuilderHelper
// with the same raw-leaves setting and CID builder.
type leafEncoder struct {
	raw     bool
	typ     pb.Data_DataType
	builder cid.Builder
}

func newLeafEncoder(raw bool, typ pb.Data_DataType, builder cid.Builder) *leafEncoder {
	e := &leafEncoder{raw: raw, typ: typ}
	switch {
	case builder != nil && raw:
		e.builder = builder.WithCodec(cid.Raw)
	case builder != nil:
		e.builder = builder.WithCodec(cid.DagProtobuf)
	case raw:
		// boxo's NewRawNode: CIDv1, raw, sha2-256.
		e.builder = cid.Prefix{Version: 1, Codec: cid.Raw, MhType: 0x12, MhLength: -1}
	default:
		e.builder = merkledag.V0CidPrefix()
	}
	return e
}

// encode builds the leaf of the n chunk bytes at buf[leafHead:]; buf has
// room for leafTail bytes after them. The node keeps buf.
func (e *leafEncoder) encode(buf []byte, n int) (ipld.Node, error) {
	if n > helpers.BlockSizeLimit {
		return nil, helpers.ErrSizeLimitExceeded
	}
	data := buf[leafHead : leafHead+n]
	if e.raw {
		return merkledag.NewRawNodeWPrefix(data, e.builder)
	}
	// PBNode{Data: unixfs.Data{Type, Data, Filesize}}, no links: fields in
	// number order, as protobuf-go and go-codec-dagpb write them.
	vn := uvarintLen(uint64(n))
	inner := 2 + 1 + vn + n + 1 + vn
	start := leafHead - (1 + uvarintLen(uint64(inner)) + 2 + 1 + vn)
	p := start
	buf[p] = 0x0a // PBNode.Data
	p++
	p += binary.PutUvarint(buf[p:], uint64(inner))
	buf[p], buf[p+1] = 0x08, byte(e.typ) // Data.Type
	buf[p+2] = 0x12                      // Data.Data
	p += 3
	binary.PutUvarint(buf[p:], uint64(n))
	end := leafHead + n
	buf[end] = 0x18 // Data.filesize
	end++
	end += binary.PutUvarint(buf[end:], uint64(n))
	raw := buf[start:end:end]
	c, err := e.builder.Sum(raw)
	if err != nil {
		return nil, err
	}
	blk, err := blocks.NewBlockWithCid(raw, c)
	if err != nil {
		return nil, err
	}
	return merkledag.DecodeProtobufBlock(blk)
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}
