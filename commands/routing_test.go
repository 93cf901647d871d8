package commands_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/p2ptest"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/routing"
)

// Ensure Kubo 0.42's routing/* commands work across three loopback nodes:
// provide on A, findprovs and findpeer on C, an IPNS record put on A (key
// in the CIDv1 form kubo-rpc-client sends) and got on C as one Value event;
// provide/stat answers the legacy provider's shape.
func TestRouting_ThreeNodes_KuboNames(t *testing.T) {
	a, _, c := threeLANNodes(t)
	root := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("routing names"))})
	if _, err := callT(t, a, 20*time.Second, "routing/provide", []string{root}, nil, nil); err != nil {
		t.Fatalf("routing/provide: %v", err)
	}
	res, err := callT(t, c, 20*time.Second, "routing/findprovs", []string{root}, map[string]string{"num-providers": "1"}, nil)
	if err != nil {
		t.Fatalf("routing/findprovs: %v", err)
	}
	var found bool
	for _, v := range res.Values {
		ev := v.(*commands.RoutingEvent)
		found = found || (ev.Type == routing.Provider && ev.Responses[0].ID == a.PeerID)
	}
	if !found {
		t.Fatalf("routing/findprovs: A not among %d events", len(res.Values))
	}
	res, err = callT(t, c, 20*time.Second, "routing/findpeer", []string{a.PeerID.String()}, nil, nil)
	if err != nil {
		t.Fatalf("routing/findpeer: %v", err)
	}
	last := res.Values[len(res.Values)-1].(*commands.RoutingEvent)
	if last.Type != routing.FinalPeer || last.Responses[0].ID != a.PeerID || len(last.Responses[0].Addrs) == 0 {
		t.Fatalf("routing/findpeer: %+v", last)
	}

	rc, _ := cid.Decode(root)
	rec, err := ipns.NewRecord(a.PrivKey, path.FromCid(rc), 1, time.Now().Add(time.Hour), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := ipns.MarshalRecord(rec)
	name := "/ipns/" + ipns.NameFromPeer(a.PeerID).String()
	res, err = callT(t, a, 20*time.Second, "routing/put", []string{name}, nil,
		files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile(raw)}))
	if err != nil {
		t.Fatalf("routing/put: %v", err)
	}
	if len(res.Values) != 1 || res.Values[0].(*commands.RoutingEvent).Type != routing.Value || res.Values[0].(*commands.RoutingEvent).ID != a.PeerID.String() {
		t.Fatalf("routing/put answered %d values, first %+v", len(res.Values), res.Values[0])
	}
	res, err = callT(t, c, 20*time.Second, "routing/get", []string{name}, nil, nil)
	if err != nil {
		t.Fatalf("routing/get: %v", err)
	}
	ev := res.Values[0].(*commands.RoutingEvent)
	got, _ := base64.StdEncoding.DecodeString(ev.Extra)
	if len(res.Values) != 1 || ev.Type != routing.Value || !bytes.Equal(got, raw) {
		t.Fatalf("routing/get: %d values, first %+v", len(res.Values), ev)
	}
	// A record signed by another key is refused by the validator.
	other := "/ipns/" + ipns.NameFromPeer(c.PeerID).String()
	if err := callErr(t, a, "routing/put", []string{other}, nil,
		files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile(raw)})); err == nil {
		t.Fatal("routing/put of A's record under C's name succeeded")
	}

	ps := mustCall(t, a, "provide/stat", nil, nil, nil).Values[0].(*commands.ProvideStatOutput)
	if ps.Sweep != nil || ps.Legacy == nil || ps.Legacy.TotalReprovides < 1 || ps.Legacy.ReprovideInterval != 22*time.Hour {
		t.Fatalf("provide/stat: %+v", ps)
	}
	wantErr(t, callErr(t, a, "provide/stat", nil, map[string]string{"lan": "true"}, nil), "LAN stats only available for Sweep provider with Dual DHT")
}

// Ensure routing/* refuse bad input and offline use with Kubo's errors.
func TestRouting_BadInputAndOffline(t *testing.T) {
	off := testutil.MustOpenNode(t)
	value := func() files.Directory {
		return files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile([]byte("x"))})
	}
	wantErr(t, callErr(t, off, "routing/put", []string{"/ipns/" + randomPeer(t).String()}, nil, value()),
		"can't put while offline: pass `--allow-offline` to override")
	// --allow-offline keeps a valid record in the local record store, where
	// an offline resolve finds it; a value the validator refuses is an error
	// (Kubo 0.42 answers success and keeps nothing).
	target := path.FromCid(cid.MustParse("bafkqaaa"))
	rec, err := ipns.NewRecord(off.PrivKey, target, 1, time.Now().Add(time.Hour), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := ipns.MarshalRecord(rec)
	own := "/ipns/" + ipns.NameFromPeer(off.PeerID).String()
	allow := map[string]string{"allow-offline": "true"}
	if _, err := callT(t, off, 10*time.Second, "routing/put", []string{own}, allow,
		files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile(raw)})); err != nil {
		t.Fatalf("routing/put --allow-offline: %v", err)
	}
	if p, err := off.Names().Resolve(context.Background(), own, node.ResolveOptions{}); err != nil || p.String() != target.String() {
		t.Fatalf("resolve of the record put offline: %v %v", p, err)
	}
	for _, k := range []string{own, "/ipns/" + randomPeer(t).String()} {
		bad := value()
		if k != own {
			bad = files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile(raw)})
		}
		if err := callErr(t, off, "routing/put", []string{k}, allow, bad); err == nil {
			t.Fatalf("routing/put --allow-offline of a record the validator refuses (%s): no error", k)
		}
	}
	for _, p := range []string{"routing/get", "routing/findpeer", "routing/findprovs", "provide/stat", "swarm/peering/ls"} {
		args := []string{"/ipns/" + randomPeer(t).String()}
		switch p {
		case "routing/findpeer":
			args = []string{randomPeer(t).String()}
		case "routing/findprovs":
			args = []string{"bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"}
		case "provide/stat", "swarm/peering/ls":
			args = nil
		}
		wantErr(t, callErr(t, off, p, args, nil, nil), node.ErrOffline.Error())
	}
	on := testutil.MustOnlineNode(t, "auto", nil)
	if err := callErr(t, on, "routing/get", []string{"/nope/x"}, nil, nil); err.Error() != "invalid key" {
		t.Fatalf("routing/get bad key: %v", err)
	}
	if err := callErr(t, on, "routing/put", []string{"/pk/" + randomPeer(t).String()}, nil, value()); err == nil {
		t.Fatal("routing/put of a /pk/ key: no error (Kubo 0.42 takes IPNS names only)")
	}
}

// peeringWait bounds the waits for a peering dial, so that a test that
// would hang ends: the peering (node/p2p/peering.go) dials 7.5-12.5 s
// after it starts or loses the peer, and waits up to 2.5x longer after
// each dial that leaves it unconnected (one failed, or hung up before it
// saw the connection: up to 31 s more).
const peeringWait = 2 * time.Minute

// Ensure swarm/peering keeps a peer connected: Peering.Peers from the
// config is dialled at start and redialled after a disconnect (backoff),
// ls lists it, rm stops it, add takes it back; bad addresses are refused.
//
// Both nodes run without a DHT, so that only peering dials: with one, a
// query in flight when the connection closes dials the peer again at once
// (seen: B redialled A 8 ms after closing, which hid the disconnect), and
// a reconnection would prove nothing about peering.
func TestSwarmPeering_ReconnectsAndEdits(t *testing.T) {
	b := testutil.MustOnlineNode(t, "none", nil)
	bAddr := b.Net.Host.Addrs()[0].String()
	a := testutil.MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Peering.Peers", []any{map[string]any{"ID": b.PeerID.String(), "Addrs": []any{bAddr}}})
	})
	// dialled is A's open connections to B that A dialled.
	dialled := func() []network.Conn {
		var out []network.Conn
		for _, c := range a.Net.Host.Network().ConnsToPeer(b.PeerID) {
			if c.Stat().Direction == network.DirOutbound && !c.IsClosed() {
				out = append(out, c)
			}
		}
		return out
	}
	waitFor(t, peeringWait, "peering connection at start", func() bool { return len(dialled()) > 0 })
	ls := mustCall(t, a, "swarm/peering/ls", nil, nil, nil).Values[0].(*commands.PeeringPeers)
	if len(ls.Peers) != 1 || ls.Peers[0].ID != b.PeerID || len(ls.Peers[0].Addrs) != 1 || ls.Peers[0].Addrs[0].String() != bAddr {
		t.Fatalf("swarm/peering/ls: %+v", ls)
	}
	// B hangs up (once it has A's connection: a ClosePeer before would
	// miss it and leave A connected); A redials after its backoff: a
	// connection of A's that is not one of those B closed.
	old := a.Net.Host.Network().ConnsToPeer(b.PeerID)
	if err := p2ptest.HangUp(a.Net.Host, b.Net.Host, peeringWait); err != nil {
		t.Fatal(err)
	}
	waitFor(t, peeringWait, "peering reconnection", func() bool {
		for _, c := range dialled() {
			if !slices.Contains(old, c) {
				return true
			}
		}
		return false
	})

	res := mustCall(t, a, "swarm/peering/rm", []string{b.PeerID.String()}, nil, nil)
	if r := res.Values[0].(*commands.PeeringResult); r.ID != b.PeerID.String() || r.Status != "success" {
		t.Fatalf("swarm/peering/rm: %+v", r)
	}
	if ls := mustCall(t, a, "swarm/peering/ls", nil, nil, nil).Values[0].(*commands.PeeringPeers); len(ls.Peers) != 0 {
		t.Fatalf("ls after rm: %+v", ls)
	}
	// The config is not changed by the commands (as Kubo).
	if p := a.Config().Peering.Peers; len(p) != 1 {
		t.Fatalf("Peering.Peers changed by rm: %+v", p)
	}
	res = mustCall(t, a, "swarm/peering/add", []string{bAddr + "/p2p/" + b.PeerID.String()}, nil, nil)
	if r := res.Values[0].(*commands.PeeringResult); r.ID != b.PeerID.String() || r.Status != "success" {
		t.Fatalf("swarm/peering/add: %+v", r)
	}
	ls = mustCall(t, a, "swarm/peering/ls", nil, nil, nil).Values[0].(*commands.PeeringPeers)
	if len(ls.Peers) != 1 || ls.Peers[0].ID != b.PeerID {
		t.Fatalf("ls after add: %+v", ls)
	}

	if err := callErr(t, a, "swarm/peering/add", []string{"/ip4/127.0.0.1/tcp/4001"}, nil, nil); err == nil || !strings.Contains(err.Error(), "p2p") {
		t.Fatalf("add without /p2p: %v", err)
	}
	if err := callErr(t, a, "swarm/peering/add", []string{"not-an-addr"}, nil, nil); err == nil {
		t.Fatal("add of a malformed multiaddr: no error")
	}
	if err := callErr(t, a, "swarm/peering/rm", []string{"nope"}, nil, nil); err == nil {
		t.Fatal("rm of a malformed peer ID: no error")
	}
}

// Ensure routing/put on an online node with no DHT peer succeeds, as Kubo
// 0.42's (its routers' errors are ignored), keeps the record for
// routing/get and, with Routing.Type auto, sends it to the delegated
// publishers too, as Kubo's composed router does.
func TestRouting_PutNoPeersToPublishers(t *testing.T) {
	pub := testutil.NewIpnsPublisher(t, 0, false)
	a := testutil.MustOnlineNode(t, "auto", func(doc map[string]any) {
		config.SetKey(doc, "Ipns.DelegatedPublishers", []any{pub.URL})
	})
	target := path.FromCid(cid.MustParse("bafkqaaa"))
	rec, err := ipns.NewRecord(a.PrivKey, target, 3, time.Now().Add(time.Hour), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := ipns.MarshalRecord(rec)
	name := ipns.NameFromPeer(a.PeerID)
	res, err := callT(t, a, 20*time.Second, "routing/put", []string{"/ipns/" + name.String()}, nil,
		files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile(raw)}))
	if err != nil {
		t.Fatalf("routing/put without DHT peers: %v", err)
	}
	if ev := res.Values[0].(*commands.RoutingEvent); ev.Type != routing.Value || ev.ID != a.PeerID.String() {
		t.Fatalf("routing/put: %+v", ev)
	}
	pub.CheckPut(t, 0, name, target.String(), 3)
	res, err = callT(t, a, 20*time.Second, "routing/get", []string{"/ipns/" + name.String()}, nil, nil)
	if err != nil {
		t.Fatalf("routing/get of the record put: %v", err)
	}
	if got, _ := base64.StdEncoding.DecodeString(res.Values[0].(*commands.RoutingEvent).Extra); !bytes.Equal(got, raw) {
		t.Fatal("routing/get: not the record put")
	}
}

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
		ev := v.(*commands.RoutingEvent)
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
		ev := v.(*commands.RoutingEvent)
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
