// inbound.go: the handler of every stream a peer opens, and the rate of
// its service streams. A stream is negotiated (multistream-select) and
// handed to its protocol's handler as go-libp2p's basic host does; in
// between, a peer's streams to the services every peer may use (identify,
// ping) and its streams that negotiate no protocol at all
// draw on one token bucket per peer (serviceBurst, then one every
// serviceEvery). A failed negotiation counts whatever ended it: the
// peer's reset or silence, or the node's closing the connection (as the
// resource manager's memory limit does to a peer flooding streams it
// never negotiates); an honest peer has a stream or two in negotiation at
// most when its connection closes. An honest peer identifies once per connection and pings
// now and then; a peer that opens them by the thousand makes the node
// sign and encrypt an answer for each. Past its tokens a stream is reset
// unanswered and counts serviceStrike strikes against the peer (shun.go),
// so a peer that keeps on is disconnected and refused for a while.

package p2p

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	bhost "github.com/libp2p/go-libp2p/p2p/host/basic"
	"github.com/libp2p/go-libp2p/p2p/protocol/identify"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
)

// A peer may open serviceBurst service streams at once and one more per
// serviceEvery; each past that costs it serviceStrike strikes, so 64 of
// them shun it. The buckets of at most shunPeers peers are kept; past
// that they start over (full).
const (
	serviceBurst  = 16
	serviceEvery  = time.Second
	serviceStrike = shunStrikes / 64
)

// isService reports whether streams of protocol p draw on the service
// rate. Identify push is not one: an honest peer pushes at each change of
// its addresses or protocols, and go-libp2p's identify rate-limits pushes
// by address itself.
func isService(p protocol.ID) bool {
	return p == identify.ID || p == ping.ID
}

// serviceRate holds each peer's tokens for service streams.
type serviceRate struct {
	mu      sync.Mutex
	buckets map[peer.ID]serviceBucket
	now     func() time.Time
	shun    *shunList // strikes for refused streams (nil: none kept)
	refused atomic.Uint64
}

// serviceBucket is a peer's tokens as of at.
type serviceBucket struct {
	tokens float64
	at     time.Time
}

func newServiceRate(shun *shunList) *serviceRate {
	return &serviceRate{buckets: map[peer.ID]serviceBucket{}, now: time.Now, shun: shun}
}

// allow takes one of p's tokens; when it has none it strikes p and
// reports false.
func (r *serviceRate) allow(p peer.ID) bool {
	r.mu.Lock()
	now := r.now()
	b, ok := r.buckets[p]
	if !ok {
		if len(r.buckets) >= shunPeers {
			clear(r.buckets)
		}
		b = serviceBucket{tokens: serviceBurst, at: now}
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(serviceBurst, b.tokens+float64(d)/float64(serviceEvery))
	}
	b.at = now
	ok = b.tokens >= 1
	if ok {
		b.tokens--
	}
	r.buckets[p] = b
	r.mu.Unlock()
	if ok {
		return true
	}
	r.refused.Add(1)
	if r.shun != nil {
		r.shun.strike(p, serviceStrike, "keeps opening identify or ping streams")
	}
	return false
}

// Refused is how many service streams were refused since start.
func (r *serviceRate) Refused() uint64 { return r.refused.Load() }

// inboundHandler is the network's handler of the streams peers open: the
// basic host's (negotiate with mux within bhost.DefaultNegotiationTimeout,
// set the stream's protocol, call the protocol's handler) with the
// service rate applied to service streams and failed negotiations.
func inboundHandler(mux protocol.Switch, rate *serviceRate) network.StreamHandler {
	return func(s network.Stream) {
		if err := s.SetDeadline(time.Now().Add(bhost.DefaultNegotiationTimeout)); err != nil {
			s.Reset()
			return
		}
		proto, handle, err := mux.Negotiate(s)
		if err != nil {
			rate.allow(s.Conn().RemotePeer())
			s.ResetWithError(network.StreamProtocolNegotiationFailed)
			return
		}
		if err := s.SetDeadline(time.Time{}); err != nil {
			s.Reset()
			return
		}
		if err := s.SetProtocol(proto); err != nil {
			s.ResetWithError(network.StreamResourceLimitExceeded)
			return
		}
		if isService(proto) && !rate.allow(s.Conn().RemotePeer()) {
			s.ResetWithError(network.StreamRateLimited)
			return
		}
		handle(proto, s)
	}
}
