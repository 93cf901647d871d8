package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/gateway"
	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
)

const (
	cacheEmpty   = "public, max-age=15, stale-while-revalidate=60, stale-if-error=3600"
	cacheResults = "public, max-age=300, stale-while-revalidate=600, stale-if-error=172800"
)

// put sends body to the site with a Content-Type.
func (s *site) put(t *testing.T, p, contentType string, body []byte) (*http.Response, []byte) {
	t.Helper()
	if contentType == "" {
		return s.send(t, "PUT", p, body)
	}
	return s.send(t, "PUT", p, body, "Content-Type", contentType)
}

func wantAnswer(t *testing.T, what string, resp *http.Response, body []byte, code int, want string) {
	t.Helper()
	if resp.StatusCode != code || string(body) != want {
		t.Errorf("%s: got %d %q, want %d %q", what, resp.StatusCode, body, code, want)
	}
}

// Ensure /routing/v1/ on an offline node answers as Kubo 0.43.1's does
// offline (each answer below was read from it): empty lists with the
// short Cache-Control, the node's own IPNS record with its caching
// headers, Kubo's error texts and status codes, and 404 and 405 for what
// has no route.
func TestRouting_Offline(t *testing.T) {
	s := newSite(t, nil)
	ctx := context.Background()
	file := s.cidOf(t, "/a.txt").String()

	resp, body := s.do(t, "GET", "/routing/v1/providers/"+file)
	wantAnswer(t, "providers", resp, body, 200, `{"Providers":[]}`)
	wantHeaders(t, resp, map[string]string{"Content-Type": "application/json", "Vary": "Accept", "Cache-Control": cacheEmpty, "Access-Control-Allow-Origin": "*"})
	if _, err := http.ParseTime(resp.Header.Get("Last-Modified")); err != nil {
		t.Errorf("providers: Last-Modified %q: %v", resp.Header.Get("Last-Modified"), err)
	}
	resp, body = s.do(t, "GET", "/routing/v1/providers/"+file, "Accept", "application/x-ndjson")
	wantAnswer(t, "providers as NDJSON", resp, body, 200, "")
	wantHeaders(t, resp, map[string]string{"Content-Type": "application/x-ndjson", "Cache-Control": cacheEmpty})
	resp, body = s.do(t, "GET", "/routing/v1/providers/notacid")
	wantAnswer(t, "a bad CID", resp, body, 400, "unable to parse CID: invalid cid: selected encoding not supported")
	wantHeaders(t, resp, map[string]string{"Content-Type": "text/plain; charset=utf-8"})
	resp, body = s.do(t, "GET", "/routing/v1/providers/"+file, "Accept", "text/html")
	wantAnswer(t, "Accept text/html", resp, body, 400, "no supported content types")
	resp, body = s.do(t, "GET", "/routing/v1/providers/"+file, "Accept", "application/json,")
	if resp.StatusCode != 400 || !strings.HasPrefix(string(body), "unable to parse Accept header: ") {
		t.Errorf("a broken Accept: got %d %q", resp.StatusCode, body)
	}

	resp, body = s.do(t, "GET", "/routing/v1/peers/"+s.n.PeerID.String())
	wantAnswer(t, "peers offline", resp, body, 200, `{"Peers":[]}`)
	resp, body = s.do(t, "GET", "/routing/v1/peers/bad")
	if resp.StatusCode != 400 || !strings.HasPrefix(string(body), `unable to parse PeerID "bad": `) {
		t.Errorf("a bad peer ID: got %d %q", resp.StatusCode, body)
	}
	resp, body = s.do(t, "GET", "/routing/v1/dht/closest/peers/"+s.n.PeerID.String())
	wantAnswer(t, "closest peers without a DHT", resp, body, 500, "delegate error: GetClosestPeers not supported: DHT is not available")

	// The node's own record, published offline.
	name, err := s.n.Names().Publish(ctx, path.FromCid(s.root), node.PublishOptions{Lifetime: 48 * time.Hour, AllowOffline: true})
	if err != nil {
		t.Fatal(err)
	}
	key := name.String() // k51..., base36 CIDv1
	want, err := s.n.Names().Record(node.OfflineContext(ctx), name)
	if err != nil {
		t.Fatal(err)
	}
	resp, body = s.do(t, "GET", "/routing/v1/ipns/"+key)
	if resp.StatusCode != 200 || !bytes.Equal(body, want) {
		t.Fatalf("ipns: got %d, %d bytes, want the record's %d", resp.StatusCode, len(body), len(want))
	}
	wantHeaders(t, resp, map[string]string{
		"Content-Type":        "application/vnd.ipfs.ipns-record",
		"Content-Disposition": `attachment; filename="` + key + `.ipns-record"`,
		"Vary":                "Accept",
	})
	rec, err := ipns.UnmarshalRecord(want)
	if err != nil {
		t.Fatal(err)
	}
	eol, _ := rec.Validity()
	if got, err := http.ParseTime(resp.Header.Get("Expires")); err != nil || !got.Equal(eol.Truncate(time.Second)) {
		t.Errorf("Expires %q, want %s", resp.Header.Get("Expires"), eol.UTC().Format(http.TimeFormat))
	}
	ttl, _ := rec.TTL()
	var maxAge, swr, sie int
	if _, err := fmt.Sscanf(resp.Header.Get("Cache-Control"), "public, max-age=%d, stale-while-revalidate=%d, stale-if-error=%d", &maxAge, &swr, &sie); err != nil ||
		maxAge != int(ttl.Seconds()) || swr != sie || swr < int((48*time.Hour-ttl).Seconds())-5 || swr > int((48*time.Hour-ttl).Seconds()) {
		t.Errorf("ipns Cache-Control %q: want max-age the TTL (%s) and the rest of the validity stale", resp.Header.Get("Cache-Control"), ttl)
	}
	if !strings.HasPrefix(resp.Header.Get("Etag"), `"`) {
		t.Errorf("ipns Etag %q", resp.Header.Get("Etag"))
	}
	resp, body = s.do(t, "GET", "/routing/v1/ipns/"+key, "Accept", "application/json")
	wantAnswer(t, "ipns as JSON", resp, body, 406, "content type in 'Accept' header is not supported, retry with 'application/vnd.ipfs.ipns-record'")
	resp, body = s.do(t, "GET", "/routing/v1/ipns/"+s.n.PeerID.String())
	wantAnswer(t, "ipns of a peer ID string", resp, body, 400, "unable to parse CID: invalid cid: selected encoding not supported")
	resp, body = s.do(t, "GET", "/routing/v1/ipns/"+file)
	if resp.StatusCode != 400 || !strings.HasPrefix(string(body), "peer ID CID is not valid: ") {
		t.Errorf("ipns of a file's CID: got %d %q", resp.StatusCode, body)
	}
	other := testutil.MustOpenNode(t)
	otherName := ipns.NameFromPeer(other.PeerID)
	resp, body = s.do(t, "GET", "/routing/v1/ipns/"+otherName.String())
	wantAnswer(t, "ipns without a record", resp, body, 200, "delegate error: routing: not found\n")
	wantHeaders(t, resp, map[string]string{"Content-Type": "text/plain; charset=utf-8", "Cache-Control": cacheEmpty})

	// A record of another key, put through the API, is kept and answered.
	if _, err := other.Names().Publish(ctx, path.FromCid(s.root), node.PublishOptions{Lifetime: time.Hour, AllowOffline: true}); err != nil {
		t.Fatal(err)
	}
	raw, err := ipns.MarshalRecord(testutil.LocalRecord(t, other))
	if err != nil {
		t.Fatal(err)
	}
	resp, body = s.put(t, "/routing/v1/ipns/"+otherName.String(), "text/plain", raw)
	wantAnswer(t, "ipns put without the record type", resp, body, 406, "content type in 'Content-Type' header is missing or not supported")
	resp, body = s.put(t, "/routing/v1/ipns/"+otherName.String(), "application/vnd.ipfs.ipns-record", []byte("junk"))
	if resp.StatusCode != 400 || !strings.HasPrefix(string(body), "provided record is invalid: ") {
		t.Errorf("ipns put of junk: got %d %q", resp.StatusCode, body)
	}
	resp, body = s.put(t, "/routing/v1/ipns/"+key, "application/vnd.ipfs.ipns-record", raw)
	if resp.StatusCode != 400 || !strings.HasPrefix(string(body), "provided record is invalid: ") {
		t.Errorf("ipns put of another name's record: got %d %q", resp.StatusCode, body)
	}
	resp, body = s.do(t, "GET", "/routing/v1/ipns/"+otherName.String())
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "delegate error") {
		t.Fatalf("refused puts kept a record: %d %q", resp.StatusCode, body)
	}
	resp, body = s.put(t, "/routing/v1/ipns/"+otherName.String(), "application/vnd.ipfs.ipns-record", raw)
	wantAnswer(t, "ipns put", resp, body, 200, "")
	resp, body = s.do(t, "GET", "/routing/v1/ipns/"+otherName.String())
	if resp.StatusCode != 200 || !bytes.Equal(body, raw) {
		t.Errorf("the record put: got %d, %d bytes", resp.StatusCode, len(body))
	}

	resp, body = s.put(t, "/routing/v1/providers/", "application/json", []byte(`{"Providers":[]}`))
	wantAnswer(t, "provide nothing", resp, body, 200, `{"ProvideResults":null}`)
	resp, body = s.put(t, "/routing/v1/providers/", "application/json", []byte("x"))
	wantAnswer(t, "provide junk", resp, body, 400, "invalid request: invalid character 'x' looking for beginning of value")
	resp, body = s.put(t, "/routing/v1/providers/", "application/json", []byte(`{"Providers":[{"Schema":"peer"}]}`))
	wantAnswer(t, "provide a peer record", resp, body, 400, "provider record 0 is not bitswap")

	resp, body = s.do(t, "HEAD", "/routing/v1/providers/"+file)
	wantAnswer(t, "HEAD", resp, body, 405, "")
	resp, body = s.do(t, "GET", "/routing/v1/providers/")
	wantAnswer(t, "GET of the provide route", resp, body, 405, "")
	resp, body = s.do(t, "DELETE", "/routing/v1/ipns/"+key)
	wantAnswer(t, "DELETE", resp, body, 405, "")
	for _, p := range []string{"/routing/v1/other", "/routing/v1/", "/routing/v1/providers/a/b", "/routing/v1/peers/"} {
		resp, body = s.do(t, "GET", p)
		wantAnswer(t, p, resp, body, 404, "404 page not found\n")
	}
}

// Ensure Gateway.ExposeRoutingAPI false takes /routing/v1/ away.
func TestRouting_NotExposed(t *testing.T) {
	s := newSite(t, map[string]any{"Gateway.ExposeRoutingAPI": false})
	resp, body := s.do(t, "GET", "/routing/v1/providers/"+s.root.String())
	wantAnswer(t, "providers", resp, body, 404, "404 page not found\n")
}

type routingRecord struct {
	Addrs     []string
	ID        string
	Protocols []string
	Schema    string
}

// Ensure the routing API of a node finds, through its DHT, the providers
// of content another node added, and the addresses of that node: as
// JSON (keys in Kubo's order), as NDJSON, and through the address and
// protocol filters.
func TestRouting_Online(t *testing.T) {
	a := testutil.MustOnlineNode(t, "dhtserver", nil)
	b := testutil.MustOnlineNode(t, "dhtserver", nil)
	testutil.Connect(t, b, a)
	deadline := time.Now().Add(10 * time.Second)
	for a.Net.DHT.LAN.RoutingTable().Size() == 0 || b.Net.DHT.LAN.RoutingTable().Size() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no routing tables")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := addTree(t, a)
	root := s.root
	if err := a.Net.ProvideNow(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	s.url = serve(t, b, gateway.Options{})

	var resp *http.Response
	var body []byte
	for time.Now().Before(deadline.Add(10 * time.Second)) {
		resp, body = s.do(t, "GET", "/routing/v1/providers/"+root.String())
		if strings.Contains(string(body), a.PeerID.String()) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var doc struct{ Providers []routingRecord }
	if err := json.Unmarshal(body, &doc); err != nil || resp.StatusCode != 200 || len(doc.Providers) != 1 {
		t.Fatalf("providers: %d %q (%v)", resp.StatusCode, body, err)
	}
	p := doc.Providers[0]
	if p.ID != a.PeerID.String() || p.Schema != "peer" || len(p.Addrs) == 0 || p.Protocols != nil {
		t.Fatalf("provider record %+v", p)
	}
	if i, j := bytes.Index(body, []byte(`"Addrs"`)), bytes.Index(body, []byte(`"ID"`)); i < 0 || j < i || !bytes.Contains(body, []byte(`"Schema":"peer"}`)) {
		t.Errorf("record keys not in Kubo's order: %s", body)
	}
	wantHeaders(t, resp, map[string]string{"Cache-Control": cacheResults, "Content-Type": "application/json"})

	resp, body = s.do(t, "GET", "/routing/v1/providers/"+root.String(), "Accept", "application/x-ndjson")
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	var rec routingRecord
	if resp.StatusCode != 200 || len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil || rec.ID != a.PeerID.String() {
		t.Errorf("providers as NDJSON: %d %q", resp.StatusCode, body)
	}
	wantHeaders(t, resp, map[string]string{"Cache-Control": cacheResults, "Content-Type": "application/x-ndjson"})

	for q, kept := range map[string]bool{
		"filter-addrs=tcp":                   true,
		"filter-addrs=!ip4":                  false,
		"filter-addrs=webtransport":          false,
		"filter-protocols=transport-bitswap": false, // DHT records name no protocol
		"filter-protocols=unknown":           true,
	} {
		_, body = s.do(t, "GET", "/routing/v1/providers/"+root.String()+"?"+q)
		if got := strings.Contains(string(body), a.PeerID.String()); got != kept {
			t.Errorf("%s: kept %v, want %v: %s", q, got, kept, body)
		}
	}

	resp, body = s.do(t, "GET", "/routing/v1/peers/"+a.PeerID.String())
	var peers struct{ Peers []routingRecord }
	if err := json.Unmarshal(body, &peers); err != nil || resp.StatusCode != 200 || len(peers.Peers) != 1 || peers.Peers[0].ID != a.PeerID.String() || len(peers.Peers[0].Addrs) == 0 {
		t.Errorf("peers: %d %q", resp.StatusCode, body)
	}
	// A peer ID given as a CID (base36 libp2p-key) is read too.
	idCid, err := cid.NewCidV1(cid.Libp2pKey, []byte(a.PeerID)).StringOfBase(multibase.Base36)
	if err != nil {
		t.Fatal(err)
	}
	resp, body = s.do(t, "GET", "/routing/v1/peers/"+idCid)
	if resp.StatusCode != 200 || !strings.Contains(string(body), a.PeerID.String()) {
		t.Errorf("peers by CID: %d %q", resp.StatusCode, body)
	}
}
