package memtarget

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// Ensure the limit is the target for a small heap, follows a live heap
// past half of it (so the collector never runs back to back), and never
// passes the hard limit.
func TestLimit(t *testing.T) {
	tu := &Tuner{target: 20 << 20, hard: 100 << 20}
	for _, tc := range []struct{ live, other, want int64 }{
		{2 << 20, 1 << 20, 20 << 20},
		{9 << 20, 2 << 20, 20 << 20},
		{10 << 20, 2 << 20, 22 << 20},
		{30 << 20, 2 << 20, 62 << 20},
		{80 << 20, 2 << 20, 100 << 20},
	} {
		if got := tu.Limit(tc.live, tc.other, false); got != tc.want {
			t.Errorf("live %d other %d: limit %d, want %d", tc.live, tc.other, got, tc.want)
		}
		if got := tu.Limit(tc.live, tc.other, true); got != min(tc.want+Slack, tu.hard) {
			t.Errorf("live %d other %d, with slack: limit %d, want %d", tc.live, tc.other, got, min(tc.want+Slack, tu.hard))
		}
	}
}

// Ensure a window counts towards the slack when the collector and
// scavenger take more than the share of the CPU and the rate of a core,
// and not otherwise.
func TestGCHeavy(t *testing.T) {
	enter := func(gc, user, wall float64) bool { return gcHeavy(gc, user, wall, EnterGCShare, EnterGCRate) }
	keep := func(gc, user, wall float64) bool { return gcHeavy(gc, user, wall, KeepGCShare, KeepGCRate) }
	for _, tc := range []struct {
		name        string
		gc, user    float64 // over one second
		enter, keep bool
	}{
		{"nothing", 0, 0, false, false},
		{"a quiet process", 0.01, 1, false, false},
		{"an add of 1 KiB blocks", 0.26, 1.6, false, true},
		{"identify spam", 0.44, 1.5, true, true},
		{"the provider flood", 0.8, 1.2, true, true},
		{"an idle process's collection", 0.02, 0.01, false, false},
		{"uploads of the same blocks", 0.07, 0.16, false, true},
		{"identify spam, with the slack", 0.11, 1.5, false, true},
	} {
		if got := enter(tc.gc, tc.user, 1); got != tc.enter {
			t.Errorf("%s: enters %v, want %v", tc.name, got, tc.enter)
		}
		if got := keep(tc.gc, tc.user, 1); got != tc.keep {
			t.Errorf("%s: keeps %v, want %v", tc.name, got, tc.keep)
		}
	}
	if enter(0.8, 1.2, 0) {
		t.Error("a window of no time counts")
	}
}

var sink []byte

// Ensure a program that allocates fast against a small target gets the
// slack once two windows in a row are heavy. The bar here is a tenth of
// the CPU and of a core (TestGCHeavy checks the real bars), so that other
// tests' packages running on the same cores cannot keep it under.
func TestStart_SlackWhileGCHeavy(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const target, hard = 4 << 20, 1 << 30
	tu := Start(target, hard)
	defer tu.Stop()
	tu.mu.Lock()
	tu.enterShare, tu.enterRate = 0.1, 0.1
	tu.mu.Unlock()
	var most int64
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && most < target+Slack; {
		for range 256 {
			sink = make([]byte, 64<<10)
		}
		most = max(most, debug.SetMemoryLimit(-1))
	}
	if most < target+Slack {
		t.Fatalf("while allocating fast: limit at most %d, want the target and the slack, %d", most, target+Slack)
	}
}

var keep [][]byte

// Ensure the running tuner raises the runtime's limit after a collection
// finds a large live heap, lowers it back to the target once that heap is
// gone, and leaves the hard limit at Stop.
func TestStart_FollowsLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const target, hard = 16 << 20, 1 << 30
	tu := Start(target, hard)
	defer tu.Stop()
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	// Cleanups run on their own goroutine after the collection: collect
	// until the tuner has seen one.
	settle := func(ok func(int64) bool) int64 {
		for range 100 {
			runtime.GC()
			runtime.Gosched()
			if l := limit(); ok(l) {
				return l
			}
		}
		return limit()
	}
	if l := settle(func(l int64) bool { return l == target }); l != target {
		t.Fatalf("idle: limit %d, want the target %d", l, target)
	}
	for range 32 {
		keep = append(keep, make([]byte, 1<<20))
	}
	if l := settle(func(l int64) bool { return l >= 64<<20 }); l < 64<<20 || l > hard {
		t.Fatalf("32 MiB live: limit %d, want at least twice the live heap", l)
	}
	keep = nil
	if l := settle(func(l int64) bool { return l == target }); l != target {
		t.Fatalf("after the heap is gone: limit %d, want the target %d", l, target)
	}
	tu.Stop()
	if l := limit(); l != hard {
		t.Fatalf("after Stop: limit %d, want the hard limit %d", l, hard)
	}
	settle(func(int64) bool { return false })
	if l := limit(); l != hard {
		t.Fatalf("collections after Stop changed the limit to %d", l)
	}
}

// Ensure no hard limit means none once stopped.
func TestStart_NoHardLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	Start(16<<20, 0).Stop()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("limit %d after Stop without a hard limit", l)
	}
}

// memoryUsed is what the runtime holds from the OS and has not returned.
func memoryUsed() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// Ensure a heap a burst left behind, garbage that no collection has seen
// since, is collected and returned to the OS after a quiet period, once.
func TestStart_QuietAfterBurst_ReturnsMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const quiet = 100 * time.Millisecond
	tu := start(1<<30, 1<<30, quiet)
	defer tu.Stop()
	for range 32 {
		keep = append(keep, make([]byte, 1<<20))
	}
	runtime.GC() // the burst's collection: 32 MiB live, the goal twice that
	keep = nil   // garbage now, and nothing collects it
	before := memoryUsed()
	cycles := gcCycles()
	time.Sleep(5 * quiet)
	after := memoryUsed()
	if before-after < 24<<20 {
		t.Fatalf("after a quiet period: %d MiB used, %d MiB before; want the 32 MiB of garbage returned", after>>20, before>>20)
	}
	// Once: no collection of the runtime's own since, so no second trim.
	n := gcCycles() - cycles
	time.Sleep(5 * quiet)
	if m := gcCycles() - cycles; m != n || n == 0 {
		t.Fatalf("collections: %d after the first quiet period, %d after the next; want one trim, then none", n, m)
	}
}

// Ensure Settle collects and returns the garbage a piece of work left when
// it is more than SettleBytes, at most once per SettleEvery, and not
// when there is little to return.
func TestSettle(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	// No collection of the runtime's own: one while the garbage is still
	// held would count it live, and Settle measures from that.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	tu := start(1<<30, 1<<30, time.Hour)
	defer tu.Stop()
	runtime.GC()
	debug.FreeOSMemory()
	cycles := gcCycles()
	tu.Settle()
	if n := gcCycles() - cycles; n != 0 {
		t.Fatalf("with no garbage: %d collections, want none", n)
	}
	for range 32 {
		keep = append(keep, make([]byte, 1<<20))
	}
	keep = nil // 32 MiB of garbage that no collection has seen
	before := memoryUsed()
	tu.Settle()
	if after := memoryUsed(); before-after < 24<<20 || gcCycles() == cycles {
		t.Fatalf("after Settle: %d MiB used, %d MiB before; want the 32 MiB of garbage collected and returned", after>>20, before>>20)
	}
	for range 32 {
		keep = append(keep, make([]byte, 1<<20))
	}
	keep = nil
	cycles = gcCycles()
	tu.Settle() // within SettleEvery of the last one
	if n := gcCycles() - cycles; n != 0 {
		t.Fatalf("a second Settle within %v: %d collections, want none", SettleEvery, n)
	}
	time.Sleep(SettleEvery)
	tu.Settle() // the same garbage, once SettleEvery has passed
	if gcCycles() == cycles {
		t.Fatalf("a Settle %v after the last one: no collection, want one", SettleEvery)
	}
}
