// gate.go: a bound on the peer work the node does at once. Streams that
// peers open to the protocols the node serves (bitswap, the DHT, pubsub,
// p2p listen) pass a shared gate between a read that brought bytes and
// the stream's next read, write or close: while that many handlers work
// on what peers sent, others wait (at most gateWait) before they work,
// so a flood of peer messages leaves cores to the RPC and the gateway.

package p2p

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"
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

// gatedStream holds a place of its gate from a read that brought bytes
// to its next call.
type gatedStream struct {
	network.Stream
	g    *workGate
	mu   sync.Mutex
	held lease
	has  bool // held is a lease not yet given back
}

func (s *gatedStream) release() {
	s.mu.Lock()
	l, had := s.held, s.has
	s.has = false
	s.mu.Unlock()
	if had {
		s.g.leave(l)
	}
}

func (s *gatedStream) Read(p []byte) (int, error) {
	s.release()
	n, err := s.Stream.Read(p)
	if n > 0 {
		if l, ok := s.g.enter(); ok {
			s.mu.Lock()
			prev, had := s.held, s.has
			s.held, s.has = l, true
			s.mu.Unlock()
			if had {
				s.g.leave(prev) // another goroutine's read held one
			}
		}
	}
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

// gatedHost gates the streams of the protocols it serves.
type gatedHost struct {
	host.Host
	g *workGate
}

func (h *gatedHost) SetStreamHandler(pid protocol.ID, handler network.StreamHandler) {
	h.Host.SetStreamHandler(pid, func(s network.Stream) { handler(&gatedStream{Stream: s, g: h.g}) })
}

func (h *gatedHost) SetStreamHandlerMatch(pid protocol.ID, m func(protocol.ID) bool, handler network.StreamHandler) {
	h.Host.SetStreamHandlerMatch(pid, m, func(s network.Stream) { handler(&gatedStream{Stream: s, g: h.g}) })
}
