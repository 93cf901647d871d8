//go:build interop

// delegated_test.go: HTTP delegated IPNS publishing (Ipns.DelegatedPublishers)
// on Kubo and on cairn against the same loopback publishers: both PUT the
// same kind of request, with and without --allow-delegated, and a failing
// publisher fails neither; routing/put sends a record there too.

package interop

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"testing"
	"time"

	"cairn/internal/daemon"
	"cairn/internal/testutil"

	"github.com/ipfs/boxo/ipns"
)

// putsOf returns the indexes of the requests pub received for name.
func putsOf(pub *testutil.IpnsPublisher, name ipns.Name) []int {
	var out []int
	for i, p := range pub.Puts() {
		if p.Path == "/routing/v1/ipns/"+name.String() {
			out = append(out, i)
		}
	}
	return out
}

func TestInterop_DelegatedPublish(t *testing.T) {
	ok := testutil.NewIpnsPublisher(t, 0, false)
	failing := testutil.NewIpnsPublisher(t, http.StatusInternalServerError, false)
	cfg := map[string]string{"Ipns.DelegatedPublishers": `["` + ok.URL + `","` + failing.URL + `/routing/v1/ipns"]`}
	c := startCairn(t, daemon.Options{Config: cfg})
	k := startKubo(t, daemon.Options{Config: cfg})
	connect(t, c, k) // a DHT peer each
	time.Sleep(time.Second)

	for _, d := range []*daemon.Daemon{k, c} {
		// --allow-delegated, then a plain publish (Routing.Type unset:
		// the DHT and the publishers).
		name := publishName(t, d, "/ipfs/bafkqaaa", url.Values{"allow-delegated": {"true"}})
		n, err := ipns.NameFromString(name)
		if err != nil {
			t.Fatalf("%s: name %q: %v", d.Name, name, err)
		}
		publishName(t, d, "/ipfs/bafkqablimvwgy3y", nil)
		for _, pub := range []*testutil.IpnsPublisher{ok, failing} {
			idx := putsOf(pub, n)
			if len(idx) != 2 {
				t.Fatalf("%s: publisher %s got %d requests for %s, want 2: %+v", d.Name, pub.URL, len(idx), n, pub.Puts())
			}
			// Neither init published a record (Kubo 0.43): the first
			// publish has sequence 0.
			pub.CheckPut(t, idx[0], n, "/ipfs/bafkqaaa", 0)
			pub.CheckPut(t, idx[1], n, "/ipfs/bafkqablimvwgy3y", 1)
		}
		if got := resolveName(t, d, name); got != "/ipfs/bafkqablimvwgy3y" {
			t.Errorf("%s resolves its own name to %q", d.Name, got)
		}
	}
}

// The one difference (docs/names.md): a daemon started --offline. Kubo's
// --allow-delegated then keeps the record locally and sends it nowhere;
// cairn sends it to the publishers, as Kubo's help text says it does.
func TestInterop_DelegatedPublishOffline(t *testing.T) {
	pub := testutil.NewIpnsPublisher(t, 0, false)
	cfg := map[string]string{"Ipns.DelegatedPublishers": `["` + pub.URL + `"]`}
	k := startKubo(t, daemon.Options{Config: cfg, Offline: true})
	c := startCairn(t, daemon.Options{Config: cfg, Offline: true})
	names := map[*daemon.Daemon]ipns.Name{}
	for _, d := range []*daemon.Daemon{k, c} {
		n, err := ipns.NameFromString(publishName(t, d, "/ipfs/bafkqaaa", url.Values{"allow-delegated": {"true"}}))
		if err != nil {
			t.Fatal(err)
		}
		names[d] = n
		if got := resolveName(t, d, n.String()); got != "/ipfs/bafkqaaa" {
			t.Errorf("%s --offline resolves its name to %q", d.Name, got)
		}
	}
	nk, nc := names[k], names[c]
	if idx := putsOf(pub, nk); len(idx) != 0 {
		t.Errorf("Kubo --offline sent %d requests", len(idx))
	}
	idx := putsOf(pub, nc)
	if len(idx) != 1 {
		t.Fatalf("cairn --offline sent %d requests, want 1", len(idx))
	}
	pub.CheckPut(t, idx[0], nc, "/ipfs/bafkqaaa", 0) // init published nothing
}

// Ensure routing/put of a node's own record succeeds without a DHT peer on
// both (Kubo 0.42's routing ignores its routers' errors) and, with
// Routing.Type unset (auto), reaches the delegated publishers on both.
func TestInterop_RoutingPutNoPeers(t *testing.T) {
	pub := testutil.NewIpnsPublisher(t, 0, false)
	cfg := map[string]string{"Ipns.DelegatedPublishers": `["` + pub.URL + `"]`}
	for _, d := range []*daemon.Daemon{startKubo(t, daemon.Options{Config: cfg}), startCairn(t, daemon.Options{Config: cfg})} {
		name := publishName(t, d, "/ipfs/bafkqaaa", nil)
		n, err := ipns.NameFromString(name)
		if err != nil {
			t.Fatal(err)
		}
		key := url.Values{"arg": {"/ipns/" + name}}
		b, err := d.Post("routing/get", key, nil, "")
		if err != nil {
			t.Fatalf("%s: routing/get of its own name without peers: %v", d.Name, err)
		}
		var got struct{ Extra string }
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: routing/get: %v: %s", d.Name, err, b)
		}
		raw, err := base64.StdEncoding.DecodeString(got.Extra)
		if err != nil {
			t.Fatal(err)
		}
		before := len(putsOf(pub, n))
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("value-file", "record")
		fw.Write(raw)
		mw.Close()
		b, err = d.Post("routing/put", key, &body, mw.FormDataContentType())
		if err != nil {
			t.Fatalf("%s: routing/put without peers: %v", d.Name, err)
		}
		var ev struct {
			Type int
			ID   string
		}
		if err := json.Unmarshal(b, &ev); err != nil || ev.Type != 5 || ev.ID != n.Peer().String() {
			t.Errorf("%s: routing/put answered %s (%v)", d.Name, b, err)
		}
		idx := putsOf(pub, n)
		if len(idx) != before+1 {
			t.Fatalf("%s: the publisher got %d requests for %s after routing/put, want %d", d.Name, len(idx), n, before+1)
		}
		pub.CheckPut(t, idx[before], n, "/ipfs/bafkqaaa", 0)
	}
}
