package p2p_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"cairn/node/p2p"

	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
	dssync "github.com/ipfs/go-datastore/sync"
	dhtpb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-msgio/pbio"
	"github.com/multiformats/go-multihash"
)

func randomKey(t testing.TB) []byte {
	b := make([]byte, 32)
	rand.Read(b)
	h, err := multihash.Sum(b, multihash.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sendProviderRecords has a announce itself to nt's LAN DHT as the
// provider of n random keys, on one stream, and returns the keys.
func sendProviderRecords(ctx context.Context, t *testing.T, a, nt *p2p.Net, n int) (keys [][]byte) {
	t.Helper()
	s, err := a.Host.NewStream(ctx, nt.Host.ID(), "/ipfs/lan/kad/1.0.0")
	if err != nil {
		t.Fatalf("open LAN DHT stream: %v", err)
	}
	w := pbio.NewDelimitedWriter(s)
	for range n {
		keys = append(keys, randomKey(t))
		m := dhtpb.NewMessage(dhtpb.Message_ADD_PROVIDER, keys[len(keys)-1], 0)
		m.ProviderPeers = dhtpb.RawPeerInfosToPBPeers([]peer.AddrInfo{{ID: a.Host.ID(), Addrs: a.Host.Addrs()}})
		if err := w.WriteMsg(m); err != nil {
			t.Fatalf("ADD_PROVIDER: %v", err)
		}
	}
	s.CloseWrite()
	return keys
}

// providerFlood starts a node serving the LAN DHT with the caps total and
// perPeer over a datastore it returns, and has that many new peers announce
// each records to it. The context ends the test's waits.
func providerFlood(t *testing.T, total, perPeer, peers, each int) (context.Context, *p2p.Net, ds.Datastore) {
	t.Helper()
	store := dssync.MutexWrap(ds.NewMapDatastore())
	nt := mustStart(t, "auto", func(o *p2p.Options) {
		o.Datastore = store
		o.Limits.ProviderRecords, o.Limits.ProviderRecordsPerPeer = total, perPeer
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	for range peers {
		a := mustStart(t, "none", nil)
		connect(t, a, nt)
		sendProviderRecords(ctx, t, a, nt, each)
	}
	return ctx, nt, store
}

// providerKeys lists the provider records' keys in store.
func providerKeys(ctx context.Context, t *testing.T, store ds.Datastore) []dsq.Entry {
	t.Helper()
	res, err := store.Query(ctx, dsq.Query{Prefix: "/providers/", KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	all, err := res.Rest()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// Ensure the LAN DHT stores other peers' ADD_PROVIDER records up to
// Limits.ProviderRecords in all (and a sixteenth past it for peers holding
// less than half the largest holder's, before the next count evicts) and
// ProviderRecordsPerPeer per peer, refuses the rest, and still stores the
// node's own provides.
func TestProviderRecords_Capped(t *testing.T) {
	const total, perPeer, peers, each = 100, 30, 6, 60
	const held = total + 7 // the slack: a sixteenth of 100, rounded up; no count within the test
	ctx, nt, store := providerFlood(t, total, perPeer, peers, each)
	// Wait until each record was stored or refused.
	var st p2p.ProviderStats
	for {
		st = nt.ProviderStats()
		if uint64(st.Stored)+st.Refused >= peers*each || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if uint64(st.Stored)+st.Refused != peers*each {
		t.Fatalf("stats %+v: stored and refused should add up to the %d records sent", st, peers*each)
	}
	if st.Stored != held || st.Refused != peers*each-held {
		t.Errorf("stats %+v: want %d stored and %d refused", st, held, peers*each-held)
	}

	own, err := cid.V1Builder{Codec: cid.Raw, MhType: multihash.SHA2_256}.Sum([]byte("own"))
	if err != nil {
		t.Fatal(err)
	}
	if err := nt.DHT.LAN.Provide(ctx, own, false); err != nil {
		t.Fatalf("own provide: %v", err)
	}
	provs, err := nt.DHT.LAN.ProviderStore().GetProviders(ctx, own.Hash()) // also flushes the records' batch
	if err != nil || len(provs) != 1 || provs[0].ID != nt.Host.ID() {
		t.Errorf("own provide past the cap: providers %v, %v; want the node itself", provs, err)
	}

	// What the datastore holds: within the caps.
	all := providerKeys(ctx, t, store)
	byPeer := map[string]int{}
	for _, e := range all {
		byPeer[e.Key[strings.LastIndexByte(e.Key, '/')+1:]]++
	}
	if len(all) != held+1 {
		t.Errorf("datastore holds %d provider records, want %d (the cap, its slack and the node's own)", len(all), held+1)
	}
	for p, n := range byPeer {
		if n > perPeer {
			t.Errorf("datastore holds %d records of one peer (%s), past the %d per peer", n, p, perPeer)
		}
	}
}

// Ensure that once peers have filled the cap, a newcomer's records are
// still stored and served, and the largest holders' records are evicted
// until the total is a sixteenth under the cap, the newcomer's kept.
func TestProviderRecords_NewcomerGetsRoom(t *testing.T) {
	t.Cleanup(p2p.SetProviderEvictEvery(0)) // before the nodes start: restored after they close
	const total, perPeer, flooders = 64, 16, 4
	ctx, nt, store := providerFlood(t, total, perPeer, flooders, perPeer)
	for st := nt.ProviderStats(); st.Stored < total && ctx.Err() == nil; st = nt.ProviderStats() {
		time.Sleep(20 * time.Millisecond)
	}
	newcomer := mustStart(t, "none", nil)
	connect(t, newcomer, nt)
	key := sendProviderRecords(ctx, t, newcomer, nt, 1)[0]
	// Evicted once the record passed the cap, down to a sixteenth under
	// it (60): 2 of each flooder's 16, 57 left.
	var st p2p.ProviderStats
	for st = nt.ProviderStats(); st.Evicted == 0 && ctx.Err() == nil; st = nt.ProviderStats() {
		time.Sleep(20 * time.Millisecond)
	}
	const evicted, left = 2 * flooders, total + 1 - 2*flooders
	if st.Refused != 0 || st.Evicted != evicted || st.Stored != left {
		t.Errorf("stats %+v: want nothing refused, %d evicted, %d stored", st, evicted, left)
	}
	provs, err := nt.DHT.LAN.ProviderStore().GetProviders(ctx, key)
	if err != nil || len(provs) != 1 || provs[0].ID != newcomer.Host.ID() {
		t.Errorf("the newcomer's record: providers %v, %v", provs, err)
	}
	if all := providerKeys(ctx, t, store); len(all) != left {
		t.Errorf("datastore holds %d provider records, want %d", len(all), left)
	}
}

// Ensure a peer that keeps sending records past the caps is disconnected
// once it has had p2p.ShunStrikes of them refused, and refused when it
// connects again, while another peer still connects.
func TestProviderRecords_FloodingPeerShunned(t *testing.T) {
	const total = 10
	nt := mustStart(t, "auto", func(o *p2p.Options) {
		o.Limits.ProviderRecords, o.Limits.ProviderRecordsPerPeer = total, total
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := mustStart(t, "none", nil)
	connect(t, a, nt)
	sendProviderRecords(ctx, t, a, nt, total+p2p.ShunStrikes)
	for nt.ShunStats().Shunned == 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if st, sh := nt.ProviderStats(), nt.ShunStats(); sh.Shunned != 1 || st.Refused != p2p.ShunStrikes {
		t.Fatalf("stats %+v, %+v: want %d refused and the peer shunned once", st, sh, p2p.ShunStrikes)
	}
	mustBeShunned(ctx, t, nt, a)
	b := mustStart(t, "none", nil)
	connect(t, b, nt)
}

// mustBeShunned waits until nt has closed its connections with a, then
// checks that a cannot connect again.
func mustBeShunned(ctx context.Context, t *testing.T, nt, a *p2p.Net) {
	t.Helper()
	for len(nt.Host.Network().ConnsToPeer(a.Host.ID())) > 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Fatal("the shunned peer is still connected")
	}
	if err := a.Host.Connect(ctx, peer.AddrInfo{ID: nt.Host.ID(), Addrs: nt.Host.Addrs()}); err == nil {
		// The dialler may see its handshake end before the node refuses.
		time.Sleep(200 * time.Millisecond)
	}
	if n := len(nt.Host.Network().ConnsToPeer(a.Host.ID())); n != 0 {
		t.Fatalf("the shunned peer connected again (%d connections)", n)
	}
}
