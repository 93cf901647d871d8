package commands_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/miekg/dns"
)

func publish(t *testing.T, n *node.Node, p string, opts map[string]string) *commands.IpnsEntry {
	t.Helper()
	if opts == nil {
		opts = map[string]string{}
	}
	if _, ok := opts["allow-offline"]; !ok && n.Net == nil {
		opts["allow-offline"] = "true"
	}
	return blkCall(t, n, "name/publish", []string{p}, opts, nil).Values[0].(*commands.IpnsEntry)
}

func nameResolve(t *testing.T, n *node.Node, name string, opts map[string]string) string {
	t.Helper()
	var args []string
	if name != "" {
		args = []string{name}
	}
	res := blkCall(t, n, "name/resolve", args, opts, nil)
	return res.Values[len(res.Values)-1].(*commands.ResolvedPath).Path
}

func ipnsNameOf(id peer.ID) string { return ipns.NameFromPeer(id).String() }

func TestName_PublishResolveOffline(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "site", files.NewMapDirectory(map[string]files.Node{
		"index.html": files.NewBytesFile([]byte("<h1>board</h1>")),
	}), nil)
	// Offline without --allow-offline: Kubo's error.
	msg := blkCallErr(t, n, "name/publish", []string{"/ipfs/" + root}, nil, nil)
	if msg != node.ErrPublishOffline.Error() {
		t.Errorf("offline publish: %q", msg)
	}
	ie := publish(t, n, root, nil)
	self := ipnsNameOf(n.PeerID)
	if ie.Name != self || ie.Value != "/ipfs/"+root {
		t.Fatalf("publish: %+v, want name %s", ie, self)
	}
	if got := nameResolve(t, n, "", nil); got != "/ipfs/"+root {
		t.Errorf("name/resolve (self): %s", got)
	}
	for _, name := range []string{self, "/ipns/" + self, n.PeerID.String()} {
		if got := nameResolve(t, n, name, map[string]string{"nocache": "true"}); got != "/ipfs/"+root {
			t.Errorf("name/resolve %s: %s", name, got)
		}
	}
	// /ipns/ paths resolve in resolve, cat, ls, pin add.
	file := lsKey(t, n, root+"/index.html")
	if got := resolveOne(t, n, "/ipns/"+self+"/index.html", nil); got != "/ipfs/"+file {
		t.Errorf("resolve /ipns/…/index.html: %s", got)
	}
	if got := string(blkCall(t, n, "cat", []string{"/ipns/" + self + "/index.html"}, nil, nil).Bytes); got != "<h1>board</h1>" {
		t.Errorf("cat /ipns/: %q", got)
	}
	if out := lsOne(t, n, []string{"/ipns/" + self}, nil); len(out.Objects[0].Links) != 1 {
		t.Errorf("ls /ipns/: %+v", out)
	}
	blkCall(t, n, "pin/add", []string{"/ipns/" + self + "/index.html"}, nil, nil)
	pins := blkCall(t, n, "pin/ls", []string{file}, nil, nil)
	if len(pins.Values) == 0 {
		t.Errorf("pin add /ipns/: not pinned")
	}
	// The text output.
	srv := testutil.StartServer(t, n)
	body := string(readAll(t, rpcPost(t, srv, "name/publish", map[string][]string{"arg": {root}, "allow-offline": {"true"}, "encoding": {"text"}}, nil, "").Body))
	if body != "Published to "+self+": /ipfs/"+root+"\n" {
		t.Errorf("text: %q", body)
	}
	body = string(readAll(t, rpcPost(t, srv, "name/publish", map[string][]string{"arg": {root}, "allow-offline": {"true"}, "Q": {"true"}, "encoding": {"text"}}, nil, "").Body))
	if body != self+"\n" {
		t.Errorf("quieter: %q", body)
	}
}

func TestName_KeysSequenceLifetime(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a := blkAdd(t, n, "a", files.NewBytesFile([]byte("a")), nil)
	b := blkAdd(t, n, "b", files.NewBytesFile([]byte("b")), nil)
	k := keyGen(t, n, "site", map[string]string{"ipns-base": "b58mh"})
	kid, _ := peer.Decode(k.Id)
	// --key by name and by peer ID.
	if ie := publish(t, n, a, map[string]string{"key": "site"}); ie.Name != ipnsNameOf(kid) {
		t.Errorf("publish --key=site: %s", ie.Name)
	}
	publish(t, n, b, map[string]string{"key": k.Id})
	if got := nameResolve(t, n, k.Id, nil); got != "/ipfs/"+b {
		t.Errorf("after publish by peer ID: %s", got)
	}
	if msg := blkCallErr(t, n, "name/publish", []string{a}, map[string]string{"key": "nope", "allow-offline": "true"}, nil); msg != "no key by the given name or PeerID was found" {
		t.Errorf("unknown key: %q", msg)
	}
	// Sequence numbers only go up.
	publish(t, n, a, map[string]string{"key": "site", "sequence": "10"})
	if msg := blkCallErr(t, n, "name/publish", []string{b}, map[string]string{"key": "site", "sequence": "3", "allow-offline": "true"}, nil); msg != "sequence number must be greater than the current record sequence" {
		t.Errorf("lower sequence: %q", msg)
	}
	// Bad lifetimes and paths: clear errors, the published record unchanged.
	for _, tc := range []struct {
		arg  string
		opts map[string]string
		want string
	}{
		{b, map[string]string{"lifetime": "-1h"}, "lifetime must be greater than zero, got -1h"},
		{b, map[string]string{"lifetime": "0s"}, "lifetime must be greater than zero, got 0s"},
		{b, map[string]string{"lifetime": "87600000h"}, "error parsing lifetime option: time: invalid duration"},
		{b, map[string]string{"lifetime": "7days"}, "error parsing lifetime option"},
		{b, map[string]string{"ttl": "-1s"}, "ttl must not be negative, got -1s"},
		{b, map[string]string{"ttl": "49h"}, "ttl (49h0m0s) must not be greater than lifetime (48h0m0s)"},
		{b, map[string]string{"lifetime": "1h", "ttl": "61m"}, "ttl (1h1m0s) must not be greater than lifetime (1h0m0s)"},
		{b, map[string]string{"allow-delegated": "true"}, "cannot use both --allow-offline and --allow-delegated flags"},
		{"/ipfs/" + a + "/missing", nil, "no link named"},
		{"not a path", nil, "invalid path"},
	} {
		opts := map[string]string{"key": "site", "allow-offline": "true"}
		for k, v := range tc.opts {
			opts[k] = v
		}
		if msg := blkCallErr(t, n, "name/publish", []string{tc.arg}, opts, nil); !strings.Contains(msg, tc.want) {
			t.Errorf("publish %s %v: %q, want %q", tc.arg, tc.opts, msg, tc.want)
		}
	}
	if got := nameResolve(t, n, k.Id, map[string]string{"nocache": "true"}); got != "/ipfs/"+a {
		t.Errorf("record changed by refused publishes: %s", got)
	}
	// --resolve=false publishes a path that is not here.
	missing := "/ipfs/bafkqaaa"
	if ie := publish(t, n, missing, map[string]string{"resolve": "false"}); ie.Value != missing {
		t.Errorf("resolve=false: %+v", ie)
	}
	// Names that are not names.
	for _, name := range []string{strings.Repeat("k", 10<<10), "not-a-name", "/ipns/"} {
		if msg := blkCallErr(t, n, "name/resolve", []string{name}, nil, nil); msg == "" {
			t.Errorf("resolve %.20q: no error", name)
		}
	}
	if msg := blkCallErr(t, n, "name/resolve", []string{strings.Repeat("k", 10<<10)}, nil, nil); !strings.Contains(msg, "name too long") {
		t.Errorf("10 kB name: %q", msg)
	}
	if msg := blkCallErr(t, n, "name/resolve", []string{k.Id}, map[string]string{"dht-timeout": "-1s"}, nil); msg != "DHT timeout value must be >= 0" {
		t.Errorf("negative dht-timeout: %q", msg)
	}
}

// A name that points at a name: resolve follows it unless -r=false.
func TestName_Recursive(t *testing.T) {
	n := testutil.MustOpenNode(t)
	c := blkAdd(t, n, "c", files.NewBytesFile([]byte("c")), nil)
	inner := keyGen(t, n, "inner", nil)
	publish(t, n, c, map[string]string{"key": "inner"})
	publish(t, n, "/ipns/"+inner.Id, map[string]string{"key": "self"})
	self := "/ipns/" + ipnsNameOf(n.PeerID)
	innerName := "/ipns/" + ipnsNameOf(mustPeer(t, inner.Id))
	if got := nameResolve(t, n, self, nil); got != "/ipfs/"+c {
		t.Errorf("recursive: %s", got)
	}
	if got := nameResolve(t, n, self, map[string]string{"recursive": "false"}); got != innerName {
		t.Errorf("recursive=false: %s, want %s", got, innerName)
	}
	if got := resolveOne(t, n, self, map[string]string{"recursive": "false"}); got != innerName {
		t.Errorf("resolve -r=false: %s", got)
	}
	if got := resolveOne(t, n, self, nil); got != "/ipfs/"+c {
		t.Errorf("resolve: %s", got)
	}
	// stream emits each step's final answer.
	res := blkCall(t, n, "name/resolve", []string{self}, map[string]string{"stream": "true"}, nil)
	if last := res.Values[len(res.Values)-1].(*commands.ResolvedPath).Path; last != "/ipfs/"+c {
		t.Errorf("stream: %v", res.Values)
	}
}

func mustPeer(t *testing.T, s string) peer.ID {
	t.Helper()
	id, err := peer.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Records survive a restart, and the republisher signs them again with
// Ipns.RecordLifetime.
func TestName_RepublishAfterRestart(t *testing.T) {
	dir := testutil.MustInitRepo(t)
	n, err := node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := blkAdd(t, n, "r", files.NewBytesFile([]byte("r")), nil)
	publish(t, n, root, map[string]string{"lifetime": "1h"})
	n.Close()
	n, err = node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	testutil.SetConfig(t, n, map[string]any{"Ipns.RecordLifetime": "72h"})
	if done, failed := n.Names().Republish(context.Background()); done != 1 || failed != 0 {
		t.Fatalf("republish: %d done, %d failed", done, failed)
	}
	rec := testutil.LocalRecord(t, n)
	eol, _ := rec.Validity()
	if time.Until(eol) < 71*time.Hour {
		t.Errorf("republished record valid until %v", eol)
	}
	if v, _ := rec.Value(); v.String() != "/ipfs/"+root {
		t.Errorf("republished value %s", v)
	}
	if got := nameResolve(t, n, "", map[string]string{"nocache": "true"}); got != "/ipfs/"+root {
		t.Errorf("resolve after restart: %s", got)
	}
}

// A record's TTL is --ttl, at most its lifetime; without --ttl the
// default (5 min) capped to the lifetime (Kubo 0.43).
func TestName_Publish_TTLAtMostLifetime(t *testing.T) {
	n := testutil.MustOpenNode(t)
	for i, tc := range []struct {
		opts map[string]string
		want time.Duration
	}{
		{nil, 5 * time.Minute},
		{map[string]string{"lifetime": "1m"}, time.Minute},
		{map[string]string{"lifetime": "1h", "ttl": "10m"}, 10 * time.Minute},
		{map[string]string{"lifetime": "1h", "ttl": "1h"}, time.Hour},
		{map[string]string{"ttl": "0s"}, 0},
	} {
		// A new value each time: a record of the same value with a
		// shorter validity would be older than the last one.
		root := blkAdd(t, n, "r", files.NewBytesFile(fmt.Appendf(nil, "r%d", i)), nil)
		publish(t, n, root, tc.opts)
		if ttl, err := testutil.LocalRecord(t, n).TTL(); err != nil || ttl != tc.want {
			t.Errorf("publish %v: record TTL %v, %v; want %v", tc.opts, ttl, err, tc.want)
		}
	}
}

// A lifetime shorter than the republish period: the node does not go
// online, as Kubo 0.43's daemon refuses to start.
func TestName_RecordLifetimeBelowRepublishPeriod_Refused(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Ipns.RecordLifetime": "1h", "Ipns.RepublishPeriod": "2h"})
	err := n.StartNet(context.Background(), node.NetOptions{UserAgent: "cairn-test"})
	const want = "config setting IPNS.RecordLifetime (1h0m0s) must be >= IPNS.RepublishPeriod (2h0m0s), otherwise records expire before they are republished"
	if err == nil || err.Error() != want {
		t.Fatalf("StartNet: %v; want %q", err, want)
	}
	if n.Online() {
		t.Fatal("the node went online")
	}
}

// Online: a name published on A (DHT client on the WAN, LAN DHT on
// loopback) resolves on C through B; a malformed or forged record put to
// the DHT is refused and not stored.
func TestName_LANDHT(t *testing.T) {
	a, _, c := threeLANNodes(t)
	root := addTree(t, a, nil, map[string]files.Node{"f": files.NewBytesFile([]byte("over the LAN"))})
	if _, err := callT(t, a, 30*time.Second, "name/publish", []string{root}, nil, nil); err != nil {
		t.Fatalf("publish on A: %v", err)
	}
	res, err := callT(t, c, 30*time.Second, "name/resolve", []string{ipnsNameOf(a.PeerID)}, nil, nil)
	if err != nil {
		t.Fatalf("resolve on C: %v", err)
	}
	if got := res.Values[0].(*commands.ResolvedPath).Path; got != "/ipfs/"+root {
		t.Errorf("resolve on C: %s", got)
	}
	// Bad records.
	rc, _ := cid.Decode(root)
	forged, _ := ipns.NewRecord(c.PrivKey, path.FromCid(rc), 99, time.Now().Add(time.Hour), time.Minute)
	forgedRaw, _ := ipns.MarshalRecord(forged)
	expired, _ := ipns.NewRecord(a.PrivKey, path.FromCid(rc), 99, time.Now().Add(-time.Hour), time.Minute)
	expiredRaw, _ := ipns.MarshalRecord(expired)
	key := "/ipns/" + a.PeerID.String()
	for _, tc := range []struct {
		name string
		raw  []byte
	}{{"garbage", []byte("not a record")}, {"signed by another key", forgedRaw}, {"expired", expiredRaw}} {
		_, err := callT(t, a, 20*time.Second, "dht/put", []string{key}, nil,
			files.NewMapDirectory(map[string]files.Node{"value-file": files.NewBytesFile(tc.raw)}))
		if err == nil {
			t.Errorf("dht/put of a %s record: accepted", tc.name)
		}
	}
	res, err = callT(t, a, 20*time.Second, "name/resolve", []string{ipnsNameOf(a.PeerID)}, map[string]string{"nocache": "true"}, nil)
	if err != nil || res.Values[0].(*commands.ResolvedPath).Path != "/ipfs/"+root {
		t.Errorf("after bad puts: %v %v", res, err)
	}
}

// A name resolved (and cached) under any spelling resolves to the new
// value right after this node publishes one.
func TestName_PublishReplacesCached(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a := blkAdd(t, n, "a", files.NewBytesFile([]byte("a")), nil)
	b := blkAdd(t, n, "b", files.NewBytesFile([]byte("b")), nil)
	publish(t, n, a, nil)
	spellings := []string{"/ipns/" + n.PeerID.String(), ipnsNameOf(n.PeerID), ""}
	for _, s := range spellings {
		if got := nameResolve(t, n, s, nil); got != "/ipfs/"+a {
			t.Fatalf("%q: %s", s, got)
		}
	}
	publish(t, n, b, nil)
	for _, s := range spellings {
		if got := nameResolve(t, n, s, nil); got != "/ipfs/"+b {
			t.Errorf("%q after a new publish: %s", s, got)
		}
	}
}

// Online without any DHT peer: publish succeeds as Kubo 0.42's does (its
// routing ignores the DHT's "failed to find any peer in table"), the
// record is kept, and the republisher, which does count the DHT's
// failure, tries it again.
func TestName_PublishWithoutPeers_KeptForRepublish(t *testing.T) {
	n := testutil.MustOnlineNode(t, "auto", nil)
	root := blkAdd(t, n, "x", files.NewBytesFile([]byte("x")), nil)
	ie := blkCall(t, n, "name/publish", []string{root}, nil, nil).Values[0].(*commands.IpnsEntry)
	if ie.Value != "/ipfs/"+root {
		t.Errorf("publish without peers: %+v", ie)
	}
	if v, _ := testutil.LocalRecord(t, n).Value(); v.String() != "/ipfs/"+root {
		t.Errorf("kept record: %s", v)
	}
	if done, failed := n.Names().Republish(context.Background()); done != 0 || failed != 1 {
		t.Errorf("republish without peers: %d done, %d failed", done, failed)
	}
}

// name/publish --allow-delegated on an offline node: the record is PUT to
// every publisher of Ipns.DelegatedPublishers (Delegated Routing V1 IPNS
// API) and kept locally; failing publishers fail nothing, as in Kubo.
func TestName_PublishDelegated(t *testing.T) {
	n := testutil.MustOpenNode(t)
	a := testutil.NewIpnsPublisher(t, 0, false)
	b := testutil.NewIpnsPublisher(t, 0, false)
	testutil.SetConfig(t, n, map[string]any{"Ipns.DelegatedPublishers": []any{a.URL, b.URL + "/routing/v1/ipns"}})
	root := blkAdd(t, n, "x", files.NewBytesFile([]byte("delegated")), nil)
	name := ipns.NameFromPeer(n.PeerID)
	ie := blkCall(t, n, "name/publish", []string{root}, map[string]string{"allow-delegated": "true"}, nil).Values[0].(*commands.IpnsEntry)
	if ie.Name != name.String() || ie.Value != "/ipfs/"+root {
		t.Fatalf("publish: %+v", ie)
	}
	a.CheckPut(t, 0, name, "/ipfs/"+root, 0)
	b.CheckPut(t, 0, name, "/ipfs/"+root, 0)
	if got := nameResolve(t, n, "", nil); got != "/ipfs/"+root {
		t.Errorf("resolve after a delegated publish: %s", got)
	}

	// A publisher answering 500 and one that is not there: still published.
	failing := testutil.NewIpnsPublisher(t, http.StatusInternalServerError, false)
	gone := testutil.NewIpnsPublisher(t, 0, false)
	gone.Close()
	testutil.SetConfig(t, n, map[string]any{"Ipns.DelegatedPublishers": []any{failing.URL, gone.URL, a.URL}})
	other := blkAdd(t, n, "y", files.NewBytesFile([]byte("again")), nil)
	srv := testutil.StartServer(t, n)
	body := string(readAll(t, rpcPost(t, srv, "name/publish", map[string][]string{"arg": {other}, "allow-delegated": {"true"}, "encoding": {"text"}}, nil, "").Body))
	if want := "Published to " + name.String() + ": /ipfs/" + other + "\n"; body != want {
		t.Errorf("text output with failing publishers: %q, want %q", body, want)
	}
	failing.CheckPut(t, 0, name, "/ipfs/"+other, 1)
	a.CheckPut(t, 1, name, "/ipfs/"+other, 1)
	if got := nameResolve(t, n, "", map[string]string{"nocache": "true"}); got != "/ipfs/"+other {
		t.Errorf("resolve after failing publishers: %s", got)
	}

	// No publisher: Kubo's error, nothing published. A URL that cannot be
	// a publisher is refused by config.
	testutil.SetConfig(t, n, map[string]any{"Ipns.DelegatedPublishers": []any{"auto"}})
	if msg := blkCallErr(t, n, "name/publish", []string{root}, map[string]string{"allow-delegated": "true"}, nil); msg != node.ErrNoDelegatedPublishers.Error() {
		t.Errorf("no publishers: %q", msg)
	}
	if got := nameResolve(t, n, "", map[string]string{"nocache": "true"}); got != "/ipfs/"+other {
		t.Errorf("record changed by a refused publish: %s", got)
	}
	msg := blkCallErr(t, n, "config", []string{"Ipns.DelegatedPublishers", `["http://127.0.0.1:1/routing/v1/providers"]`}, map[string]string{"json": "true"}, nil)
	if !strings.Contains(msg, `Ipns.DelegatedPublishers: "http://127.0.0.1:1/routing/v1/providers": unsupported routing path`) {
		t.Errorf("config set of a bad publisher: %q", msg)
	}
}

// dohServer answers DNS-over-HTTPS queries (RFC 8484 POST) on 127.0.0.1
// from txt: "_dnslink.<domain>." => TXT strings. Every other name is
// NXDOMAIN. It counts the queries.
func dohServer(t *testing.T, txt map[string][]string) (string, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		body, _ := io.ReadAll(r.Body)
		var q dns.Msg
		if err := q.Unpack(body); err != nil || len(q.Question) != 1 {
			http.Error(w, "bad query", http.StatusBadRequest)
			return
		}
		var m dns.Msg
		m.SetReply(&q)
		name := q.Question[0].Name
		vals, ok := txt[name]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		for _, v := range vals {
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{v}})
		}
		out, _ := m.Pack()
		w.Header().Set("Content-Type", "application/dns-message")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("DoH server not on loopback: %s", srv.URL)
	}
	return srv.URL + "/dns-query", &count
}

func TestDNSLink_LocalResolver(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "site", files.NewMapDirectory(map[string]files.Node{"index.html": files.NewBytesFile([]byte("hello from DNSLink"))}), nil)
	self := ipnsNameOf(n.PeerID)
	url, count := dohServer(t, map[string][]string{
		"_dnslink.board.test.":   {"dnslink=/ipfs/" + root},
		"_dnslink.alias.test.":   {"dnslink=/ipns/board.test"},
		"_dnslink.viaipns.test.": {"dnslink=/ipns/" + self},
		"_dnslink.loop-a.test.":  {"dnslink=/ipns/loop-b.test"},
		"_dnslink.loop-b.test.":  {"dnslink=/ipns/loop-a.test"},
		"_dnslink.two.test.":     {"dnslink=/ipfs/" + root, "dnslink=/ipfs/bafkqaaa"},
		"_dnslink.junk.test.":    {"not a dnslink"},
	})
	// Every domain goes to the local DoH server: the test never touches public DNS.
	testutil.SetConfig(t, n, map[string]any{"DNS.Resolvers": map[string]any{".": url}})
	publish(t, n, root, nil)

	dnsOne := func(domain string, opts map[string]string) string {
		t.Helper()
		return blkCall(t, n, "dns", []string{domain}, opts, nil).Values[0].(*commands.ResolvedPath).Path
	}
	if got := dnsOne("board.test", nil); got != "/ipfs/"+root {
		t.Errorf("dns board.test: %s", got)
	}
	if got := dnsOne("alias.test", nil); got != "/ipfs/"+root {
		t.Errorf("dns -r alias.test: %s", got)
	}
	if got := dnsOne("alias.test", map[string]string{"recursive": "false"}); got != "/ipns/board.test" {
		t.Errorf("dns -r=false alias.test: %s", got)
	}
	// /ipns/<domain> everywhere a path is taken.
	if got := nameResolve(t, n, "alias.test", nil); got != "/ipfs/"+root {
		t.Errorf("name/resolve alias.test: %s", got)
	}
	if got := resolveOne(t, n, "/ipns/viaipns.test/index.html", nil); got != "/ipfs/"+lsKey(t, n, root+"/index.html") {
		t.Errorf("resolve through DNSLink and IPNS: %s", got)
	}
	if got := string(blkCall(t, n, "cat", []string{"/ipns/alias.test/index.html"}, nil, nil).Bytes); got != "hello from DNSLink" {
		t.Errorf("cat /ipns/alias.test: %q", got)
	}
	// Errors: a loop hits the depth limit, missing and ambiguous records.
	for _, tc := range []struct{ cmd, arg, want string }{
		{"dns", "loop-a.test", "could not resolve name (recursion limit exceeded)"},
		{"name/resolve", "loop-a.test", "could not resolve name (recursion limit exceeded)"},
		{"dns", "missing.test", "could not resolve name"},
		{"dns", "junk.test", "could not resolve name"},
		{"dns", "two.test", "more than one IPFS content path"},
		{"dns", strings.Repeat("a", 10<<10) + ".test", "name too long"},
	} {
		if msg := blkCallErr(t, n, tc.cmd, []string{tc.arg}, nil, nil); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %.30s: %q, want %q", tc.cmd, tc.arg, msg, tc.want)
		}
	}
	if count.Load() == 0 {
		t.Error("the DoH server saw no query")
	}
}

func TestDNSLink_ResolverConfig(t *testing.T) {
	for _, tc := range []struct {
		res  map[string]string
		want string
	}{
		{map[string]string{"eth": "https://example.org/dns-query"}, "invalid domain eth; must be FQDN"},
		{map[string]string{".": "udp://127.0.0.1:53"}, "invalid DoH resolver URL: udp://127.0.0.1:53"},
	} {
		if _, err := node.NewDNSResolver(tc.res); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.res, err, tc.want)
		}
	}
	if _, err := node.NewDNSResolver(map[string]string{"eth.": "https://dns.eth.limo/dns-query", ".": "auto"}); err != nil {
		t.Errorf("valid resolvers: %v", err)
	}
}
