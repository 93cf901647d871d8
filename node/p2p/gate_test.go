package p2p

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
)

// Ensure the gate lets at most its size of handlers work at once, that a
// handler waits at most gateWait for a place, and that a place a handler
// never gives back is free again after gateHold, so a leaked stream
// cannot close the gate.
func TestWorkGate_BoundsAndLeases(t *testing.T) {
	g := newWorkGate(2)
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				l, ok := g.enter()
				if !ok {
					continue
				}
				n := in.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(200 * time.Microsecond)
				in.Add(-1)
				g.leave(l)
			}
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d handlers worked at once, want 2", m)
	}
	if g.waited.Load() == 0 {
		t.Error("no handler ever waited for a place")
	}

	// Both places taken and never given back: the next handler waits
	// gateWait and works without a place.
	g = newWorkGate(2)
	a, _ := g.enter()
	g.enter()
	start := time.Now()
	if _, ok := g.enter(); ok {
		t.Fatal("a third place in a gate of two")
	}
	if d := time.Since(start); d < gateWait {
		t.Errorf("gave up after %s, before gateWait", d)
	}
	// Once the leases run out, places are free again.
	time.Sleep(gateHold)
	l, ok := g.enter()
	if !ok {
		t.Fatal("a lease past gateHold still holds its place")
	}
	// A late leave of the old lease frees nothing.
	g.leave(a)
	g.enter()
	if _, ok := g.enter(); ok {
		t.Error("a late leave freed a place it no longer held")
	}
	g.leave(l)
}

// Ensure an inbound security handshake passes the gate (with every place
// taken it waits for one), gives its place back when it ends, and that
// the connection's reads after it are not gated.
func TestGatedSecurity_Handshake(t *testing.T) {
	transport := func() (*libp2ptls.Transport, peer.ID) {
		k, _, err := crypto.GenerateEd25519Key(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := libp2ptls.New(libp2ptls.ID, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := peer.IDFromPrivateKey(k)
		return tr, id
	}
	srvT, srvID := transport()
	cliT, _ := transport()
	g := newWorkGate(1)
	busy, _ := g.enter() // another handler's work
	gs := gatedSecurity{srvT, g}

	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	type res struct {
		c   sec.SecureConn
		err error
	}
	srv := make(chan res, 1)
	go func() {
		c, err := gs.SecureInbound(context.Background(), a, "")
		srv <- res{c, err}
	}()
	cli, err := cliT.SecureOutbound(context.Background(), b, srvID)
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	r := <-srv
	if r.err != nil {
		t.Fatalf("server handshake: %v", r.err)
	}
	if g.waited.Load() == 0 {
		t.Fatal("the handshake never waited for the gate's one place")
	}
	g.leave(busy)
	l, ok := g.enter()
	if !ok {
		t.Fatal("the handshake kept the gate's place after it ended")
	}
	// The place taken again: reads on the secure connection do not wait.
	waited := g.waited.Load()
	go cli.Write([]byte("after"))
	buf := make([]byte, 5)
	if _, err := io.ReadFull(r.c, buf); err != nil || string(buf) != "after" {
		t.Fatalf("read after the handshake: %q, %v", buf, err)
	}
	if g.waited.Load() != waited {
		t.Error("a read after the handshake waited for the gate")
	}
	g.leave(l)
}
