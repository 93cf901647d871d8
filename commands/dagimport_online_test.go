package commands_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/rpc"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

// Ensure dag/import on an online node never waits on the network to pin
// roots: a CAR naming a root it lacks ("naked roots", as in
// kubo-rpc-client's fixtures) or a root whose DAG is incomplete answers at
// once, with Kubo's PinErrorMsg, and the import stands (issue 12 item 3).
func TestDagImport_Online_MissingRootsAnswerAtOnce(t *testing.T) {
	n := testutil.MustOnlineNode(t, "none", nil)
	sum := func(b []byte, codec uint64) cid.Cid {
		h, err := mh.Sum(b, mh.SHA2_256, -1)
		if err != nil {
			t.Fatal(err)
		}
		return cid.NewCidV1(codec, h)
	}
	missing := sum([]byte("a root nobody has"), cid.Raw)
	absentLeaf := sum([]byte("a leaf nobody has"), cid.Raw)
	// dag-json {"l":{"/":absentLeaf}}: present, its child absent.
	doc := []byte(`{"l":{"/":"` + absentLeaf.String() + `"}}`)
	partial := sum(doc, cid.DagJSON)
	other := []byte("an unrelated block")
	car := carV1(t, []cid.Cid{missing, partial}, carSection(sum(other, cid.Raw), other), carSection(partial, doc))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	res, err := rpc.Call(ctx, n, commands.DefaultTable, "dag/import", nil, map[string]string{"stats": "true"}, carParts(car))
	if err != nil {
		t.Fatalf("dag/import: %v after %v", err, time.Since(start))
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("dag/import took %v", el)
	}
	if len(res.Values) != 3 {
		t.Fatalf("dag/import: %d values %+v", len(res.Values), res.Values)
	}
	r0 := res.Values[0].(*commands.CarImportOutput).Root
	r1 := res.Values[1].(*commands.CarImportOutput).Root
	if r0.Cid.Cid != missing.String() || r0.PinErrorMsg != "ipld: could not find "+missing.String() {
		t.Fatalf("naked root: %+v", r0)
	}
	if r1.Cid.Cid != partial.String() || !strings.Contains(r1.PinErrorMsg, "could not find "+absentLeaf.String()) {
		t.Fatalf("incomplete root: %+v", r1)
	}
	if st := res.Values[2].(*commands.CarImportOutput).Stats; st == nil || st.BlockCount != 2 {
		t.Fatalf("stats: %+v", res.Values[2])
	}
	if !hasBlock(t, n, partial) {
		t.Fatal("the import was rolled back")
	}
	if pins, _ := n.Pins(context.Background(), ""); len(pins) != 0 {
		t.Fatalf("pins after failed root pins: %+v", pins)
	}
}
