package commands_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/libp2p/go-libp2p"
	dhtpb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
	"github.com/libp2p/go-msgio/pbio"
)

// call runs a command in-process with a deadline.
func callT(t *testing.T, n *node.Node, timeout time.Duration, path string, args []string, opts map[string]string, dir files.Directory) (*rpc.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return rpc.Call(ctx, n, commands.DefaultTable, path, args, opts, dir)
}

// waitFor polls cond every 50ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func randomPeer(t *testing.T) peer.ID {
	t.Helper()
	_, pk, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// closedPort returns a loopback TCP port nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return strconv.Itoa(port)
}

// Ensure three loopback nodes exchange content: add on A, cat on C (which
// only knows B) finds A through the DHT on B; findprovs, swarm/peers,
// ping and id answer; a swarm filter blocks a dial and is persisted.
func TestNet_ThreeNodes_AddOnACatOnC(t *testing.T) {
	a := testutil.MustOnlineNode(t, "dhtserver", nil)
	b := testutil.MustOnlineNode(t, "dhtserver", nil)
	c := testutil.MustOnlineNode(t, "dhtserver", nil)
	mustCall(t, a, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	res := mustCall(t, c, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	if got := res.Values[0].(*commands.StringsOutput).Strings; len(got) != 1 || got[0] != "connect "+b.PeerID.String()+" success" {
		t.Fatalf("swarm/connect output %q", got)
	}
	waitFor(t, 10*time.Second, "routing tables", func() bool {
		return a.Net.DHT.LAN.RoutingTable().Size() > 0 && c.Net.DHT.LAN.RoutingTable().Size() > 0
	})

	data := make([]byte, 700<<10)
	rand.Read(data)
	root := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile(data)})
	// The pin queued a provide; the provider announces it to B.
	waitFor(t, 15*time.Second, "A's provide", func() bool { return a.Net.ProvideStats().TotalProvides > 0 })

	res, err := callT(t, c, 20*time.Second, "dht/findprovs", []string{root}, map[string]string{"num-providers": "1"}, nil)
	if err != nil {
		t.Fatalf("findprovs: %v", err)
	}
	found := false
	for _, v := range res.Values {
		ev := v.(*commands.RoutingEvent)
		if ev.Type == routing.Provider && len(ev.Responses) == 1 && ev.Responses[0].ID == a.PeerID {
			found = true
		}
	}
	if !found {
		t.Fatalf("findprovs on C did not report A among %d events", len(res.Values))
	}

	res, err = callT(t, c, 30*time.Second, "cat", []string{root}, nil, nil)
	if err != nil {
		t.Fatalf("cat on C: %v", err)
	}
	if !bytes.Equal(res.Bytes, data) {
		t.Fatalf("cat on C: %d bytes, want %d", len(res.Bytes), len(data))
	}

	res = mustCall(t, c, "swarm/peers", nil, map[string]string{"verbose": "true"}, nil)
	peers := res.Values[0].(*commands.SwarmPeers).Peers
	var sawB bool
	for _, p := range peers {
		if p.Peer == b.PeerID.String() {
			sawB = true
			if p.Direction != int(network.DirOutbound) || p.Latency == "" || p.Muxer == "" {
				t.Fatalf("swarm/peers entry for B: %+v", p)
			}
		}
	}
	if !sawB {
		t.Fatalf("swarm/peers on C lacks B: %+v", peers)
	}

	res, err = callT(t, c, 20*time.Second, "ping", []string{b.PeerID.String()}, map[string]string{"count": "2"}, nil)
	if err != nil {
		t.Fatalf("ping: %v", err)
	}
	var pongs int
	for _, v := range res.Values {
		if p := v.(*commands.PingResult); p.Success && p.Text == "" && p.Time > 0 {
			pongs++
		}
	}
	first := res.Values[0].(*commands.PingResult).Text
	last := res.Values[len(res.Values)-1].(*commands.PingResult).Text
	if pongs != 2 || first != "PING "+b.PeerID.String()+"." || !strings.HasPrefix(last, "Average latency: ") {
		t.Fatalf("ping: %d pongs, first %q, last %q", pongs, first, last)
	}

	res = mustCall(t, c, "id", []string{b.PeerID.String()}, nil, nil)
	id := res.Values[0].(*commands.IDOutput)
	if id.ID != b.PeerID.String() || id.AgentVersion != "cairn-test" || len(id.Addresses) == 0 || len(id.Protocols) == 0 {
		t.Fatalf("id B from C: %+v", id)
	}
	self := mustCall(t, c, "id", nil, nil, nil).Values[0].(*commands.IDOutput)
	if len(self.Addresses) == 0 || !strings.HasSuffix(self.Addresses[0], "/p2p/"+c.PeerID.String()) || len(self.Protocols) == 0 {
		t.Fatalf("id self online: %+v", self)
	}

	// A filter on C closes its connection to B and blocks the dial back.
	mustCall(t, c, "swarm/filters/add", []string{"/ip4/127.0.0.0/ipcidr/8"}, nil, nil)
	if got := c.Config().Swarm.AddrFilters; len(got) != 1 || got[0] != "/ip4/127.0.0.0/ipcidr/8" {
		t.Fatalf("Swarm.AddrFilters not persisted: %q", got)
	}
	err = callErr(t, c, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	if !strings.Contains(err.Error(), "connect "+b.PeerID.String()+" failure") {
		t.Fatalf("filtered connect error: %v", err)
	}
	res = mustCall(t, c, "swarm/filters/rm", []string{"/ip4/127.0.0.0/ipcidr/8"}, nil, nil)
	if got := res.Values[0].(*commands.StringsOutput).Strings; len(got) != 1 {
		t.Fatalf("filters/rm: %q", got)
	}
	if got := c.Config().Swarm.AddrFilters; len(got) != 0 {
		t.Fatalf("filter still in config: %q", got)
	}
	mustCall(t, c, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
}

// Ensure network commands answer Kubo's offline error on an offline node.
func TestNet_Commands_Offline(t *testing.T) {
	n := testutil.MustOpenNode(t)
	// (bitswap/stat and stats/bw say "unable to run offline: " first:
	// TestStats_Offline_ClientError.)
	// Kubo has two texts: its commands' ErrNotOnline, and its core API's
	// ErrOffline for what goes through the swarm API.
	const command = "this command must be run in online mode. Try running 'ipfs daemon' first"
	const action = "this action must be run in online mode, try running 'ipfs daemon' first"
	p := randomPeer(t).String()
	for _, tc := range []struct {
		path string
		args []string
		want string
	}{
		{"swarm/peers", nil, action},
		{"swarm/addrs", nil, action},
		{"swarm/addrs/listen", nil, action},
		{"swarm/addrs/local", nil, action},
		{"swarm/connect", []string{"/ip4/127.0.0.1/tcp/4001/p2p/" + p}, "connect " + p + " failure: " + action},
		{"swarm/connect", []string{"/ip4/127.0.0.1/tcp/4001"}, "found no ipfs peers at /ip4/127.0.0.1/tcp/4001"},
		{"swarm/filters", nil, command},
		{"ping", []string{p}, command},
		{"dht/query", []string{p}, "routing service is not a DHT"},
	} {
		if err := callErr(t, n, tc.path, tc.args, nil, nil); err.Error() != tc.want {
			t.Fatalf("%s offline: %v", tc.path, err)
		}
	}
	// swarm/disconnect answers 200 with one failure line per address.
	res := mustCall(t, n, "swarm/disconnect", []string{"/ip4/127.0.0.1/tcp/4001/p2p/" + p, "/ip4/127.0.0.1/tcp/4002/p2p/" + p}, nil, nil)
	want := "disconnect " + p + " failure: " + action
	if got := res.Values[0].(*commands.StringsOutput).Strings; len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("swarm/disconnect offline: %q", got)
	}
	wantErr(t, callErr(t, n, "swarm/disconnect", []string{"/ip4/127.0.0.1/tcp/4001"}, nil, nil), "found no ipfs peers at /ip4/127.0.0.1/tcp/4001")
}

// Ensure bad input gives clear errors: a malformed multiaddr, a connect
// to self, an unknown peer, a ping to a port nobody listens on (the error ends the stream, in
// the trailer over HTTP), a DHT query that times out.
func TestNet_BadInput_Errors(t *testing.T) {
	n := testutil.MustOnlineNode(t, "dhtclient", nil)
	err := callErr(t, n, "swarm/connect", []string{"/ip4/127.0.0.1/tcp/notaport"}, nil, nil)
	if !strings.Contains(err.Error(), "notaport") {
		t.Fatalf("malformed multiaddr: %v", err)
	}
	// A connect to the node itself fails at once with Kubo's text (a
	// cluster peer asks its IPFS to connect to a pin's origins, which may
	// be that IPFS).
	for _, self := range []string{testutil.P2PAddr(t, n), "/p2p/" + n.PeerID.String()} {
		if err := callErr(t, n, "swarm/connect", []string{self}, nil, nil); err.Error() != "connect "+n.PeerID.String()+" failure: failed to dial: dial to self attempted" {
			t.Fatalf("connect to self %s: %v", self, err)
		}
	}
	unknown := randomPeer(t)
	_, err = callT(t, n, 10*time.Second, "swarm/connect", []string{unknown.String()}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "connect "+unknown.String()+" failure") {
		t.Fatalf("unknown peer connect: %v", err)
	}
	if err := callErr(t, n, "ping", []string{"notapeer"}, nil, nil); !strings.Contains(err.Error(), "invalid peer id") {
		t.Fatalf("ping bad id: %v", err)
	}
	if err := callErr(t, n, "ping", []string{n.PeerID.String()}, nil, nil); err.Error() != "error: can't ping self" {
		t.Fatalf("ping self: %v", err)
	}
	// A peer no router knows: Kubo's routing error after the lookup line.
	_, err = callT(t, n, 10*time.Second, "ping", []string{unknown.String()}, map[string]string{"count": "1"}, nil)
	if err == nil || err.Error() != "peer lookup failed: routing: not found" {
		t.Fatalf("ping unknown peer: %v", err)
	}

	// Ping over HTTP to a loopback port nobody listens on.
	srv := testutil.StartServer(t, n)
	target := "/ip4/127.0.0.1/tcp/" + closedPort(t) + "/p2p/" + unknown.String()
	resp, err := http.Post(srv.URL+"/api/v0/ping?"+url.Values{"arg": {target}, "count": {"1"}}.Encode(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"Text":"PING `+unknown.String()+`."`) || !strings.Contains(string(body), `Ping error: `) {
		t.Fatalf("ping unreachable body: %s", body)
	}
	if got := resp.Trailer.Get("X-Stream-Error"); got != "ping failed" {
		t.Fatalf("ping unreachable trailer %q (body %s)", got, body)
	}

	// A DHT peer that never answers: the query ends with the deadline.
	mute, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay(), libp2p.NoTransports,
		libp2p.DefaultTransports, libp2p.DisableMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	quit := make(chan struct{})
	defer close(quit)
	// It answers the routing table's lookup check about itself, then
	// nothing.
	mute.SetStreamHandler("/ipfs/lan/kad/1.0.0", func(s network.Stream) {
		defer s.Reset()
		r, w := pbio.NewDelimitedReader(s, 1<<20), pbio.NewDelimitedWriter(s)
		for {
			var m dhtpb.Message
			if err := r.ReadMsg(&m); err != nil {
				return
			}
			if m.GetType() == dhtpb.Message_FIND_NODE && peer.ID(m.GetKey()) == mute.ID() {
				if err := w.WriteMsg(&dhtpb.Message{Type: dhtpb.Message_FIND_NODE, Key: m.GetKey()}); err != nil {
					return
				}
				continue
			}
			<-quit
			return
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.Net.Host.Connect(ctx, peer.AddrInfo{ID: mute.ID(), Addrs: mute.Addrs()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "mute peer in the routing table", func() bool { return n.Net.DHT.LAN.RoutingTable().Size() > 0 })
	start := time.Now()
	_, err = callT(t, n, 2*time.Second, "dht/findprovs", []string{"bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "deadline") || time.Since(start) > 10*time.Second {
		t.Fatalf("DHT query with a mute peer: %v after %v", err, time.Since(start))
	}
}

// Ensure the bootstrap commands edit the config list (no network needed).
func TestBootstrap_AddRm_EditsConfig(t *testing.T) {
	n := testutil.MustOpenNode(t)
	peers := func(res *rpc.Result) []string { return res.Values[0].(*commands.BootstrapOutput).Peers }
	// The test profile's list is [] (not null), as Kubo answers it.
	if got := peers(mustCall(t, n, "bootstrap", nil, nil, nil)); got == nil || len(got) != 0 {
		t.Fatalf("test profile bootstrap list: %#v", got)
	}
	p := "/ip4/127.0.0.1/tcp/4001/p2p/" + randomPeer(t).String()
	if got := peers(mustCall(t, n, "bootstrap/add", []string{p}, nil, nil)); len(got) != 1 || got[0] != p {
		t.Fatalf("bootstrap add: %q", got)
	}
	// Kubo echoes an address already listed.
	if got := peers(mustCall(t, n, "bootstrap/add", []string{p}, nil, nil)); len(got) != 1 || got[0] != p {
		t.Fatalf("bootstrap add again: %q", got)
	}
	if got := n.Config().Bootstrap; len(got) != 1 || got[0] != p {
		t.Fatalf("config Bootstrap: %q", got)
	}
	if got := peers(mustCall(t, n, "bootstrap/add/default", nil, nil, nil)); len(got) != len(config.DefaultBootstrap) {
		t.Fatalf("add/default: %q", got)
	}
	if got := peers(mustCall(t, n, "bootstrap/rm", []string{p}, nil, nil)); len(got) != 1 || got[0] != p {
		t.Fatalf("bootstrap rm: %q", got)
	}
	if got := peers(mustCall(t, n, "bootstrap/rm/all", nil, nil, nil)); len(got) != len(config.DefaultBootstrap) {
		t.Fatalf("rm/all: %q", got)
	}
	// After rm all the list is null, as Kubo sets it and answers it.
	if got := peers(mustCall(t, n, "bootstrap/list", nil, nil, nil)); got != nil {
		t.Fatalf("list after rm/all: %#v", got)
	}
	// rm with nothing to remove: 200 {"Peers":[]}, as Kubo.
	if got := peers(mustCall(t, n, "bootstrap/rm", nil, nil, nil)); got == nil || len(got) != 0 {
		t.Fatalf("rm nothing: %#v", got)
	}
	wantErr(t, callErr(t, n, "bootstrap/add", []string{"/ip4/127.0.0.1/tcp/1"}, nil, nil),
		"invalid bootstrap address: /ip4/127.0.0.1/tcp/1")
	bare := "/p2p/" + randomPeer(t).String()
	wantErr(t, callErr(t, n, "bootstrap/add", []string{bare}, nil, nil), "bootstrap address without a transport: "+bare)
	wantErrPrefix(t, callErr(t, n, "bootstrap/add", []string{"bogus"}, nil, nil), `failed to parse multiaddr "bogus": `)
	wantErrPrefix(t, callErr(t, n, "bootstrap/rm", []string{"bogus"}, nil, nil), `failed to parse multiaddr "bogus": `)
	if err := callErr(t, n, "bootstrap/add", nil, nil, nil); err.Error() != "no bootstrap peers to add" {
		t.Fatalf("add nothing: %v", err)
	}
}

// Ensure the swarm address commands, stats/bw (with caps), dht put/get/
// query and stats/dht answer between two loopback DHT servers.
func TestNet_TwoNodes_AddrsBWAndDHTValues(t *testing.T) {
	a := testutil.MustOnlineNode(t, "dhtserver", func(doc map[string]any) {
		config.SetKey(doc, "Swarm.Bandwidth", map[string]any{"WANIn": "1MiB"})
	})
	b := testutil.MustOnlineNode(t, "dhtserver", nil)
	mustCall(t, a, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	waitFor(t, 10*time.Second, "routing tables", func() bool {
		return a.Net.DHT.LAN.RoutingTable().Size() > 0 && b.Net.DHT.LAN.RoutingTable().Size() > 0
	})
	listen := mustCall(t, a, "swarm/addrs/listen", nil, nil, nil).Values[0].(*commands.StringsOutput).Strings
	if len(listen) == 0 || !strings.HasPrefix(listen[0], "/ip4/127.0.0.1/tcp/") {
		t.Fatalf("addrs/listen: %q", listen)
	}
	local := mustCall(t, a, "swarm/addrs/local", nil, map[string]string{"id": "true"}, nil).Values[0].(*commands.StringsOutput).Strings
	if len(local) == 0 || !strings.HasSuffix(local[0], "/p2p/"+a.PeerID.String()) {
		t.Fatalf("addrs/local --id: %q", local)
	}
	known := mustCall(t, a, "swarm/addrs", nil, nil, nil).Values[0].(*commands.SwarmAddrs).Addrs
	if len(known[b.PeerID.String()]) == 0 {
		t.Fatalf("swarm/addrs lacks B: %v", known)
	}

	// The counters are swept once a second.
	var bw *commands.BandwidthStats
	waitFor(t, 5*time.Second, "bandwidth counters", func() bool {
		bw = mustCall(t, a, "stats/bw", nil, nil, nil).Values[0].(*commands.BandwidthStats)
		return bw.TotalIn > 0
	})
	if bw.TotalIn == 0 || bw.TotalOut == 0 || bw.Caps == nil || bw.Caps.WANIn != 1<<20 || bw.Caps.LANIn != 0 {
		t.Fatalf("stats/bw: %+v caps %+v", bw, bw.Caps)
	}
	if err := callErr(t, a, "stats/bw", nil, map[string]string{"peer": b.PeerID.String(), "proto": "/ipfs/ping/1.0.0"}, nil); !strings.Contains(err.Error(), "please only specify peer OR protocol") {
		t.Fatalf("stats/bw peer+proto: %v", err)
	}
	peerBW := mustCall(t, a, "stats/bw", nil, map[string]string{"peer": b.PeerID.String()}, nil).Values[0].(*commands.BandwidthStats)
	if peerBW.TotalOut == 0 {
		t.Fatalf("stats/bw --peer: %+v", peerBW)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	res, _ := rpc.Call(ctx, a, commands.DefaultTable, "stats/bw", nil, map[string]string{"poll": "true", "interval": "500ms"}, nil)
	if res == nil || len(res.Values) < 3 {
		t.Fatalf("stats/bw --poll: %v values", res)
	}

	// A public-key record: key /pk/<multihash of A's id>, value A's key.
	pub, err := crypto.MarshalPublicKey(a.PrivKey.GetPublic())
	if err != nil {
		t.Fatal(err)
	}
	key := "/pk/" + a.PeerID.String()
	res, err = callT(t, a, 20*time.Second, "dht/put", []string{key}, nil,
		files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile(pub)}))
	if err != nil {
		t.Fatalf("dht/put: %v", err)
	}
	res, err = callT(t, b, 20*time.Second, "dht/get", []string{key}, nil, nil)
	if err != nil {
		t.Fatalf("dht/get: %v", err)
	}
	if ev := res.Values[len(res.Values)-1].(*commands.RoutingEvent); ev.Type != routing.Value || ev.Extra != base64.StdEncoding.EncodeToString(pub) {
		t.Fatalf("dht/get last event: %+v", ev)
	}
	if err := callErr(t, a, "dht/get", []string{"/nope/x"}, nil, nil); err.Error() != "invalid key" {
		t.Fatalf("dht/get bad key: %v", err)
	}
	res, err = callT(t, a, 20*time.Second, "dht/query", []string{b.PeerID.String()}, nil, nil)
	if err != nil {
		t.Fatalf("dht/query: %v", err)
	}
	var final int
	for _, v := range res.Values {
		if v.(*commands.RoutingEvent).Type == routing.FinalPeer {
			final++
		}
	}
	if final == 0 {
		t.Fatalf("dht/query: no FinalPeer among %d events", len(res.Values))
	}
	// Loopback peers are in the LAN table (the second line), never in
	// the WAN one.
	sts := mustCall(t, a, "stats/dht", nil, nil, nil).Values
	if len(sts) != 2 || sts[0].(*commands.DHTStats).Name != "wan" || len(sts[0].(*commands.DHTStats).Buckets) != 0 {
		t.Fatalf("stats/dht: %d tables, first %+v", len(sts), sts[0])
	}
	st := sts[1].(*commands.DHTStats)
	var inTable bool
	for _, bk := range st.Buckets {
		for _, p := range bk.Peers {
			inTable = inTable || (p.ID == b.PeerID.String() && p.Connected)
		}
	}
	if st.Name != "lan" || !inTable {
		t.Fatalf("stats/dht: %+v", st)
	}
	// Providing: dht/provide of a local block, refusal of a missing one,
	// bitswap/reprovide of the pinned roots, stats/provide counting them.
	root := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("provide me"))})
	if _, err := callT(t, a, 20*time.Second, "dht/provide", []string{root}, nil, nil); err != nil {
		t.Fatalf("dht/provide: %v", err)
	}
	missing := "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	if err := callErr(t, a, "dht/provide", []string{missing}, nil, nil); err.Error() != "block "+missing+" not found locally, cannot provide" {
		t.Fatalf("dht/provide of a missing block: %v", err)
	}
	if _, err := callT(t, a, 20*time.Second, "bitswap/reprovide", nil, nil, nil); err != nil {
		t.Fatalf("bitswap/reprovide: %v", err)
	}
	ps := mustCall(t, a, "stats/provide", nil, nil, nil).Values[0].(*commands.ProvideStats)
	if ps.LastReprovideBatchSize != 1 || ps.TotalProvides < 2 || ps.AvgProvideDuration <= 0 {
		t.Fatalf("stats/provide: %+v", ps)
	}
	wl := mustCall(t, a, "bitswap/wantlist", nil, nil, nil).Values[0].(*commands.WantlistOutput)
	if wl.Keys == nil || len(wl.Keys) != 0 {
		t.Fatalf("bitswap/wantlist of an idle node: %+v", wl)
	}

	res, err = callT(t, b, 20*time.Second, "dht/findpeer", []string{a.PeerID.String()}, nil, nil)
	if err != nil {
		t.Fatalf("findpeer: %v", err)
	}
	last := res.Values[len(res.Values)-1].(*commands.RoutingEvent)
	if last.Type != routing.FinalPeer || len(last.Responses) != 1 || last.Responses[0].ID != a.PeerID || len(last.Responses[0].Addrs) == 0 {
		t.Fatalf("findpeer final event: %+v", last)
	}
}

// Ensure get, refs and pin/add on a node that holds nothing fetch the DAG
// from a connected peer.
func TestNet_GetRefsPin_FetchFromPeer(t *testing.T) {
	a := testutil.MustOnlineNode(t, "none", nil)
	b := testutil.MustOnlineNode(t, "none", nil)
	mustCall(t, b, "swarm/connect", []string{testutil.P2PAddr(t, a)}, nil, nil)
	one, two := make([]byte, 300<<10), make([]byte, 5000)
	rand.Read(one)
	rand.Read(two)
	root := addTree(t, a, map[string]string{"raw-leaves": "true", "wrap-with-directory": "true"}, map[string]files.Node{
		"one": files.NewBytesFile(one), "two": files.NewBytesFile(two)})

	res, err := callT(t, b, 20*time.Second, "get", []string{root}, nil, nil)
	if err != nil {
		t.Fatalf("get on B: %v", err)
	}
	tr := tar.NewReader(bytes.NewReader(res.Bytes))
	got := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got[h.Name] = body
	}
	if !bytes.Equal(got[root+"/one"], one) || !bytes.Equal(got[root+"/two"], two) {
		t.Fatalf("get on B: tar entries %d", len(got))
	}

	b2 := testutil.MustOnlineNode(t, "none", nil)
	mustCall(t, b2, "swarm/connect", []string{testutil.P2PAddr(t, a)}, nil, nil)
	res, err = callT(t, b2, 20*time.Second, "refs", []string{root}, map[string]string{"recursive": "true"}, nil)
	if err != nil {
		t.Fatalf("refs -r on B2: %v", err)
	}
	if len(res.Values) < 3 {
		t.Fatalf("refs -r on B2: %d refs", len(res.Values))
	}
	if _, err := callT(t, b2, 20*time.Second, "pin/add", []string{root}, nil, nil); err != nil {
		t.Fatalf("pin/add on B2: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	res = mustCall(t, b2, "cat", []string{root + "/one"}, nil, nil)
	if !bytes.Equal(res.Bytes, one) {
		t.Fatal("pinned file not readable on B2 once A is gone")
	}
}

// Ensure the text renderings of the network commands follow Kubo's.
func TestNet_Text_KuboFormats(t *testing.T) {
	render := func(path string, opts map[string]any, vs ...any) string {
		t.Helper()
		cmd := commands.DefaultTable.Find(path)
		var out bytes.Buffer
		env := &rpc.TextEnv{Out: &out, Err: io.Discard, Req: &rpc.Request{Opts: opts}}
		for _, v := range vs {
			if err := cmd.Text(env, v); err != nil {
				t.Fatalf("%s text: %v", path, err)
			}
		}
		return out.String()
	}
	got := render("ping", nil, &commands.PingResult{Success: true, Text: "PING x."},
		&commands.PingResult{Success: true, Time: 1500 * time.Microsecond}, &commands.PingResult{Text: "Ping error: boom"},
		&commands.PingResult{Success: false}, &commands.PingResult{Success: true, Text: "Average latency: 1.50ms"})
	if want := "PING x.\nPong received: time=1.50 ms\nPing error: boom\nPong failed\nAverage latency: 1.50ms\n"; got != want {
		t.Fatalf("ping text %q", got)
	}
	got = render("swarm/peers", nil, &commands.SwarmPeers{Peers: []commands.SwarmPeer{
		{Addr: "/ip4/127.0.0.1/tcp/1", Peer: "P", Latency: "1ms", Direction: 2, Streams: []commands.SwarmStream{{Protocol: "/a"}, {}}}}})
	if want := "/ip4/127.0.0.1/tcp/1/p2p/P 1ms outbound\n  /a\n  <no protocol name>\n"; got != want {
		t.Fatalf("swarm/peers text %q", got)
	}
	got = render("stats/bw", nil, &commands.BandwidthStats{TotalIn: 2000, TotalOut: 1000, RateIn: 10, RateOut: 0})
	if want := "Bandwidth\nTotalIn: 2.0 kB\nTotalOut: 1.0 kB\nRateIn: 10 B/s\nRateOut: 0 B/s\n"; got != want {
		t.Fatalf("stats/bw text %q", got)
	}
	got = render("swarm/addrs", nil, &commands.SwarmAddrs{Addrs: map[string][]string{"B": {"/x"}, "A": {"/y", "/z"}}})
	if want := "A (2)\n\t/y\n\t/z\nB (1)\n\t/x\n"; got != want {
		t.Fatalf("swarm/addrs text %q", got)
	}
	got = render("bitswap/stat", map[string]any{"verbose": true}, &commands.BitswapStat{BlocksReceived: 3, DataReceived: 30,
		Wantlist: []commands.CidLink{{Cid: "bafy"}}, Peers: []string{"P1"}})
	want := "bitswap status\n\tprovides buffer: 0 / 256\n\tblocks received: 3\n\tblocks sent: 0\n\tdata received: 30\n\tdata sent: 0\n" +
		"\tdup blocks received: 0\n\tdup data received: 0\n\twantlist [1 keys]\n\t\tbafy\n\tpartners [1]\n\t\tP1\n"
	if got != want {
		t.Fatalf("bitswap/stat text %q", got)
	}
}

// Ensure a request with offline=true on an online node does not fetch
// from peers (Kubo's --offline on a running daemon).
func TestNet_OfflineOption_NoFetch(t *testing.T) {
	a := testutil.MustOnlineNode(t, "none", nil)
	b := testutil.MustOnlineNode(t, "none", nil)
	mustCall(t, b, "swarm/connect", []string{testutil.P2PAddr(t, a)}, nil, nil)
	data := []byte("only A has this")
	root := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile(data)})
	srv := testutil.StartServer(t, b)
	get := func(offline string) (int, string) {
		resp, err := http.Post(srv.URL+"/api/v0/cat?"+url.Values{"arg": {root}, "offline": {offline}}.Encode(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("true"); code != 500 || !strings.Contains(body, "could not find") {
		t.Fatalf("cat offline=true on B: %d %s", code, body)
	}
	if code, body := get("false"); code != 200 || body != string(data) {
		t.Fatalf("cat on B: %d %q", code, body)
	}
}

// Ensure MFS works on an online node: files/cp of content only a peer
// holds fetches it, and writes (read back before they are synced) do not
// wait for the network.
func TestNet_MFS_OnlineCpAndWrite(t *testing.T) {
	a := testutil.MustOnlineNode(t, "none", nil)
	b := testutil.MustOnlineNode(t, "none", nil)
	mustCall(t, b, "swarm/connect", []string{testutil.P2PAddr(t, a)}, nil, nil)
	data := make([]byte, 600<<10)
	rand.Read(data)
	root := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile(data)})
	if _, err := callT(t, b, 20*time.Second, "files/cp", []string{"/ipfs/" + root, "/got"}, nil, nil); err != nil {
		t.Fatalf("files/cp from a peer: %v", err)
	}
	res, err := callT(t, b, 20*time.Second, "files/read", []string{"/got"}, nil, nil)
	if err != nil || !bytes.Equal(res.Bytes, data) {
		t.Fatalf("files/read /got: %v, %d bytes", err, len(res.Bytes))
	}
	for i := 0; i < 3; i++ {
		body := []byte(strings.Repeat("x", 1000*(i+1)))
		_, err := callT(t, b, 10*time.Second, "files/write", []string{"/w/new"}, map[string]string{"create": "true", "parents": "true", "truncate": "true"},
			files.NewMapDirectory(map[string]files.Node{"data": files.NewBytesFile(body)}))
		if err != nil {
			t.Fatalf("files/write %d on an online node: %v", i, err)
		}
		res, err := callT(t, b, 10*time.Second, "files/read", []string{"/w/new"}, nil, nil)
		if err != nil || !bytes.Equal(res.Bytes, body) {
			t.Fatalf("files/read after write %d: %v %d", i, err, len(res.Bytes))
		}
	}
}
