// gate.go: a bound on the peer work the node does at once. Streams that
// peers open to the protocols the node serves (bitswap, the DHT, pubsub,
// p2p listen), and the security handshakes of connections peers open,
// pass a shared gate between a read that brought bytes and the stream's
// (or connection's) next read, write or close: while that many handlers
// work on what peers sent, others wait (at most gateWait) before they
// work, so a flood of peer messages or dials leaves cores to the RPC and
// the gateway.

package p2p

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/sec"
)

// gateWait is the longest a handler waits for a place: past it, it
// works anyway. gateHold is the longest a place is held: a handler that
// works longer, or never comes back to its stream, loses it. Neither a
// stuck handler nor a leaked stream can close the gate.
const (
	gateWait = 50 * time.Millisecond
	gateHold = 100 * time.Millisecond
)

// workGate lets at most len(until) handlers work at once, each place a
// lease that ends at leave or after gateHold.
type workGate struct {
	mu     sync.Mutex
	until  []time.Time // when each place's lease ends (zero: free)
	gen    []uint64    // each place's lease, so that a late leave frees nothing
	free   chan struct{}
	waited atomic.Int64 // handlers that found every place taken
}

func newWorkGate(n int) *workGate {
	n = max(n, 1)
	return &workGate{until: make([]time.Time, n), gen: make([]uint64, n), free: make(chan struct{}, 1)}
}

// lease is one place of a gate.
type lease struct {
	slot int
	gen  uint64
}

// enter takes a place, waiting at most gateWait; ok is false when it
// took none.
func (g *workGate) enter() (l lease, ok bool) {
	deadline := time.Now().Add(gateWait)
	counted := false
	for {
		now := time.Now()
		g.mu.Lock()
		for i, u := range g.until {
			if !now.Before(u) {
				g.until[i] = now.Add(gateHold)
				g.gen[i]++
				l = lease{i, g.gen[i]}
				g.mu.Unlock()
				return l, true
			}
		}
		g.mu.Unlock()
		if !counted {
			g.waited.Add(1)
			counted = true
		}
		left := deadline.Sub(now)
		if left <= 0 {
			return lease{}, false
		}
		t := time.NewTimer(min(left, gateHold))
		select {
		case <-g.free:
		case <-t.C:
		}
		t.Stop()
	}
}

// leave ends l (nothing when it has ended already).
func (g *workGate) leave(l lease) {
	g.mu.Lock()
	if g.gen[l.slot] == l.gen {
		g.until[l.slot] = time.Time{}
	}
	g.mu.Unlock()
	select {
	case g.free <- struct{}{}:
	default:
	}
}

// holder holds a place of its gate from a read that brought bytes to the
// next call of its stream or connection.
type holder struct {
	g    *workGate
	mu   sync.Mutex
	held lease
	has  bool // held is a lease not yet given back
}

func (h *holder) release() {
	h.mu.Lock()
	l, had := h.held, h.has
	h.has = false
	h.mu.Unlock()
	if had {
		h.g.leave(l)
	}
}

// read takes a place once a read brought n > 0 bytes.
func (h *holder) read(n int) {
	if n == 0 {
		return
	}
	if l, ok := h.g.enter(); ok {
		h.mu.Lock()
		prev, had := h.held, h.has
		h.held, h.has = l, true
		h.mu.Unlock()
		if had {
			h.g.leave(prev) // another goroutine's read held one
		}
	}
}

// gatedStream holds a place of its gate from a read that brought bytes
// to its next call.
type gatedStream struct {
	network.Stream
	holder
}

func newGatedStream(s network.Stream, g *workGate) *gatedStream {
	return &gatedStream{Stream: s, holder: holder{g: g}}
}

func (s *gatedStream) Read(p []byte) (int, error) {
	s.release()
	n, err := s.Stream.Read(p)
	s.read(n)
	return n, err
}

func (s *gatedStream) Write(p []byte) (int, error) {
	s.release()
	return s.Stream.Write(p)
}

func (s *gatedStream) Close() error {
	s.release()
	return s.Stream.Close()
}

func (s *gatedStream) Reset() error {
	s.release()
	return s.Stream.Reset()
}

func (s *gatedStream) CloseRead() error {
	s.release()
	return s.Stream.CloseRead()
}

// gatedSecurity runs the security handshakes of inbound connections
// under the gate: the key exchange, signatures and certificate checks a
// dialling peer causes are peer work like its streams', and a flood of
// dials (a shunned peer dialling again) leaves cores to the RPC too.
// The node's own dials are not gated.
type gatedSecurity struct {
	sec.SecureTransport
	g *workGate
}

func (t gatedSecurity) SecureInbound(ctx context.Context, c net.Conn, p peer.ID) (sec.SecureConn, error) {
	gc := &gatedConn{Conn: c, holder: holder{g: t.g}}
	sc, err := t.SecureTransport.SecureInbound(ctx, gc, p)
	gc.done.Store(true)
	gc.release()
	return sc, err
}

// gatedConn is a connection gated until done: the secure connection
// stays on top of it, ungated, once the handshake is over.
type gatedConn struct {
	net.Conn
	holder
	done atomic.Bool
}

func (c *gatedConn) Read(p []byte) (int, error) {
	if c.done.Load() {
		return c.Conn.Read(p)
	}
	c.release()
	n, err := c.Conn.Read(p)
	if !c.done.Load() {
		c.read(n)
	}
	return n, err
}

func (c *gatedConn) Write(p []byte) (int, error) {
	if !c.done.Load() {
		c.release()
	}
	return c.Conn.Write(p)
}

func (c *gatedConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// gatedHost gates the streams of the protocols it serves.
type gatedHost struct {
	host.Host
	g *workGate
}

func (h *gatedHost) SetStreamHandler(pid protocol.ID, handler network.StreamHandler) {
	h.Host.SetStreamHandler(pid, func(s network.Stream) { handler(newGatedStream(s, h.g)) })
}

func (h *gatedHost) SetStreamHandlerMatch(pid protocol.ID, m func(protocol.ID) bool, handler network.StreamHandler) {
	h.Host.SetStreamHandlerMatch(pid, m, func(s network.Stream) { handler(newGatedStream(s, h.g)) })
}
