package p2p

import (
	"context"
	"crypto/rand"
	"testing"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/peerstore/pstoremem"
	"github.com/multiformats/go-multihash"
	"golang.org/x/time/rate"
)

// Ensure other peers' provider records are stored at a bounded rate: a
// burst of them past the limiter's is refused (and counted), while the
// node's own provides always pass.
func TestProviderRecords_Rate(t *testing.T) {
	ps, err := pstoremem.NewPeerstore()
	if err != nil {
		t.Fatal(err)
	}
	self, other := peer.ID("self-peer"), peer.ID("other-peer")
	c, err := newCappedProviders(context.Background(), self, ps, dssync.MutexWrap(ds.NewMapDatastore()), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.rate = rate.NewLimiter(rate.Limit(1), 5) // 5 at once, then one a second
	key := func() []byte {
		b := make([]byte, 32)
		rand.Read(b)
		h, _ := multihash.Sum(b, multihash.SHA2_256, -1)
		return h
	}
	stored := 0
	for range 50 {
		if c.AddProvider(context.Background(), key(), peer.AddrInfo{ID: other}) == nil {
			stored++
		}
	}
	if stored < 5 || stored > 6 {
		t.Errorf("stored %d of 50 records sent at once, want the burst of 5 (6 if a second passed)", stored)
	}
	if got := c.Stats().Refused; got != uint64(50-stored) {
		t.Errorf("refused %d, want %d", got, 50-stored)
	}
	for range 20 {
		if err := c.AddProvider(context.Background(), key(), peer.AddrInfo{ID: self}); err != nil {
			t.Fatalf("the node's own provide refused: %v", err)
		}
	}
}
