// shun.go: peers that keep sending what the node refuses: provider
// records past the caps (providers.go), service streams past their rate
// (inbound.go). Each such record or stream still costs the node its
// decryption, parsing and handling, and a flooding peer sends tens of
// thousands a second. Leaving its streams unread does not help: the
// connection is still read and decrypted. So once a peer has run up
// shunStrikes strikes, the node closes its connections and refuses it for
// shunFor (the connection gater, shunGater): a flooder that dials again
// costs a handshake per try, far less than its flood.

package p2p

import (
	"sync"
	"sync/atomic"
	"time"

	logging "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// shunLog says which peer was shunned, and why.
var shunLog = logging.Logger("shun")

// A peer is shunned for shunFor after shunStrikes strikes: a refused
// provider record is one (an honest peer past its share sends one record
// per key it holds and stops; a few hundred keys past the cap stay below
// the strikes), a refused service stream serviceStrike. The strike counts
// of at most shunPeers peers are kept; past that they start over.
const (
	shunStrikes = 1024
	shunFor     = 30 * time.Second
	shunPeers   = 4096
)

// shunList counts strikes per peer and holds the shunned ones.
type shunList struct {
	mu      sync.Mutex
	strikes map[peer.ID]int
	until   map[peer.ID]time.Time
	active  atomic.Int32 // len(until), read without the lock
	total   atomic.Uint64
	now     func() time.Time
	// onShun closes the connections of a peer just shunned.
	onShun func(peer.ID)
}

func newShunList() *shunList {
	return &shunList{strikes: map[peer.ID]int{}, until: map[peer.ID]time.Time{}, now: time.Now}
}

// strike counts n strikes against p, and shuns p once it has shunStrikes;
// why says what p keeps doing, for the log.
func (l *shunList) strike(p peer.ID, n int, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.strikes) >= shunPeers {
		clear(l.strikes)
	}
	l.strikes[p] += n
	if l.strikes[p] < shunStrikes {
		return
	}
	delete(l.strikes, p)
	l.until[p] = l.now().Add(shunFor)
	l.active.Store(int32(len(l.until)))
	l.total.Add(1)
	shunLog.Infof("%s %s: disconnected and refused for %v", p, why, shunFor)
	if l.onShun != nil {
		go l.onShun(p)
	}
}

// shunned reports whether p is shunned now.
func (l *shunList) shunned(p peer.ID) bool {
	if l.active.Load() == 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	u, ok := l.until[p]
	if ok && !l.now().Before(u) {
		delete(l.until, p)
		l.active.Store(int32(len(l.until)))
		return false
	}
	return ok
}

// Shunned is how many times a peer was shunned since start.
func (l *shunList) Shunned() uint64 { return l.total.Load() }

// shunGater is the host's connection gater: the address filters, and no
// connection with a shunned peer.
type shunGater struct {
	*AddrFilters
	l *shunList
}

func (g shunGater) InterceptPeerDial(p peer.ID) bool { return !g.l.shunned(p) }

func (g shunGater) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return !g.l.shunned(p)
}
