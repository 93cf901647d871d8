//go:build interop

// ipnspubsub_test.go: IPNS over pubsub between cairn and Kubo 0.42, both
// started with --enable-namesys-pubsub as DHT clients (so no DHT holds a
// record): a name published on each resolves on the other through pubsub.

package interop

import (
	"net/url"
	"testing"
	"time"

	"cairn/internal/daemon"
)

func ipnsPubsubSubs(t *testing.T, d *daemon.Daemon) []string {
	t.Helper()
	var out struct{ Strings []string }
	if err := d.JSON("name/pubsub/subs", nil, &out); err != nil {
		t.Fatalf("%s name/pubsub/subs: %v", d.Name, err)
	}
	return out.Strings
}

func TestInterop_IPNSPubsub(t *testing.T) {
	o := daemon.Options{Args: []string{"--enable-namesys-pubsub"}, Config: map[string]string{"Routing.Type": `"dhtclient"`}}
	c := startCairn(t, o)
	k := startKubo(t, o)
	for _, d := range []*daemon.Daemon{c, k} {
		var st struct{ Enabled bool }
		if err := d.JSON("name/pubsub/state", nil, &st); err != nil || !st.Enabled {
			t.Fatalf("%s name/pubsub/state: %+v %v", d.Name, st, err)
		}
	}
	connect(t, c, k)

	_, hk := add(t, k, nil, file{Path: "k.txt", Data: []byte("over pubsub from Kubo\n")})
	nk := publishName(t, k, "/ipfs/"+hk, nil)
	if got := resolveName(t, c, nk); got != "/ipfs/"+hk {
		t.Errorf("cairn resolves Kubo's name %s to %q, want /ipfs/%s", nk, got, hk)
	}
	if got := ipnsPubsubSubs(t, c); len(got) != 1 || got[0] != "/ipns/"+nk {
		t.Errorf("cairn name/pubsub/subs: %v, want [/ipns/%s]", got, nk)
	}

	_, hc := add(t, c, nil, file{Path: "c.txt", Data: []byte("over pubsub from cairn\n")})
	nc := publishName(t, c, "/ipfs/"+hc, nil)
	if got := resolveName(t, k, nc); got != "/ipfs/"+hc {
		t.Errorf("Kubo resolves cairn's name %s to %q, want /ipfs/%s", nc, got, hc)
	}
	found := false
	for _, s := range ipnsPubsubSubs(t, k) {
		found = found || s == "/ipns/"+nc
	}
	if !found {
		t.Errorf("Kubo name/pubsub/subs lacks /ipns/%s", nc)
	}
	// A new value published on cairn reaches Kubo over the topic.
	_, hc2 := add(t, c, nil, file{Path: "c2.txt", Data: []byte("second value\n")})
	publishName(t, c, "/ipfs/"+hc2, nil)
	// The update travels as a pubsub message: wait for it to arrive (the
	// deadline only stops a hung test).
	got := resolveName(t, k, nc)
	for deadline := time.Now().Add(30 * time.Second); got != "/ipfs/"+hc2 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		got = resolveName(t, k, nc)
	}
	if got != "/ipfs/"+hc2 {
		t.Errorf("Kubo resolves cairn's updated name to %q, want /ipfs/%s", got, hc2)
	}
	var cc struct{ Canceled bool }
	if err := c.JSON("name/pubsub/cancel", url.Values{"arg": {"/ipns/" + nk}}, &cc); err != nil || !cc.Canceled {
		t.Errorf("cairn name/pubsub/cancel: %+v %v", cc, err)
	}
}
