package p2p

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Ensure a peer is shunned at its shunStrikes'th strike, its connections
// closed once, and no longer shunned after shunFor.
func TestShunList(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newShunList()
	l.now = func() time.Time { return now }
	closed := make(chan peer.ID, 2)
	l.onShun = func(p peer.ID) { closed <- p }
	p, q := peer.ID("p"), peer.ID("q")
	for range shunStrikes - 1 {
		l.strike(p)
	}
	l.strike(q)
	if l.shunned(p) || l.shunned(q) {
		t.Fatalf("shunned before %d strikes", shunStrikes)
	}
	l.strike(p)
	if !l.shunned(p) || l.shunned(q) || l.Shunned() != 1 {
		t.Fatalf("after %d strikes: p shunned %v, q %v, count %d; want p only, once", shunStrikes, l.shunned(p), l.shunned(q), l.Shunned())
	}
	if got := <-closed; got != p {
		t.Fatalf("connections of %s closed, want %s's", got, p)
	}
	now = now.Add(shunFor - time.Second)
	if !l.shunned(p) {
		t.Fatal("no longer shunned before shunFor passed")
	}
	now = now.Add(time.Second)
	if l.shunned(p) || l.active.Load() != 0 {
		t.Fatal("still shunned after shunFor")
	}
	// The strikes start over.
	l.strike(p)
	if l.shunned(p) {
		t.Fatal("shunned again at one strike")
	}
}
