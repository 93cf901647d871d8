package commands_test

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
)

// ipnsPubsubNodes starts n loopback nodes with IPNS over pubsub on
// (Ipns.UsePubsub only: it starts pubsub itself) as DHT clients, so no
// DHT holds a record, all connected to each other.
func ipnsPubsubNodes(t *testing.T, n int) []*node.Node {
	t.Helper()
	out := make([]*node.Node, n)
	for i := range out {
		out[i] = testutil.MustOnlineNode(t, "dhtclient", func(doc map[string]any) {
			config.SetKey(doc, "Ipns.UsePubsub", true)
		})
	}
	for i := range out {
		for j := i + 1; j < n; j++ {
			mustCall(t, out[i], "swarm/connect", []string{testutil.P2PAddr(t, out[j])}, nil, nil)
		}
	}
	return out
}

// routerGoroutines counts the goroutines of IPNS-over-pubsub name
// subscriptions (three per subscribed name and node).
func routerGoroutines() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "go-libp2p-pubsub-router.(*PubsubValueStore).handleSubscription") {
			n++
		}
	}
	return n
}

func ipnsPubsubState(t *testing.T, n *node.Node) bool {
	t.Helper()
	return blkCall(t, n, "name/pubsub/state", nil, nil, nil).Values[0].(*commands.IpnsPubsubState).Enabled
}

func ipnsPubsubSubs(t *testing.T, n *node.Node, opts map[string]string) []string {
	t.Helper()
	return blkCall(t, n, "name/pubsub/subs", nil, opts, nil).Values[0].(*commands.StringsOutput).Strings
}

// Ensure IPNS over pubsub between three loopback nodes that have no DHT
// server: a name published on A resolves on B through pubsub (B fetches
// A's record when it subscribes), a new value reaches B over the topic,
// name/pubsub/subs lists what B subscribed to, cancel ends it (and its
// goroutines), state reflects the config.
func TestIpnsPubsub_PublishResolveSubsCancel(t *testing.T) {
	ns := ipnsPubsubNodes(t, 3)
	a, b := ns[0], ns[1]
	for i, n := range ns {
		if !ipnsPubsubState(t, n) || n.Net.PubSub == nil {
			t.Fatalf("node %d: IPNS pubsub not enabled (or pubsub not started)", i)
		}
	}
	base := routerGoroutines()
	root1 := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("first"))})
	root2 := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("second"))})
	if _, err := callT(t, a, 30*time.Second, "name/publish", []string{root1}, nil, nil); err != nil {
		t.Fatalf("publish on A (DHT client, no DHT server): %v", err)
	}
	name := ipnsNameOf(a.PeerID)
	// A `pubsub sub` of the name's topic on B, opened before the name
	// subscription, shares the topic with it.
	watch, err := b.Net.PubSub.Subscribe(node.IpnsTopic(a.PeerID))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	start := time.Now()
	res, err := callT(t, b, 30*time.Second, "name/resolve", []string{name}, nil, nil)
	if err != nil {
		t.Fatalf("resolve on B: %v", err)
	}
	if got := res.Values[0].(*commands.ResolvedPath).Path; got != "/ipfs/"+root1 {
		t.Fatalf("resolve on B: %s, want /ipfs/%s", got, root1)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("first resolution took %s (the fetch on join should answer at once)", d)
	}
	if routerGoroutines() <= base {
		t.Fatal("no name subscription goroutine counted after resolution")
	}
	if got := ipnsPubsubSubs(t, b, nil); len(got) != 1 || got[0] != "/ipns/"+name {
		t.Errorf("subs on B: %v", got)
	}
	if got := ipnsPubsubSubs(t, b, map[string]string{"ipns-base": "b58mh"}); len(got) != 1 || got[0] != "/ipns/"+a.PeerID.String() {
		t.Errorf("subs on B (b58mh): %v", got)
	}
	// A new value goes over the topic to B, which is subscribed.
	if _, err := callT(t, a, 30*time.Second, "name/publish", []string{root2}, nil, nil); err != nil {
		t.Fatalf("second publish on A: %v", err)
	}
	waitFor(t, 15*time.Second, "the second value on B", func() bool {
		res, err := callT(t, b, 10*time.Second, "name/resolve", []string{name}, map[string]string{"nocache": "true"}, nil)
		return err == nil && res.Values[0].(*commands.ResolvedPath).Path == "/ipfs/"+root2
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		m, err := watch.Next(ctx)
		if err != nil {
			t.Fatalf("pubsub sub of the name's topic on B: %v", err)
		}
		if rec, err := ipns.UnmarshalRecord(m.Data); err == nil {
			if v, _ := rec.Value(); v.String() == "/ipfs/"+root2 {
				break
			}
		}
	}
	// Cancel on B: the subscription and its goroutines end.
	if got := blkCall(t, b, "name/pubsub/cancel", []string{"/ipns/" + name}, nil, nil).Values[0].(*commands.IpnsPubsubCancel); !got.Canceled {
		t.Error("cancel: Canceled false")
	}
	if got := ipnsPubsubSubs(t, b, nil); len(got) != 0 {
		t.Errorf("subs on B after cancel: %v", got)
	}
	if got := blkCall(t, b, "name/pubsub/cancel", []string{a.PeerID.String()}, nil, nil).Values[0].(*commands.IpnsPubsubCancel); got.Canceled {
		t.Error("second cancel: Canceled true")
	}
	for _, n := range []struct {
		name string
		node *node.Node
	}{{"A", a}, {"C", ns[2]}} {
		if _, err := rpc.Call(context.Background(), n.node, commands.DefaultTable, "name/pubsub/cancel", []string{name}, nil, nil); err != nil {
			t.Fatalf("cancel on %s: %v", n.name, err)
		}
	}
	waitFor(t, 10*time.Second, "subscription goroutines to end", func() bool { return routerGoroutines() <= base })
	// B subscribes again on the next resolution, the `pubsub sub` still
	// being there.
	res, err = callT(t, b, 30*time.Second, "name/resolve", []string{name}, map[string]string{"nocache": "true"}, nil)
	if err != nil || res.Values[0].(*commands.ResolvedPath).Path != "/ipfs/"+root2 {
		t.Fatalf("resolve on B after cancel: %v %v", res, err)
	}
	if got := ipnsPubsubSubs(t, b, nil); len(got) != 1 {
		t.Errorf("subs on B after resolving again: %v", got)
	}
}

// Ensure the name/pubsub commands answer as Kubo's when IPNS over pubsub
// is off (even with pubsub on), and refuse a name that is not one.
func TestIpnsPubsub_Disabled(t *testing.T) {
	off := testutil.MustOnlineNode(t, "dhtclient", func(doc map[string]any) { config.SetKey(doc, "Pubsub.Enabled", true) })
	if ipnsPubsubState(t, off) {
		t.Error("state: enabled without Ipns.UsePubsub")
	}
	offline := testutil.MustOpenNode(t)
	for _, n := range []*node.Node{off, offline} {
		for _, c := range []struct {
			path string
			args []string
		}{{"name/pubsub/subs", nil}, {"name/pubsub/cancel", []string{ipnsNameOf(n.PeerID)}}} {
			if got := blkCallErr(t, n, c.path, c.args, nil, nil); got != "IPNS pubsub subsystem is not enabled" {
				t.Errorf("%s: %q", c.path, got)
			}
		}
	}
	on := ipnsPubsubNodes(t, 1)[0]
	if got := blkCallErr(t, on, "name/pubsub/cancel", []string{"/ipns/not-a-name"}, nil, nil); !strings.HasPrefix(got, "not a valid IPNS name: ") {
		t.Errorf("cancel of a bad name: %q", got)
	}
	if got := blkCallErr(t, on, "name/pubsub/subs", nil, map[string]string{"ipns-base": "nope"}, nil); got == "" {
		t.Error("subs with a bad ipns-base: no error")
	}
}

// Ensure records sent on a name's topic by a third node are validated
// before they are kept: garbage, a record of A's name signed by another
// key and an expired one (all with a high sequence number) are dropped,
// and a valid record of A's relayed by that node is taken.
func TestIpnsPubsub_BadRecordsDropped(t *testing.T) {
	ns := ipnsPubsubNodes(t, 2)
	a, b := ns[0], ns[1]
	mallory := testutil.MustOnlineNode(t, "dhtclient", func(doc map[string]any) { config.SetKey(doc, "Pubsub.Enabled", true) })
	mustCall(t, mallory, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	root := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("good"))})
	if _, err := callT(t, a, 30*time.Second, "name/publish", []string{root}, nil, nil); err != nil {
		t.Fatal(err)
	}
	name := ipnsNameOf(a.PeerID)
	if _, err := callT(t, b, 30*time.Second, "name/resolve", []string{name}, nil, nil); err != nil {
		t.Fatalf("resolve on B: %v", err)
	}
	good, err := b.Network().IpnsPubsub().Record(context.Background(), a.PeerID)
	if err != nil {
		t.Fatal(err)
	}
	topic := node.IpnsTopic(a.PeerID)
	waitFor(t, 10*time.Second, "B on the topic, seen by Mallory", func() bool {
		for _, p := range mallory.Net.PubSub.Peers(topic) {
			if p == b.PeerID {
				return true
			}
		}
		return false
	})
	other := addTree(t, mallory, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("evil"))})
	oc, _ := cid.Decode(other)
	forged, _ := ipns.NewRecord(mallory.PrivKey, path.FromCid(oc), 100, time.Now().Add(time.Hour), time.Minute)
	forgedRaw, _ := ipns.MarshalRecord(forged)
	expired, _ := ipns.NewRecord(a.PrivKey, path.FromCid(oc), 100, time.Now().Add(-time.Hour), time.Minute)
	expiredRaw, _ := ipns.MarshalRecord(expired)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, bad := range [][]byte{[]byte("not a record"), forgedRaw, expiredRaw} {
		if err := mallory.Net.PubSub.Publish(ctx, topic, bad); err != nil {
			t.Fatal(err)
		}
	}
	// Then a valid record of A's (sequence 5, above A's 0): had a bad
	// one (sequence 100) been kept, this one would lose to it.
	newRoot := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("relayed"))})
	nc, _ := cid.Decode(newRoot)
	relayed, _ := ipns.NewRecord(a.PrivKey, path.FromCid(nc), 5, time.Now().Add(time.Hour), time.Minute)
	relayedRaw, _ := ipns.MarshalRecord(relayed)
	if err := mallory.Net.PubSub.Publish(ctx, topic, relayedRaw); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the relayed record on B", func() bool {
		got, err := b.Network().IpnsPubsub().Record(ctx, a.PeerID)
		return err == nil && bytes.Equal(got, relayedRaw)
	})
	time.Sleep(500 * time.Millisecond) // any bad record still in flight
	got, err := b.Network().IpnsPubsub().Record(ctx, a.PeerID)
	if err != nil || !bytes.Equal(got, relayedRaw) {
		t.Fatalf("B keeps %x (%v), want the relayed record", got, err)
	}
	if bytes.Equal(good, got) {
		t.Fatal("the relayed record was not taken")
	}
	res, err := callT(t, b, 20*time.Second, "name/resolve", []string{name}, map[string]string{"nocache": "true"}, nil)
	if err != nil || res.Values[0].(*commands.ResolvedPath).Path != "/ipfs/"+newRoot {
		t.Fatalf("resolve on B: %v %v", res, err)
	}
}
