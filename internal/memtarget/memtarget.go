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
//
// A limit raised for a large live heap stays raised until the next
// collection, and a daemon that goes quiet after a burst (an attack by
// peers, a large add) may not run one for minutes: the heap the burst left,
// garbage by then, kept RssAnon at 20-40 MiB against 11 idle. So once a
// collection has run and then none for Quiet, the tuner collects once and
// returns what is free to the OS (debug.FreeOSMemory), and does it again
// only after another collection of the runtime's own: at most one extra
// collection per burst, none on a busy or idle daemon.
//
// A collection comes only when the heap reaches its goal, so the garbage a
// long piece of work leaves (the directory tree of a large add) stays in
// memory while smaller work goes on. [Tuner.Settle], called when such work
// ends, collects and returns it at once (rule at SettleBytes).
//
// While collecting takes a large share of the CPU, the limit has Slack
// more (the rule is at Slack): memory is traded for CPU while something
// allocates fast, and given back once it stops.
package memtarget

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Quiet is how long without a collection after which the tuner collects
// and returns the free memory once.
const Quiet = 5 * time.Second

// A small limit makes a process that allocates fast (a flood of peer
// messages) collect back to back and return pages to the OS only to
// fault them in again: measured under such floods, the collector and the
// scavenger took 20-45% of the CPU the daemon spent (the user's and
// theirs), 0.4-0.9 of a core. So when, over two windows in a row of at
// least shareWindow, they take more than EnterGCShare of it and more than
// EnterGCRate of a core, the limit gets Slack bytes more, and keeps it
// until Quiet has passed without a window over KeepGCShare and
// KeepGCRate (with the slack, the same floods take 6-20%, 0.1-0.3 of a
// core: a higher bar to keep it made the slack come and go every few
// seconds under identify spam). A burst shorter than that (a large
// directory listing) does not get it, nor does an add of 1 KiB blocks
// (12-14%, 0.2-0.26 of a core): it would only raise their peaks.
const (
	EnterGCShare = 0.15
	EnterGCRate  = 0.35
	KeepGCShare  = 0.05
	KeepGCRate   = 0.05
	Slack        = 16 << 20
	shareWindow  = 500 * time.Millisecond
)

// Tuner follows the live heap after every collection until Stop.
type Tuner struct {
	target, hard int64

	mu      sync.Mutex
	stopped bool
	samples []metrics.Sample
	// The CPU seconds of the collector and scavenger (gcCPU) and of the
	// program (userCPU) at evalAt; slack until slackUntil.
	gcCPU, userCPU float64
	evalAt         time.Time
	heavy          int // windows in a row gcHeavy found heavy
	// The bars to enter the slack: EnterGCShare and EnterGCRate.
	enterShare, enterRate float64
	slackUntil            time.Time
	stop                  chan struct{}
	done                  chan struct{}

	settledAt atomic.Int64 // UnixNano of Settle's last collection
}

// Start sets the runtime's memory limit to target bytes and keeps it at
// max(target, 2 × live heap + memory outside the heap), at most hard
// (hard <= 0: no hard limit), until Stop.
func Start(target, hard int64) *Tuner { return start(target, hard, Quiet) }

func start(target, hard int64, quiet time.Duration) *Tuner {
	if hard <= 0 {
		hard = math.MaxInt64
	}
	t := &Tuner{target: min(target, hard), hard: hard, enterShare: EnterGCShare, enterRate: EnterGCRate, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/scavenge/total:cpu-seconds"},
		{Name: "/cpu/classes/user:cpu-seconds"},
	}}
	debug.SetMemoryLimit(t.target)
	t.arm()
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	go t.trimLoop(quiet)
	return t
}

// trimLoop collects and returns the free memory once after a quiet
// period that followed a collection, every period, until Stop.
func (t *Tuner) trimLoop(period time.Duration) {
	defer close(t.done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	seen := gcCycles()
	trimmed := seen // cycles after the last trim: none since start
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		c := gcCycles()
		if c == seen && c != trimmed {
			debug.FreeOSMemory()
			trimmed = gcCycles()
			c = trimmed
		}
		seen = c
	}
}

// gcCycles is the number of collections so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Limit is the limit for a heap of live bytes with other bytes of runtime
// memory outside it, with Slack more when slack is true.
func (t *Tuner) Limit(live, other int64, slack bool) int64 {
	l := max(t.target, 2*live+other)
	if slack {
		l += Slack
	}
	return min(l, t.hard)
}

// gcHeavy reports whether the collector and scavenger, taking gc CPU
// seconds against the program's user seconds over a window of wall
// seconds, took more than share of the CPU and more than rate of a core.
func gcHeavy(gc, user, wall, share, rate float64) bool {
	return gc+user > 0 && wall > 0 && gc/(gc+user) > share && gc/wall > rate
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
	now := time.Now()
	if now.Sub(t.evalAt) >= shareWindow {
		f := func(i int) float64 { return t.samples[i].Value.Float64() }
		gc, user := f(6)+f(7), f(8)
		slack := now.Before(t.slackUntil)
		share, rate := t.enterShare, t.enterRate
		if slack {
			share, rate = KeepGCShare, KeepGCRate
		}
		switch {
		case t.evalAt.IsZero():
		case gcHeavy(gc-t.gcCPU, user-t.userCPU, now.Sub(t.evalAt).Seconds(), share, rate):
			t.heavy++
		default:
			t.heavy = 0
		}
		if t.heavy >= 2 || slack && t.heavy >= 1 {
			t.slackUntil = now.Add(Quiet)
		}
		t.gcCPU, t.userCPU, t.evalAt = gc, user, now
	}
	debug.SetMemoryLimit(t.Limit(live, max(other, 0), now.Before(t.slackUntil)))
	t.arm()
}

// Settle is for the end of a long piece of work: when the heap holds at
// least SettleBytes more than the last collection found live (objects
// that died since, free pages not yet returned), it collects and returns
// the free memory to the OS now (debug.FreeOSMemory), rather than when the
// heap next reaches its goal. At most once per SettleEvery: a collection
// of the few MiB a board keeps live takes milliseconds. (Once a second
// was too seldom: a 10,000-entry add that ended within a second of a
// 1 GiB cat's end kept its garbage.) After that add on the pi-zero-2w
// profile, RssAnon through the next seconds of gateway reads was 19-21
// MiB without Settle and 14-15 MiB with it.
func (t *Tuner) Settle() {
	now := time.Now().UnixNano()
	last := t.settledAt.Load()
	if now-last < int64(SettleEvery) || heapSlack() < SettleBytes || !t.settledAt.CompareAndSwap(last, now) {
		return
	}
	debug.FreeOSMemory()
}

// Settle's rule: it collects when the heap holds SettleBytes beyond the
// live heap, at most once per SettleEvery.
const (
	SettleBytes = 4 << 20
	SettleEvery = 250 * time.Millisecond
)

// heapSlack is the heap memory the process holds beyond what the last
// collection found live: dead objects and free pages not yet returned.
func heapSlack() int64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()+s[1].Value.Uint64()) - int64(s[2].Value.Uint64())
}

// Stop ends the trims and leaves the memory limit at the hard limit.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		close(t.stop)
		<-t.done
		debug.SetMemoryLimit(t.hard)
	}
}
