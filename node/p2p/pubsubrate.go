// pubsubrate.go: the rate at which one peer's messages enter pubsub's
// validation. The validation queue (pubsubBurst) is shared by all peers:
// a few peers publishing as fast as they can overflow it, and the router
// then drops messages before they are checked, honest authors' with the
// flood's. publishRate lets each peer's messages in at PubsubPeerRate a
// second with bursts of PubsubPeerBurst and drops the rest before the
// queue, so that a flood from a few peers leaves room for the others.

package p2p

import (
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
)

// PubsubPeerRate and PubsubPeerBurst bound the messages one peer may send
// (its own or relayed): 100 a second, far above what IPNS over pubsub or
// a LAN app's chatter needs and below what one validation worker of a
// Pi checks (a few thousand signatures a second) with a dozen peers at
// it; a burst of twice the router's queues.
const (
	PubsubPeerRate  = 100
	PubsubPeerBurst = 2 * pubsubBurst
)

// publishRate is a token bucket of messages per peer, applied to each
// incoming RPC (pubsub.WithAppSpecificRpcInspector) before its messages
// are queued for validation. Subscriptions and control messages pass.
type publishRate struct {
	rate, burst float64
	now         func() time.Time

	mu    sync.Mutex
	peers map[peer.ID]*tokens
	// Dropped counts the messages dropped past the rate.
	Dropped atomic.Int64
}

type tokens struct {
	n    float64
	last time.Time
}

func newPublishRate(rate, burst float64) *publishRate {
	return &publishRate{rate: rate, burst: burst, now: time.Now, peers: map[peer.ID]*tokens{}}
}

// inspect keeps as many of the RPC's messages as from's bucket holds and
// drops the others; it never rejects the RPC.
func (r *publishRate) inspect(from peer.ID, rpc *pubsub.RPC) error {
	n := len(rpc.Publish)
	if n == 0 {
		return nil
	}
	keep := r.take(from, n)
	if keep < n {
		rpc.Publish = rpc.Publish[:keep]
		r.Dropped.Add(int64(n - keep))
	}
	return nil
}

// take takes up to n tokens of p's bucket and says how many it got.
func (r *publishRate) take(p peer.ID, n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	b := r.peers[p]
	if b == nil {
		b = &tokens{n: r.burst, last: now}
		r.peers[p] = b
	}
	b.n = min(r.burst, b.n+now.Sub(b.last).Seconds()*r.rate)
	b.last = now
	got := min(n, int(b.n))
	b.n -= float64(got)
	return got
}

// forget drops p's bucket (its last connection closed).
func (r *publishRate) forget(p peer.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.peers, p)
}
