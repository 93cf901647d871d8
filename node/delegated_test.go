package node_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"

	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/namesys"
	"github.com/ipfs/boxo/path"
)

func mustPath(t *testing.T, s string) path.Path {
	t.Helper()
	p, err := path.NewPath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func setPublishers(t *testing.T, n *node.Node, urls ...string) {
	t.Helper()
	list := make([]any, len(urls))
	for i, u := range urls {
		list[i] = u
	}
	testutil.SetConfig(t, n, map[string]any{"Ipns.DelegatedPublishers": list})
}

var delegated = node.PublishOptions{Lifetime: time.Hour, AllowDelegated: true}

// checkPut is pub.CheckPut for n's own name.
func checkPut(t *testing.T, pub *testutil.IpnsPublisher, i int, n *node.Node, want path.Path, seq uint64) []byte {
	t.Helper()
	return pub.CheckPut(t, i, ipns.NameFromPeer(n.PeerID), want.String(), seq)
}

func resolvesTo(t *testing.T, n *node.Node, want path.Path) {
	t.Helper()
	got, err := n.Names().Resolve(context.Background(), ipns.NameFromPeer(n.PeerID).String(), node.ResolveOptions{NoCache: true})
	if err != nil || got.String() != want.String() {
		t.Errorf("resolve own name: %v %v, want %s", got, err, want)
	}
}

// --allow-delegated on an offline node: the record is kept locally and
// PUT to every publisher (a base URL, or one ending in /routing/v1/ipns),
// the same bytes as the local record; a later publish raises the sequence.
func TestDelegatedPublish_EveryPublisher(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a := testutil.NewIpnsPublisher(t, 0, false)
	b := testutil.NewIpnsPublisher(t, 0, false)
	setPublishers(t, n, a.URL, b.URL+"/routing/v1/ipns/")
	p1, p2 := mustPath(t, "/ipfs/bafkqaaa"), mustPath(t, "/ipfs/bafkqablimvwgy3y")
	name, err := n.Names().Publish(context.Background(), p1, delegated)
	if err != nil {
		t.Fatalf("publish --allow-delegated: %v", err)
	}
	if name != ipns.NameFromPeer(n.PeerID) {
		t.Errorf("name %s", name)
	}
	rawA := checkPut(t, a, 0, n, p1, 0)
	checkPut(t, b, 0, n, p1, 0)
	// The publishers learn who is talking, as Kubo's "kubo/0.42.0/..." tells them.
	if ua := a.Puts()[0].UserAgent; ua != node.AgentVersion() || !strings.HasPrefix(ua, "cairn/") {
		t.Errorf("User-Agent %q, want %q", ua, node.AgentVersion())
	}
	local, err := n.Store.Datastore().Get(context.Background(), namesys.IpnsDsKey(name))
	if err != nil || string(local) != string(rawA) {
		t.Errorf("local record differs from the one PUT (%v)", err)
	}
	resolvesTo(t, n, p1)

	if _, err := n.Names().Publish(context.Background(), p2, delegated); err != nil {
		t.Fatal(err)
	}
	checkPut(t, a, 1, n, p2, 1)
	checkPut(t, b, 1, n, p2, 1)
	resolvesTo(t, n, p2)

	// --allow-offline keeps the record local: no PUT.
	o := delegated
	o.AllowDelegated, o.AllowOffline = false, true
	if _, err := n.Names().Publish(context.Background(), p1, o); err != nil {
		t.Fatal(err)
	}
	if len(a.Puts()) != 2 || len(b.Puts()) != 2 {
		t.Errorf("--allow-offline reached the publishers: %d, %d requests", len(a.Puts()), len(b.Puts()))
	}
}

// Publishers that fail (an HTTP error, no answer within the timeout, no
// server) do not fail the publish, as in Kubo (whose HTTP routers ignore
// errors): the record is stored locally, and the working publisher has it.
func TestDelegatedPublish_FailingPublishers(t *testing.T) {
	defer node.SetDelegatedTimeout(time.Second)()
	n := testutil.MustOpenNode(t)
	ok := testutil.NewIpnsPublisher(t, 0, false)
	failing := testutil.NewIpnsPublisher(t, http.StatusInternalServerError, false)
	hanging := testutil.NewIpnsPublisher(t, 0, true)
	gone := testutil.NewIpnsPublisher(t, 0, false)
	gone.Close()
	setPublishers(t, n, failing.URL, hanging.URL, gone.URL, ok.URL)
	p := mustPath(t, "/ipfs/bafkqaaa")
	start := time.Now()
	if _, err := n.Names().Publish(context.Background(), p, delegated); err != nil {
		t.Fatalf("publish with failing publishers: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("publish took %s with a 1s publisher timeout", d)
	}
	checkPut(t, ok, 0, n, p, 0)
	checkPut(t, failing, 0, n, p, 0)
	checkPut(t, hanging, 0, n, p, 0)
	resolvesTo(t, n, p)
	// All of them failing: still published locally.
	setPublishers(t, n, failing.URL, gone.URL)
	p2 := mustPath(t, "/ipfs/bafkqablimvwgy3y")
	if _, err := n.Names().Publish(context.Background(), p2, delegated); err != nil {
		t.Fatalf("publish with only failing publishers: %v", err)
	}
	resolvesTo(t, n, p2)
}

// --allow-delegated without a publisher is Kubo's error, and nothing is
// stored; "auto" stands for no publisher when AutoConf is off, and when
// the node runs the DHT itself (the only IPNS publisher of Kubo's
// defaults serves the Amino DHT).
func TestDelegatedPublish_NoPublishers(t *testing.T) {
	n := testutil.MustOpenNode(t)
	for _, tc := range []map[string]any{
		{"Ipns.DelegatedPublishers": []any{}},
		{"Ipns.DelegatedPublishers": []any{"auto"}, "AutoConf.Enabled": false},
		{"Ipns.DelegatedPublishers": []any{"auto"}, "AutoConf.Enabled": true},
		{"Ipns.DelegatedPublishers": []any{"auto"}, "AutoConf.Enabled": true, "Routing.Type": "dhtclient"},
	} {
		testutil.SetConfig(t, n, tc)
		_, err := n.Names().Publish(context.Background(), mustPath(t, "/ipfs/bafkqaaa"), delegated)
		if !errors.Is(err, node.ErrNoDelegatedPublishers) || err.Error() != "no delegated publishers configured: add Ipns.DelegatedPublishers or use --allow-offline for local-only publishing" {
			t.Errorf("%v: %v", tc, err)
		}
	}
	if _, err := n.Names().Resolve(context.Background(), ipns.NameFromPeer(n.PeerID).String(), node.ResolveOptions{}); err == nil {
		t.Error("a refused publish stored a record")
	}
	o := delegated
	o.AllowOffline = true
	if _, err := n.Names().Publish(context.Background(), mustPath(t, "/ipfs/bafkqaaa"), o); err == nil || err.Error() != "cannot use both --allow-offline and --allow-delegated flags" {
		t.Errorf("both flags: %v", err)
	}
}

// Ipns.DelegatedPublishers as Kubo 0.42 expands it with its built-in
// AutoConf defaults (cairn fetches no AutoConf): "auto" is the public
// publisher only when the node runs no DHT of its own. Nothing here
// touches the network.
func TestDelegatedPublishers_Expand(t *testing.T) {
	str := config.NewOptionalString
	off, unset := config.False, config.Default
	for _, tc := range []struct {
		list    []string
		routing *config.OptionalString
		enabled config.Flag
		want    string
	}{
		{[]string{"auto"}, nil, unset, ""},
		{[]string{"auto"}, str("auto"), unset, ""},
		{[]string{"auto"}, str("dht"), unset, ""},
		{[]string{"auto"}, str("none"), unset, "https://delegated-ipfs.dev/routing/v1/ipns"},
		{[]string{"auto"}, str("none"), off, ""},
		{[]string{"http://127.0.0.1:1/", "auto", "auto", "https://[::1]:2/routing/v1/ipns/"}, str("none"), unset,
			"http://127.0.0.1:1 https://delegated-ipfs.dev/routing/v1/ipns https://[::1]:2/routing/v1/ipns"},
		{[]string{"http://127.0.0.1:1"}, nil, off, "http://127.0.0.1:1"},
	} {
		cfg := &config.Config{}
		cfg.Ipns.DelegatedPublishers = tc.list
		cfg.Routing.Type = tc.routing
		cfg.AutoConf.Enabled = tc.enabled
		if got := strings.Join(node.DelegatedPublishers(cfg), " "); got != tc.want {
			t.Errorf("%v (routing %v, autoconf %v): %q, want %q", tc.list, tc.routing, tc.enabled, got, tc.want)
		}
	}
	// URLs a publisher cannot be at are refused by the config commands.
	for _, bad := range []string{"ftp://127.0.0.1/", "127.0.0.1:8080", "http:///routing/v1/ipns",
		"http://127.0.0.1:1/routing/v1/providers", "http://127.0.0.1:1/other", "http://a b/"} {
		cfg := &config.Config{}
		cfg.Ipns.DelegatedPublishers = []string{bad}
		err := node.CheckConfigValues(cfg)
		if err == nil || !strings.HasPrefix(err.Error(), "Ipns.DelegatedPublishers: ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Online: --allow-delegated skips the DHT (a node without DHT peers
// publishes), while a plain publish with Routing.Type auto goes to the
// DHT and the publishers at once, as Kubo's default routing does (a DHT
// without peers fails nothing, as in Kubo); Routing.Type dht uses the DHT
// only.
func TestDelegatedPublish_Online(t *testing.T) {
	pub := testutil.NewIpnsPublisher(t, 0, false)
	withPub := func(doc map[string]any) {
		if err := config.SetKey(doc, "Ipns.DelegatedPublishers", []any{pub.URL}); err != nil {
			t.Fatal(err)
		}
	}
	n := testutil.MustOnlineNode(t, "auto", withPub)
	p := mustPath(t, "/ipfs/bafkqaaa")
	if _, err := n.Names().Publish(context.Background(), p, delegated); err != nil {
		t.Fatalf("online --allow-delegated without DHT peers: %v", err)
	}
	checkPut(t, pub, 0, n, p, 0)
	resolvesTo(t, n, p)
	p2 := mustPath(t, "/ipfs/bafkqablimvwgy3y")
	if _, err := n.Names().Publish(context.Background(), p2, node.PublishOptions{Lifetime: time.Hour}); err != nil {
		t.Errorf("plain publish without DHT peers: %v", err)
	}
	checkPut(t, pub, 1, n, p2, 1)

	d := testutil.MustOnlineNode(t, "dht", withPub)
	_, _ = d.Names().Publish(context.Background(), p, node.PublishOptions{Lifetime: time.Hour})
	if got := len(pub.Puts()); got != 2 {
		t.Errorf("Routing.Type dht reached the publishers: %d requests, want 2", got)
	}
}
