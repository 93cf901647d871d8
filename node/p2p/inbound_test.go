package p2p_test

import (
	"context"
	"io"
	"testing"
	"time"

	"cairn/node/p2p"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/protocol/identify"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
)

// Ensure a peer that keeps opening identify streams is answered for its
// first ones, then reset, then disconnected and refused when it connects
// again, while another peer still pings the node; and that streams of the
// node's other protocols are not rationed.
func TestServiceStreams_FloodingPeerShunned(t *testing.T) {
	nt := mustStart(t, "none", nil)
	const echo = protocol.ID("/cairn-test/echo")
	nt.Host.SetStreamHandler(echo, func(s network.Stream) {
		io.Copy(s, s)
		s.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := mustStart(t, "none", nil)
	connect(t, a, nt)

	// Other protocols: far more streams than the service rate allows.
	for i := range 3 * p2p.ServiceBurst {
		s, err := a.Host.NewStream(ctx, nt.Host.ID(), echo)
		if err != nil {
			t.Fatalf("echo stream %d: %v", i, err)
		}
		s.Write([]byte("x"))
		s.CloseWrite()
		if b, err := io.ReadAll(s); err != nil || string(b) != "x" {
			t.Fatalf("echo stream %d: %q, %v", i, b, err)
		}
		s.Close()
	}

	answered, reset := 0, 0
	for nt.ShunStats().Shunned == 0 && ctx.Err() == nil {
		s, err := a.Host.NewStream(ctx, nt.Host.ID(), identify.ID)
		if err != nil {
			break // disconnected
		}
		s.SetReadDeadline(time.Now().Add(5 * time.Second))
		if b, err := io.ReadAll(s); err == nil && len(b) > 0 {
			answered++
		} else {
			reset++
		}
		s.Reset()
	}
	// The node answered the burst (and the identify of the connection
	// itself took one token, so the burst may be one short).
	if answered < p2p.ServiceBurst-1 || answered > p2p.ServiceBurst {
		t.Errorf("%d identify streams answered, want the burst of %d", answered, p2p.ServiceBurst)
	}
	want := uint64(p2p.ShunStrikes / p2p.ServiceStrike)
	for nt.ShunStats().Shunned == 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if sh := nt.ShunStats(); sh.Shunned != 1 || sh.ServiceRefused != want {
		t.Fatalf("stats %+v (the peer saw %d resets): want %d refused and the peer shunned once", sh, reset, want)
	}
	mustBeShunned(ctx, t, nt, a)

	b := mustStart(t, "none", nil)
	connect(t, b, nt)
	res := <-ping.Ping(ctx, b.Host, nt.Host.ID())
	if res.Error != nil {
		t.Fatalf("another peer's ping: %v", res.Error)
	}
}
