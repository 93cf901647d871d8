// limits.go: running Lua under a time and a memory cap.

package lua

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// ErrTimeLimit and ErrMemoryLimit say why a call was stopped.
var (
	ErrTimeLimit   = errors.New("lua: run time limit exceeded")
	ErrMemoryLimit = errors.New("lua: memory limit exceeded")
)

// pollInterval is how often the heap is sampled during a call.
const pollInterval = 2 * time.Millisecond

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapBytes() int64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// limits are the caps of one module; use, when set, counts its calls.
type limits struct {
	maxTime time.Duration
	maxMem  int64
	use     *usage
}

// usage counts a module's calls against its caps (modapi.Usage).
type usage struct {
	calls, nanos, timeStops, memStops atomic.Uint64
	peak                              atomic.Int64
}

func (u *usage) grew(n int64) {
	for {
		p := u.peak.Load()
		if n <= p || u.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// record counts one call that took d, grew the heap by at most grown
// and ended with err (run's result).
func (u *usage) record(d time.Duration, grown int64, err error) {
	u.calls.Add(1)
	u.nanos.Add(uint64(max(d, 0)))
	u.grew(grown)
	switch {
	case errors.Is(err, ErrTimeLimit):
		u.timeStops.Add(1)
	case errors.Is(err, ErrMemoryLimit):
		u.memStops.Add(1)
	}
}

// meter is the budget of the call running in a state, for the builtins
// that allocate or loop in Go (see bounded.go): they find it through the
// state's context.
type meter struct {
	ctx     context.Context
	maxMem  int64
	base    atomic.Int64 // heap in use when the call started (lowered after collections)
	overMem atomic.Bool
	kill    context.CancelFunc
	steps   int // work done since the last look at ctx
}

type meterKey struct{}

// meterOf returns the meter of the call running in L; outside a call (a
// test state, a coroutine resumed later) a meter with no time cap and the
// default memory cap.
func meterOf(L *lua.LState) *meter {
	if ctx := L.Context(); ctx != nil {
		if m, ok := ctx.Value(meterKey{}).(*meter); ok {
			return m
		}
	}
	return &meter{ctx: context.Background(), maxMem: 64 << 20}
}

// stepEvery is how many units of work a builtin does between two looks at
// the call's context.
const stepEvery = 4096

// step counts n units of work and raises the time-limit error once the
// call's context is done.
func (m *meter) step(L *lua.LState, n int) {
	m.steps += n
	if m.steps < stepEvery {
		return
	}
	m.steps = 0
	if err := m.ctx.Err(); err != nil {
		L.RaiseError("%s", ErrTimeLimit.Error())
	}
}

// small is the size under which an allocation is left to the heap
// sampler.
const small = 64 << 10

// reserve raises the memory-limit error, and stops the call, when n more
// bytes would take the call past its memory cap: n over the cap, or over
// what the cap leaves after the heap's growth since the call started
// (confirmed after a collection).
func (m *meter) reserve(L *lua.LState, n int64, what string) {
	if n < small {
		return
	}
	if n <= m.maxMem && n <= m.maxMem-(heapBytes()-m.base.Load()) {
		return
	}
	if n <= m.maxMem {
		runtime.GC()
		if n <= m.maxMem-(heapBytes()-m.base.Load()) {
			return
		}
	}
	m.overMem.Store(true)
	if m.kill != nil {
		m.kill()
	}
	L.RaiseError("%s: %d more bytes would pass the memory limit (%d bytes)", what, n, m.maxMem)
}

// run calls f with L bound to a context that ends at the time cap, at the
// memory cap, or when parent ends.
func (lm limits) run(parent context.Context, L *lua.LState, f func() error) (err error) {
	start := time.Now()
	var peak atomic.Int64 // the most the heap grew, as sampled
	if lm.use != nil {
		defer func() { lm.use.record(time.Since(start), peak.Load(), err) }()
	}
	ctx, cancel := context.WithTimeout(parent, lm.maxTime)
	defer cancel()
	mt := &meter{maxMem: lm.maxMem, kill: cancel}
	mt.ctx = context.WithValue(ctx, meterKey{}, mt)
	mt.base.Store(heapBytes())
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		var gcDone chan struct{} // a confirming collection is running
		kill := func() { mt.overMem.Store(true); cancel() }
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-gcDone:
				gcDone = nil
				if heapBytes()-mt.base.Load() > lm.maxMem {
					kill()
					return
				}
				mt.base.Store(min(mt.base.Load(), heapBytes()))
			case <-t.C:
				grown := heapBytes() - mt.base.Load()
				if grown > peak.Load() {
					peak.Store(grown)
				}
				switch {
				case grown > 2*lm.maxMem:
					// Too much to be garbage waiting for a collection:
					// stop now rather than after the collection.
					kill()
					return
				case grown > lm.maxMem && gcDone == nil:
					// Growth may be garbage: collect (without waiting
					// here), then look again.
					gcDone = make(chan struct{})
					go func(c chan struct{}) { runtime.GC(); close(c) }(gcDone)
				}
			}
		}
	}()
	L.SetContext(mt.ctx)
	err = f()
	L.RemoveContext()
	close(stop)
	<-done
	if grown := heapBytes() - mt.base.Load(); grown > peak.Load() {
		peak.Store(grown)
	}
	switch {
	case mt.overMem.Load():
		return fmt.Errorf("%w (%d bytes)", ErrMemoryLimit, lm.maxMem)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil:
		return fmt.Errorf("%w (%s)", ErrTimeLimit, lm.maxTime)
	case err != nil && parent.Err() != nil:
		return fmt.Errorf("lua: stopped: %w", parent.Err())
	}
	return err
}
