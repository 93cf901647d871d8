package p2p_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"cairn/node/p2p"

	"github.com/ipfs/boxo/blockstore"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// testLimits are the limits a 1024 MiB budget gives (node.NetLimitsOf
// with no Swarm settings).
func testLimits() p2p.Limits {
	return p2p.Limits{MemoryMiB: 1024, LibP2PMemory: 256 << 20,
		ConnsInbound: 80, ConnsOutbound: 80, Streams: 1280,
		LowWater: 20, HighWater: 40, GracePeriod: time.Minute,
		EngineTaskWorkers: 4, EngineBlockstoreWorkers: 16, TaskWorkers: 4,
		MaxOutstandingBytes: 1 << 20, MaxWantlistPerPeer: 1024, PrefetchWindow: 32,
		PubsubQueueBytes: 16 << 20, PubsubTopics: 32768,
		ProviderRecords: 39062, ProviderRecordsPerPeer: 4882}
}

// mustStart starts a network layer listening on loopback only, with a
// fresh key, in-memory stores, no bootstrap peers, no mDNS and no NAT
// port mapping; routing is the routing type. edit, if set, changes the
// options first. It is closed at the end of the test.
func mustStart(t testing.TB, routing string, edit func(o *p2p.Options)) *p2p.Net {
	t.Helper()
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	store := dssync.MutexWrap(ds.NewMapDatastore())
	o := p2p.Options{Key: key, UserAgent: "cairn-test", Listen: []string{"/ip4/127.0.0.1/tcp/0"},
		Limits: testLimits(), Routing: routing, LoopbackOnLanDHT: true,
		Datastore: store, Blockstore: blockstore.NewBlockstore(store)}
	if edit != nil {
		edit(&o)
	}
	if len(o.Bootstrap) != 0 || o.MDNS || o.NATPortMap {
		t.Fatalf("test network reaches beyond loopback: %+v", o)
	}
	nt, err := p2p.Start(o)
	if err != nil {
		t.Fatalf("start net: %v", err)
	}
	t.Cleanup(func() { nt.Close() })
	return nt
}

// connect dials b from a.
//
// Two hosts that dial each other at the same moment from their reused
// listen ports can meet in one TCP connection (a simultaneous open), in
// which both begin the security handshake as its initiator and it fails
// ("noise: message is too short"); the DHT of a node just connected may
// dial back while the test dials. A second dial finds the connection
// made or makes a new one, so connect tries three times (past the
// swarm's backoff for the address that failed, as swarm connect does).
func connect(t testing.TB, a, b *p2p.Net) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 {
			t.Logf("connect, try %d: %v", try, err)
			time.Sleep(50 * time.Millisecond)
			ctx = network.WithForceDirectDial(ctx, "test: dial again")
		}
		if err = a.Host.Connect(ctx, peer.AddrInfo{ID: b.Host.ID(), Addrs: b.Host.Addrs()}); err == nil {
			return
		}
	}
	t.Fatalf("connect: %v", err)
}
