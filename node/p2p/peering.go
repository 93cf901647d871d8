// peering.go: the peering service behind Peering.Peers and swarm/peering
// add, ls and rm: it keeps the listed peers connected, dialling each one
// 7.5-12.5 s after the start or a disconnect, then after waits that grow
// 1.5-2.5x per dial that leaves the node unconnected, up to 10 minutes
// (less up to 10 % jitter), and back to the start once connected; the
// peers are protected from the connection manager (tag "ipfs-peering").
// These are the delays and tag of Kubo's service (boxo/peering).
//
// It replaces boxo's peering.PeeringService (v0.40.0, unchanged upstream),
// which can stop redialling a peer for good: its handler takes a fired,
// non-nil timer to mean "reconnecting" and clears it only when one of two
// checks (after Connect returns, and in a goroutine started by the
// Connected notification) sees the peer connected; when the peer hangs up
// before either runs (a peer that accepts and drops at once, or any close
// on a saturated CPU), neither clears it, the Disconnected notification
// then sees a timer and starts none, and the peer is never dialled again.
// Here each peer has one goroutine that reads the swarm's connectedness
// again after every connection event, so no close goes unseen.

package p2p

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	logging "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

const (
	// peeringTag protects the peers from the connection manager (Kubo's).
	peeringTag = "ipfs-peering"
	// peeringBaseDelay is where the waits start (each dial first grows it).
	peeringBaseDelay = 5 * time.Second
	// peeringMaxDelay caps the wait between dials, less up to 10 %.
	peeringMaxDelay = 10 * time.Minute
)

// peeringLog is Kubo's logger name for the service.
var peeringLog = logging.Logger("peering")

// PeeringService keeps a set of peers connected (Net.Peering).
type PeeringService struct {
	h    host.Host
	base time.Duration
	nb   *network.NotifyBundle

	mu     sync.Mutex
	peers  map[peer.ID]*peeringPeer
	closed bool
	wg     sync.WaitGroup
}

// peeringPeer is one peer of the set; its goroutine runs keep.
type peeringPeer struct {
	addrs  []ma.Multiaddr // guarded by PeeringService.mu
	event  chan struct{}  // one pending "a connection opened or closed"
	cancel context.CancelFunc
}

// newPeering starts an empty service on h; base is peeringBaseDelay
// (tests shorten it). Close stops it.
func newPeering(h host.Host, base time.Duration) *PeeringService {
	p := &PeeringService{h: h, base: base, peers: map[peer.ID]*peeringPeer{}}
	p.nb = &network.NotifyBundle{
		ConnectedF:    func(_ network.Network, c network.Conn) { p.signal(c.RemotePeer()) },
		DisconnectedF: func(_ network.Network, c network.Conn) { p.signal(c.RemotePeer()) },
	}
	h.Network().Notify(p.nb)
	return p
}

// signal wakes the goroutine of peer id, if it is one of the set. The
// swarm notifies after it has added or removed the connection, so the
// goroutine reads the new connectedness; it never blocks the swarm.
func (p *PeeringService) signal(id peer.ID) {
	p.mu.Lock()
	pp := p.peers[id]
	p.mu.Unlock()
	if pp != nil {
		select {
		case pp.event <- struct{}{}:
		default:
		}
	}
}

// AddPeer adds a peer to the set, or replaces its addresses if it is in.
func (p *PeeringService) AddPeer(ai peer.AddrInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pp, ok := p.peers[ai.ID]; ok {
		pp.addrs = slices.Clone(ai.Addrs)
		return
	}
	if p.closed {
		return
	}
	p.h.ConnManager().Protect(ai.ID, peeringTag)
	ctx, cancel := context.WithCancel(context.Background())
	pp := &peeringPeer{addrs: slices.Clone(ai.Addrs), event: make(chan struct{}, 1), cancel: cancel}
	p.peers[ai.ID] = pp
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.keep(ctx, ai.ID, pp)
	}()
}

// RemovePeer takes a peer out of the set (its connections stay open).
func (p *PeeringService) RemovePeer(id peer.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pp, ok := p.peers[id]; ok {
		pp.cancel()
		delete(p.peers, id)
		p.h.ConnManager().Unprotect(id, peeringTag)
	}
}

// ListPeers lists the set, in no particular order.
func (p *PeeringService) ListPeers() []peer.AddrInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]peer.AddrInfo, 0, len(p.peers))
	for id, pp := range p.peers {
		out = append(out, peer.AddrInfo{ID: id, Addrs: slices.Clone(pp.addrs)})
	}
	return out
}

// Close stops the service: dials in flight are cancelled and the
// goroutines have ended when it returns.
func (p *PeeringService) Close() {
	p.h.Network().StopNotify(p.nb)
	p.mu.Lock()
	p.closed = true
	for _, pp := range p.peers {
		pp.cancel()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *PeeringService) connected(id peer.ID) bool {
	return p.h.Network().Connectedness(id) == network.Connected
}

// keep is the goroutine of one peer until ctx ends: while the peer is
// connected it waits for a connection event; while it is not, it waits
// the next delay and dials. Every step starts from the connectedness the
// swarm reports at that moment, never from what an earlier step saw.
func (p *PeeringService) keep(ctx context.Context, id peer.ID, pp *peeringPeer) {
	delay := p.base
	for ctx.Err() == nil {
		if p.connected(id) {
			delay = p.base
			select {
			case <-pp.event:
			case <-ctx.Done():
			}
			continue
		}
		delay = nextPeeringDelay(delay)
		if !p.wait(ctx, id, pp, delay) {
			continue
		}
		p.mu.Lock()
		ai := peer.AddrInfo{ID: id, Addrs: pp.addrs}
		p.mu.Unlock()
		peeringLog.Debugw("dialling", "peer", id, "addrs", ai.Addrs)
		if err := p.h.Connect(ctx, ai); err != nil {
			peeringLog.Debugw("dial failed", "peer", id, "error", err)
		}
	}
}

// wait sleeps d and reports whether the peer is still to be dialled: not
// if ctx ends or a connection to the peer opens meanwhile.
func (p *PeeringService) wait(ctx context.Context, id peer.ID, pp *peeringPeer, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-pp.event:
			if p.connected(id) {
				return false
			}
		case <-t.C:
			return !p.connected(id)
		}
	}
}

// nextPeeringDelay grows a wait by 1.5-2.5x, capped at peeringMaxDelay
// less up to 10 % (boxo's schedule).
func nextPeeringDelay(d time.Duration) time.Duration {
	if d < peeringMaxDelay {
		d += d/2 + rand.N(d)
	}
	if d > peeringMaxDelay {
		d = peeringMaxDelay - rand.N(peeringMaxDelay/10)
	}
	return d
}
