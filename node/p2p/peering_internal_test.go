package p2p

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cairn/internal/p2ptest"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
)

// busyHost is a host as the peering sees it on a saturated CPU, when the
// peer hangs up right after accepting: the first hangups dials that
// succeed are closed by the remote before Connect returns, and their
// Connected notifications arrive only once they are closed (the schedule
// that left boxo's peering waiting for good: CI, TestSwarmPeering_*).
type busyHost struct {
	host.Host
	remote  host.Host
	hangups atomic.Int32
	dials   atomic.Int32

	mu      sync.Mutex
	wrapped map[network.Notifiee]network.Notifiee
}

func (h *busyHost) Connect(ctx context.Context, pi peer.AddrInfo) error {
	h.dials.Add(1)
	err := h.Host.Connect(ctx, pi)
	if err == nil && h.hangups.Add(-1) >= 0 {
		if err := p2ptest.HangUp(h.Host, h.remote, 10*time.Second); err != nil {
			panic(err)
		}
	}
	return err
}

func (h *busyHost) Network() network.Network { return busyNet{h.Host.Network(), h} }

type busyNet struct {
	network.Network
	h *busyHost
}

func (n busyNet) Notify(f network.Notifiee) {
	n.h.mu.Lock()
	defer n.h.mu.Unlock()
	w := &busyNotifiee{Notifiee: f, h: n.h}
	n.h.wrapped[f] = w
	n.Network.Notify(w)
}

func (n busyNet) StopNotify(f network.Notifiee) {
	n.h.mu.Lock()
	defer n.h.mu.Unlock()
	n.Network.StopNotify(n.h.wrapped[f])
}

type busyNotifiee struct {
	network.Notifiee
	h *busyHost
}

func (b *busyNotifiee) Connected(n network.Network, c network.Conn) {
	if b.h.hangups.Load() <= 0 {
		b.Notifiee.Connected(n, c)
		return
	}
	go func() {
		for !c.IsClosed() {
			time.Sleep(time.Millisecond)
		}
		b.Notifiee.Connected(n, c)
	}()
}

// loopbackHost is a bare libp2p host on 127.0.0.1 (TCP only) with a
// connection manager, closed at the end of the test.
func loopbackHost(t *testing.T) host.Host {
	t.Helper()
	cm, err := connmgr.NewConnManager(10, 20)
	if err != nil {
		t.Fatal(err)
	}
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay(),
		libp2p.ConnectionManager(cm))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Ensure a peer that hangs up before the peering sees the connection is
// dialled again, each time, and not dialled while connected.
func TestPeering_RedialsWhenHangUpComesFirst(t *testing.T) {
	a, b := loopbackHost(t), loopbackHost(t)
	bh := &busyHost{Host: a, remote: b, wrapped: map[network.Notifiee]network.Notifiee{}}
	bh.hangups.Store(3)
	p := newPeering(bh, 20*time.Millisecond)
	defer p.Close()
	p.AddPeer(peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()})
	if !a.ConnManager().IsProtected(b.ID(), peeringTag) {
		t.Fatal("peer not protected from the connection manager")
	}
	// Three dials hung up, then the fourth stays: waits of about 30 ms,
	// 75 ms, 190 ms and 470 ms (at most 2.5x each), well under 10 s.
	waitUntil(t, 10*time.Second, "a dial after three hang-ups", func() bool {
		return bh.hangups.Load() < 0 && a.Network().Connectedness(b.ID()) == network.Connected
	})
	if n := bh.dials.Load(); n != 4 {
		t.Fatalf("%d dials, want 4 (3 hung up, 1 kept)", n)
	}
	time.Sleep(200 * time.Millisecond)
	if n := bh.dials.Load(); n != 4 {
		t.Fatalf("dialled while connected: %d dials", n)
	}

	// An ordinary hang-up, seen while connected: redialled too.
	if err := p2ptest.HangUp(a, b, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "a dial after the hang-up", func() bool {
		return bh.dials.Load() == 5 && a.Network().Connectedness(b.ID()) == network.Connected
	})

	// Removed: unprotected and no more dials.
	p.RemovePeer(b.ID())
	if a.ConnManager().IsProtected(b.ID(), peeringTag) || len(p.ListPeers()) != 0 {
		t.Fatal("removed peer still protected or listed")
	}
	if err := p2ptest.HangUp(a, b, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := bh.dials.Load(); n != 5 || a.Network().Connectedness(b.ID()) == network.Connected {
		t.Fatalf("removed peer dialled again: %d dials", n)
	}
}

// Ensure a peer that cannot be reached is dialled again after a failure, a
// new address takes effect at the next dial, and Close ends the
// goroutines.
func TestPeering_BackoffAddrsAndClose(t *testing.T) {
	a, b := loopbackHost(t), loopbackHost(t)
	bh := &busyHost{Host: a, remote: b, wrapped: map[network.Notifiee]network.Notifiee{}}
	p := newPeering(bh, 20*time.Millisecond)
	// A port nobody listens on: b's first address with the port of a
	// closed listener.
	dead := loopbackHost(t)
	deadAddrs := dead.Addrs()
	dead.Close()
	p.AddPeer(peer.AddrInfo{ID: b.ID(), Addrs: deadAddrs})
	waitUntil(t, 10*time.Second, "two failed dials", func() bool { return bh.dials.Load() >= 2 })
	if a.Network().Connectedness(b.ID()) == network.Connected {
		t.Fatal("connected through a dead address")
	}
	p.AddPeer(peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()})
	if ls := p.ListPeers(); len(ls) != 1 || len(ls[0].Addrs) != len(b.Addrs()) || !ls[0].Addrs[0].Equal(b.Addrs()[0]) {
		t.Fatalf("ListPeers after the address change: %v", ls)
	}
	waitUntil(t, 30*time.Second, "a dial to the new address", func() bool {
		return a.Network().Connectedness(b.ID()) == network.Connected
	})
	p.Close()
	p.AddPeer(peer.AddrInfo{ID: dead.ID()})
	if err := p2ptest.HangUp(a, b, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	n := bh.dials.Load()
	time.Sleep(200 * time.Millisecond)
	if bh.dials.Load() != n {
		t.Fatal("dialled after Close")
	}
}

func TestNextPeeringDelay(t *testing.T) {
	for range 100 {
		if d := nextPeeringDelay(peeringBaseDelay); d < 7500*time.Millisecond || d > 12500*time.Millisecond {
			t.Fatalf("first wait %v, want 7.5-12.5 s", d)
		}
		d := peeringBaseDelay
		for range 30 {
			d = nextPeeringDelay(d)
		}
		if d < 9*time.Minute || d > peeringMaxDelay {
			t.Fatalf("capped wait %v, want 9-10 min", d)
		}
	}
}
