package p2p_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"cairn/node/p2p"

	mh "github.com/multiformats/go-multihash"
)

// Ensure a reprovide of every stored block (Provide.Strategy "all")
// reaches every DHT peer for every key, a keyspace slice per pass, none
// much over the batch.
func TestReprovide_AllKeysInSlices(t *testing.T) {
	const nKeys, batch = 3000, 500
	keys := make([]mh.Multihash, nKeys)
	for i := range keys {
		b := make([]byte, 32)
		rand.Read(b)
		keys[i], _ = mh.Sum(b, mh.SHA2_256, -1)
	}
	all := &p2p.AllKeys{
		Count: func() (int, error) { return len(keys), nil },
		ForEach: func(ctx context.Context, fn func(mh.Multihash) error) error {
			for _, k := range keys {
				if err := fn(k); err != nil {
					return err
				}
			}
			return nil
		},
	}
	var peers []*p2p.Net
	for range 4 {
		peers = append(peers, mustStart(t, "dhtserver", nil))
	}
	for i, a := range peers {
		for _, b := range peers[i+1:] {
			connect(t, a, b)
		}
	}
	nt := mustStart(t, "dhtserver", func(o *p2p.Options) { o.ProvideAll, o.SweepBatch = all, batch })
	for _, p := range peers {
		connect(t, nt, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Every node's LAN table holds the four others.
	for _, p := range append(peers, nt) {
		for p.DHT.LAN.RoutingTable().Size() < len(peers) {
			select {
			case <-ctx.Done():
				t.Fatalf("routing table of %s: %d peers", p.Host.ID(), p.DHT.LAN.RoutingTable().Size())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	// The provider goes online once its first lookup finds peers.
	var n int
	var err error
	for {
		n, err = nt.Reprovide(ctx, nil)
		if err == nil || !strings.Contains(err.Error(), "no DHT peers") {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("provider never online: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err != nil {
		t.Fatalf("reprovide: %v", err)
	}
	st := nt.SweepStats()
	if n != nKeys || st.Keys != nKeys || st.Passes != nKeys/batch {
		t.Fatalf("reprovide announced %d keys (stats %+v), want %d in %d passes", n, st, nKeys, nKeys/batch)
	}
	t.Logf("reprovide: %d keys in %d passes, largest slice %d, %d announced one by one", st.Keys, st.Passes, st.MaxSlice, st.OneByOne)
	if st.Unsent != 0 {
		t.Fatalf("%d keys not sent: %+v", st.Unsent, st)
	}
	if st.MaxSlice > batch*3/2 {
		t.Fatalf("a pass held %d keys, batch %d", st.MaxSlice, batch)
	}
	if len(st.Online) == 0 || st.Online[0] != "LAN" {
		t.Fatalf("online providers %v, want the LAN one", st.Online)
	}
	if ps := nt.ProvideStats(); ps.LastReprovideBatchSize != nKeys {
		t.Fatalf("stats/provide: %+v", ps)
	}
	// Fewer peers than a bucket: each key's record goes to every peer it
	// finds for its region (sent without an answer, so a peer may still
	// be storing the last ones). A provide counts as done once a fifth of
	// the region's peers took it: ask that every key is held by at least
	// one peer, so that a findprovs finds us. A pass over every key and
	// peer is slow (each lookup queries the peer's whole datastore; about
	// 10 s under -race), so the keys a first pass missed are looked up
	// again until a deadline counted from its end.
	heldBy := func(k mh.Multihash) int {
		held := 0
		for _, p := range peers {
			provs, err := p.DHT.LAN.ProviderStore().GetProviders(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, ai := range provs {
				if ai.ID == nt.Host.ID() {
					held++
				}
			}
		}
		return held
	}
	records := 0
	var missing []mh.Multihash
	for _, k := range keys {
		held := heldBy(k)
		records += held
		if held == 0 {
			missing = append(missing, k)
		}
	}
	first := len(missing)
	for deadline := time.Now().Add(10 * time.Second); len(missing) > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d keys are held by no peer 10 s after a first pass (%d records in it)", len(missing), nKeys, records)
		}
		time.Sleep(100 * time.Millisecond)
		var still []mh.Multihash
		for _, k := range missing {
			if heldBy(k) == 0 {
				still = append(still, k)
			}
		}
		missing = still
	}
	t.Logf("%d records for %d keys on %d peers in a first pass (%d keys not yet held), every key held after", records, nKeys, len(peers), first)
	// A cancelled reprovide says so.
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if _, err := nt.Reprovide(cctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled reprovide: %v", err)
	}
}
