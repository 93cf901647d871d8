// peerstore.go: forgetting peers that left. go-libp2p keeps a peer's key,
// protocols, metadata and latency in the peerstore for as long as the
// process runs, whatever their number, and its addresses until their TTL
// (an hour or more once identify has run): every peer that ever
// connected costs a few KiB for good, and a flood of fresh peer IDs
// (libp2p identities are free) grows the node for nothing. forgetPeers
// removes a peer's records once it has been gone for forgetAfter, unless
// the node still needs them: the peer is connected again, protected by
// the connection manager (peering), in a DHT routing table, or has
// provider records stored (its addresses answer GET_PROVIDERS).

package p2p

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// forgetAfter is how long a peer that left keeps its peerstore records.
var forgetAfter = time.Minute

// goneSet is the peers whose last connection closed, and when.
type goneSet struct {
	mu   sync.Mutex
	gone map[peer.ID]time.Time
	// forgotten counts the peers removed from the peerstore.
	forgotten int
}

// watchGone records the peers whose last connection closes.
func (nt *Net) watchGone() {
	nt.gone.gone = map[peer.ID]time.Time{}
	nt.Host.Network().Notify(&network.NotifyBundle{DisconnectedF: func(n network.Network, c network.Conn) {
		p := c.RemotePeer()
		if n.Connectedness(p) == network.Connected {
			return
		}
		nt.gone.mu.Lock()
		nt.gone.gone[p] = time.Now()
		nt.gone.mu.Unlock()
	}})
}

// forgetPeers sweeps the peers that left every forgetAfter/2 until Close.
func (nt *Net) forgetPeers() {
	defer nt.wg.Done()
	t := time.NewTicker(forgetAfter / 2)
	defer t.Stop()
	for {
		select {
		case <-nt.ctx.Done():
			return
		case now := <-t.C:
			nt.forgetGone(now)
		}
	}
}

// forgetGone removes the records of the peers gone for forgetAfter at now
// that the node does not need, and says how many.
func (nt *Net) forgetGone(now time.Time) int {
	var due []peer.ID
	nt.gone.mu.Lock()
	for p, t := range nt.gone.gone {
		if now.Sub(t) >= forgetAfter {
			due = append(due, p)
			delete(nt.gone.gone, p)
		}
	}
	nt.gone.mu.Unlock()
	ps := nt.Host.Peerstore()
	n := 0
	for _, p := range due {
		if nt.needPeer(p) {
			continue
		}
		ps.RemovePeer(p)
		ps.ClearAddrs(p)
		n++
	}
	nt.gone.mu.Lock()
	nt.gone.forgotten += n
	nt.gone.mu.Unlock()
	return n
}

// needPeer reports whether the node still uses p's peerstore records.
func (nt *Net) needPeer(p peer.ID) bool {
	if p == nt.Host.ID() || nt.Host.Network().Connectedness(p) == network.Connected ||
		nt.ConnMgr.IsProtected(p, "") {
		return true
	}
	if d := nt.DHT; d != nil {
		if d.LAN.RoutingTable().Find(p) != "" || d.WAN.RoutingTable().Find(p) != "" {
			return true
		}
	}
	return nt.providers != nil && nt.providers.has(p)
}

// ForgottenPeers is how many peers' records were removed from the
// peerstore since start.
func (nt *Net) ForgottenPeers() int {
	nt.gone.mu.Lock()
	defer nt.gone.mu.Unlock()
	return nt.gone.forgotten
}
