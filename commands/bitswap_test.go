package commands_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"

	"github.com/ipfs/boxo/bitswap"
	bsnet "github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/boxo/blockservice"
	"github.com/ipfs/boxo/blockstore"
	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipld/unixfs/importer"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p"
)

// Ensure cairn exchanges blocks with a peer that is not cairn: a plain
// go-libp2p host running boxo bitswap over an in-memory blockstore
// serves a file cairn cats, and fetches a file cairn added.
func TestInterop_BoxoBitswapPeer_ServesAndFetches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay(), libp2p.DisableMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	bs := blockstore.NewBlockstore(dssync.MutexWrap(ds.NewMapDatastore()))
	ex := bitswap.New(ctx, bsnet.NewFromIpfsHost(h), nil, bs)
	defer ex.Close()
	dserv := merkledag.NewDAGService(blockservice.New(bs, ex))

	n := testutil.MustOnlineNode(t, "none", nil)
	addrs := h.Addrs()
	mustCall(t, n, "swarm/connect", []string{addrs[0].String() + "/p2p/" + h.ID().String()}, nil, nil)

	// The other peer serves: a 1.5 MiB UnixFS file in 256 KiB chunks.
	theirs := make([]byte, 3<<19)
	rand.Read(theirs)
	root, err := importer.BuildDagFromReader(dserv, chunker.NewSizeSplitter(bytes.NewReader(theirs), 256<<10))
	if err != nil {
		t.Fatal(err)
	}
	res, err := callT(t, n, 30*time.Second, "cat", []string{root.Cid().String()}, nil, nil)
	if err != nil {
		t.Fatalf("cairn cat of the boxo peer's file: %v", err)
	}
	if !bytes.Equal(res.Bytes, theirs) {
		t.Fatalf("cairn read %d bytes, want %d", len(res.Bytes), len(theirs))
	}

	// cairn serves: the other peer fetches a file cairn added.
	ours := make([]byte, 1<<20+12345)
	rand.Read(ours)
	c, err := cid.Decode(addTree(t, n, nil, map[string]files.Node{"f": files.NewBytesFile(ours)}))
	if err != nil {
		t.Fatal(err)
	}
	nd, err := dserv.Get(ctx, c)
	if err != nil {
		t.Fatalf("boxo peer fetching cairn's root: %v", err)
	}
	rd, err := uio.NewDagReader(ctx, nd, dserv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("boxo peer reading cairn's file: %v", err)
	}
	if !bytes.Equal(got, ours) {
		t.Fatalf("boxo peer read %d bytes, want %d", len(got), len(ours))
	}
	st := mustCall(t, n, "bitswap/stat", nil, nil, nil).Values[0].(*commands.BitswapStat)
	if st.BlocksReceived == 0 || st.BlocksSent == 0 || st.DataSent < uint64(len(ours)) {
		t.Fatalf("bitswap/stat after the exchange: %+v", st)
	}
	led := mustCall(t, n, "bitswap/ledger", []string{h.ID().String()}, nil, nil).Values[0].(*commands.BitswapLedger)
	if led.Peer != h.ID().String() || led.Sent == 0 {
		t.Fatalf("bitswap/ledger for the boxo peer: %+v", led)
	}
	if led := n.Net.Bitswap.Server.LedgerForPeer(h.ID()); led == nil || led.Sent == 0 {
		t.Fatalf("cairn's ledger for the boxo peer shows nothing sent: %+v", led)
	}
}

// Ensure the statistics commands answer offline as Kubo: 400, Code 1,
// "unable to run offline: ...".
func TestStats_Offline_ClientError(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for _, p := range []string{"stats/bw", "stats/bitswap", "bitswap/stat"} {
		resp := rpcPost(t, srv, p, nil, nil, "")
		b := readAll(t, resp.Body)
		if resp.StatusCode != 400 || !bytes.Contains(b, []byte(`"Message":"unable to run offline: this command must be run in online mode`)) ||
			!bytes.Contains(b, []byte(`"Code":1`)) {
			t.Fatalf("%s offline: %d %s", p, resp.StatusCode, b)
		}
	}
}
