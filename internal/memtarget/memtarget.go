// Package memtarget keeps the Go runtime's memory limit at a small soft
// target that follows the live heap, so that the daemon's memory stays near
// what it uses rather than twice that.
//
// With GOGC=100 the heap may grow to twice the live heap before the
// runtime collects, and the background scavenger hands freed pages back to
// the OS slowly: an add whose live heap peaks at 11 MiB showed 23 MiB of
// RssAnon. A memory limit caps both (the runtime collects earlier and
// returns pages to stay under it), but a fixed limit below a larger live
// heap makes the collector run back to back. So Start sets the limit after
// every collection to the larger of the target and what GOGC would allow
// for the heap that collection found live (twice it, plus the runtime's
// memory outside the heap), never above the hard limit (the budget's
// GOMEMLIMIT). A short burst above half the target is collected early; a
// heap that stays large is treated as without a target.
package memtarget

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Tuner follows the live heap after every collection until Stop.
type Tuner struct {
	target, hard int64

	mu      sync.Mutex
	stopped bool
	samples []metrics.Sample
}

// Start sets the runtime's memory limit to target bytes and keeps it at
// max(target, 2 × live heap + memory outside the heap), at most hard
// (hard <= 0: no hard limit), until Stop.
func Start(target, hard int64) *Tuner {
	if hard <= 0 {
		hard = math.MaxInt64
	}
	t := &Tuner{target: min(target, hard), hard: hard, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}}
	debug.SetMemoryLimit(t.target)
	t.arm()
	return t
}

// Limit is the limit for a heap of live bytes with other bytes of runtime
// memory outside it.
func (t *Tuner) Limit(live, other int64) int64 {
	return min(max(t.target, 2*live+other), t.hard)
}

// sentinel is an object only a collection frees: its cleanup marks the end
// of one.
type sentinel struct{ _ [64]byte }

func (t *Tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *Tuner) { t.afterGC() }, t)
}

func (t *Tuner) afterGC() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	metrics.Read(t.samples)
	v := func(i int) int64 { return int64(t.samples[i].Value.Uint64()) }
	live := v(0)
	other := v(1) - v(2) - v(3) - v(4) - v(5) // stacks, runtime metadata
	debug.SetMemoryLimit(t.Limit(live, max(other, 0)))
	t.arm()
}

// Stop leaves the memory limit at the hard limit.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		debug.SetMemoryLimit(t.hard)
	}
}
