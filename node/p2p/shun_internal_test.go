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
		l.strike(p, 1, "test")
	}
	l.strike(q, 1, "test")
	if l.shunned(p) || l.shunned(q) {
		t.Fatalf("shunned before %d strikes", shunStrikes)
	}
	l.strike(p, 1, "test")
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
	l.strike(p, 1, "test")
	if l.shunned(p) {
		t.Fatal("shunned again at one strike")
	}
}

// Ensure a peer's service streams pass up to serviceBurst at once and one
// more each serviceEvery, and that the refused ones shun it at the 64th.
func TestServiceRate(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newShunList()
	l.now = func() time.Time { return now }
	r := newServiceRate(l)
	r.now = l.now
	p, q := peer.ID("p"), peer.ID("q")
	for i := range serviceBurst {
		if !r.allow(p) {
			t.Fatalf("stream %d of a burst of %d refused", i+1, serviceBurst)
		}
	}
	if r.allow(p) {
		t.Fatalf("stream %d passed at once", serviceBurst+1)
	}
	if !r.allow(q) {
		t.Fatal("another peer's first stream refused")
	}
	now = now.Add(serviceEvery)
	if !r.allow(p) || r.allow(p) {
		t.Fatalf("after %v: want one more stream, not two", serviceEvery)
	}
	if r.Refused() != 2 || l.shunned(p) {
		t.Fatalf("refused %d, shunned %v: want 2, not shunned", r.Refused(), l.shunned(p))
	}
	for range shunStrikes/serviceStrike - 3 {
		r.allow(p)
	}
	if l.shunned(p) {
		t.Fatalf("shunned after %d refused streams", r.Refused())
	}
	r.allow(p)
	if !l.shunned(p) || r.Refused() != shunStrikes/serviceStrike {
		t.Fatalf("after %d refused streams: shunned %v, want shunned at %d", r.Refused(), l.shunned(p), shunStrikes/serviceStrike)
	}
	// A full hour later the bucket holds serviceBurst, not more.
	now = now.Add(time.Hour)
	for range serviceBurst {
		r.allow(q)
	}
	if r.allow(q) {
		t.Fatalf("more than %d streams at once after an idle hour", serviceBurst)
	}
}
