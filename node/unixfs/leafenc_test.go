package unixfs

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	pb "github.com/ipfs/boxo/ipld/unixfs/pb"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-cidutil"
	mh "github.com/multiformats/go-multihash"
)

// The leaf encoder gives NewLeafNode's bytes and CID for every leaf shape:
// dag-pb (File and Raw UnixFS types, as the balanced and trickle layouts
// build them) and raw leaves, CIDv0 and v1, other hashes, inlined CIDs,
// and chunk sizes around every varint and inline boundary.
func TestLeafEncoder_MatchesBoxo(t *testing.T) {
	v0, _ := merkledag.PrefixForCidVersion(0)
	v1, _ := merkledag.PrefixForCidVersion(1)
	v1b := v1
	v1b.MhType, v1b.MhLength = mh.BLAKE2B_MIN+31, -1
	v1s512 := v1
	v1s512.MhType = mh.SHA2_512
	builders := map[string]cid.Builder{
		"v0": v0, "v1": v1, "v1-blake2b": v1b, "v1-sha512": v1s512,
		"inline32":  cidutil.InlineBuilder{Builder: v1, Limit: 32},
		"inline128": cidutil.InlineBuilder{Builder: v0, Limit: 128},
		"nil":       nil,
	}
	const chunk = 262144
	sizes := []int{0, 1, 2, 31, 32, 33, 100, 115, 116, 117, 127, 128, 129, 16371, 16372, 16383, 16384,
		16385, chunk - 1, chunk, chunk + 1, 1<<20 - 1, 1 << 20, 1<<20 + 1}
	r := rand.New(rand.NewSource(7))
	for range 20 {
		sizes = append(sizes, r.Intn(1<<20))
	}
	data := make([]byte, 1<<20+1)
	r.Read(data)
	for name, b := range builders {
		for _, raw := range []bool{false, true} {
			for _, typ := range []pb.Data_DataType{ft.TFile, ft.TRaw} {
				db, err := (&helpers.DagBuilderParams{RawLeaves: raw, CidBuilder: b, Maxlinks: 174,
					Dagserv: &recordDAG{}}).New(chunker.NewSizeSplitter(strings.NewReader(""), chunk))
				if err != nil {
					t.Fatal(err)
				}
				e := newLeafEncoder(raw, typ, b)
				for _, n := range sizes {
					t.Run(fmt.Sprintf("%s/raw=%v/%s/%d", name, raw, typ, n), func(t *testing.T) {
						want, werr := db.NewLeafNode(append([]byte{}, data[:n]...), typ)
						buf := make([]byte, leafHead+n+leafTail)
						copy(buf[leafHead:], data[:n])
						got, gerr := e.encode(buf, n)
						if (werr != nil) != (gerr != nil) {
							t.Fatalf("error %v, boxo %v", gerr, werr)
						}
						if werr != nil {
							return
						}
						if got.Cid() != want.Cid() || !bytes.Equal(got.RawData(), want.RawData()) {
							t.Fatalf("leaf %s (%d bytes), boxo %s (%d bytes)", got.Cid(), len(got.RawData()),
								want.Cid(), len(want.RawData()))
						}
						gs, _ := got.Size()
						ws, _ := want.Size()
						if gs != ws {
							t.Fatalf("Size %d, boxo %d", gs, ws)
						}
					})
				}
			}
		}
	}
}
