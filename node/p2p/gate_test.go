package p2p

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Ensure the gate lets at most its size of handlers work at once, that a
// handler waits at most gateWait for a place, and that a place a handler
// never gives back is free again after gateHold, so a leaked stream
// cannot close the gate.
func TestWorkGate_BoundsAndLeases(t *testing.T) {
	g := newWorkGate(2)
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				l, ok := g.enter()
				if !ok {
					continue
				}
				n := in.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(200 * time.Microsecond)
				in.Add(-1)
				g.leave(l)
			}
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d handlers worked at once, want 2", m)
	}
	if g.waited.Load() == 0 {
		t.Error("no handler ever waited for a place")
	}

	// Both places taken and never given back: the next handler waits
	// gateWait and works without a place.
	g = newWorkGate(2)
	a, _ := g.enter()
	g.enter()
	start := time.Now()
	if _, ok := g.enter(); ok {
		t.Fatal("a third place in a gate of two")
	}
	if d := time.Since(start); d < gateWait {
		t.Errorf("gave up after %s, before gateWait", d)
	}
	// Once the leases run out, places are free again.
	time.Sleep(gateHold)
	l, ok := g.enter()
	if !ok {
		t.Fatal("a lease past gateHold still holds its place")
	}
	// A late leave of the old lease frees nothing.
	g.leave(a)
	g.enter()
	if _, ok := g.enter(); ok {
		t.Error("a late leave freed a place it no longer held")
	}
	g.leave(l)
}
