package p2p_test

import (
	"slices"
	"testing"
	"time"

	"cairn/node/p2p"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Ensure the records of a peer that left are removed from the peerstore
// after a while, and those of a protected peer (peering) kept.
func TestPeerstore_ForgetsPeersThatLeft(t *testing.T) {
	defer p2p.SetForgetAfter(200 * time.Millisecond)()
	a := mustStart(t, "none", nil)
	gone, kept := mustStart(t, "none", nil), mustStart(t, "none", nil)
	connect(t, gone, a)
	connect(t, kept, a)
	a.ConnMgr.Protect(kept.Host.ID(), "test")
	ps := a.Host.Peerstore()
	known := func(p peer.ID) bool { return slices.Contains(ps.Peers(), p) }
	waitFor(t, "identify of both peers", func() bool {
		p1, _ := ps.GetProtocols(gone.Host.ID())
		p2, _ := ps.GetProtocols(kept.Host.ID())
		return len(p1) > 0 && len(p2) > 0
	})
	gone.Close()
	kept.Close()
	waitFor(t, "the peer that left forgotten", func() bool { return !known(gone.Host.ID()) })
	if p, _ := ps.GetProtocols(gone.Host.ID()); len(p) != 0 || len(ps.Addrs(gone.Host.ID())) != 0 {
		t.Errorf("forgotten peer: protocols %v, addresses %v left", p, ps.Addrs(gone.Host.ID()))
	}
	if !known(kept.Host.ID()) {
		t.Error("protected peer forgotten")
	}
	if n := a.ForgottenPeers(); n != 1 {
		t.Errorf("ForgottenPeers %d, want 1", n)
	}
}

// waitFor polls ok for up to 10 s.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
