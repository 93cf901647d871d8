package httprpc_test

import (
	"bytes"
	"encoding/base64"
	"testing"
	"time"

	"cairn/httprpc"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/routing"
)

// threeLANNodes starts three test-profile nodes with Kubo's default
// routing (auto) on loopback, A and C connected to B only.
func threeLANNodes(t *testing.T) (a, b, c *node.Node) {
	t.Helper()
	a = testutil.MustOnlineNode(t, "auto", nil)
	b = testutil.MustOnlineNode(t, "auto", nil)
	c = testutil.MustOnlineNode(t, "auto", nil)
	mustCall(t, a, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	mustCall(t, c, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	waitFor(t, 10*time.Second, "LAN routing tables", func() bool {
		return a.Net.DHT.LAN.RoutingTable().Size() > 0 && c.Net.DHT.LAN.RoutingTable().Size() > 0
	})
	return a, b, c
}

// Ensure test-profile nodes on loopback serve a LAN DHT to each other, as
// Kubo's test profile does (Routing.LoopbackAddressesOnLanDHT): C finds
// A's provider record with A's loopback address, and gets the IPNS record
// A put, through B; the WAN DHT stays empty.
func TestLANDHT_TestProfile_ProvidersAndValues(t *testing.T) {
	a, b, c := threeLANNodes(t)
	if lb := a.Config().Routing.LoopbackAddressesOnLanDHT; lb != config.True {
		t.Fatalf("test profile: Routing.LoopbackAddressesOnLanDHT = %v", lb)
	}
	root := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("on the LAN"))})
	if _, err := callT(t, a, 20*time.Second, "dht/provide", []string{root}, nil, nil); err != nil {
		t.Fatalf("dht/provide on A: %v", err)
	}
	res, err := callT(t, c, 20*time.Second, "dht/findprovs", []string{root}, map[string]string{"num-providers": "1"}, nil)
	if err != nil {
		t.Fatalf("findprovs on C: %v", err)
	}
	var found bool
	for _, v := range res.Values {
		ev := v.(*httprpc.RoutingEvent)
		if ev.Type == routing.Provider && len(ev.Responses) == 1 && ev.Responses[0].ID == a.PeerID && len(ev.Responses[0].Addrs) > 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("findprovs on C did not report A with addresses among %d events", len(res.Values))
	}

	// An IPNS record signed by A, put from A, read on C.
	rc, _ := cid.Decode(root)
	rec, err := ipns.NewRecord(a.PrivKey, path.FromCid(rc), 1, time.Now().Add(time.Hour), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ipns.MarshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	key := "/ipns/" + a.PeerID.String()
	if _, err := callT(t, a, 20*time.Second, "dht/put", []string{key}, nil,
		files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile(raw)})); err != nil {
		t.Fatalf("dht/put on A: %v", err)
	}
	res, err = callT(t, c, 20*time.Second, "dht/get", []string{key}, nil, nil)
	if err != nil {
		t.Fatalf("dht/get on C: %v", err)
	}
	// The Value event is not always the last: the DHT's query workers can
	// still report a SendingQuery after GetValue has returned (seen under
	// -race), and Kubo's client takes the Value event wherever it is.
	var values int
	for _, v := range res.Values {
		ev := v.(*httprpc.RoutingEvent)
		if ev.Type != routing.Value {
			continue
		}
		values++
		if got, _ := base64.StdEncoding.DecodeString(ev.Extra); !bytes.Equal(got, raw) {
			t.Fatalf("dht/get on C: Value event %+v is not A's record", ev)
		}
	}
	if values != 1 {
		t.Fatalf("dht/get on C: %d Value events among %d", values, len(res.Values))
	}
	// C found A through the LAN DHT: the WAN table holds no loopback peer.
	for _, n := range []*node.Node{a, b, c} {
		if s := n.Net.DHT.WAN.RoutingTable().Size(); s != 0 {
			t.Fatalf("WAN routing table holds %d loopback peers", s)
		}
	}
}
