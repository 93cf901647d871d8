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

// limits are the caps of one module.
type limits struct {
	maxTime time.Duration
	maxMem  int64
}

// run calls f with L bound to a context that ends at the time cap, at the
// memory cap, or when parent ends.
func (lm limits) run(parent context.Context, L *lua.LState, f func() error) error {
	ctx, cancel := context.WithTimeout(parent, lm.maxTime)
	defer cancel()
	var overMem atomic.Bool
	stop := make(chan struct{})
	done := make(chan struct{})
	base := heapBytes()
	go func() {
		defer close(done)
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		var gcDone chan struct{} // a confirming collection is running
		kill := func() { overMem.Store(true); cancel() }
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-gcDone:
				gcDone = nil
				if heapBytes()-base > lm.maxMem {
					kill()
					return
				}
				base = min(base, heapBytes())
			case <-t.C:
				grown := heapBytes() - base
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
	L.SetContext(ctx)
	err := f()
	L.RemoveContext()
	close(stop)
	<-done
	switch {
	case overMem.Load():
		return fmt.Errorf("%w (%d bytes)", ErrMemoryLimit, lm.maxMem)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil:
		return fmt.Errorf("%w (%s)", ErrTimeLimit, lm.maxTime)
	case err != nil && parent.Err() != nil:
		return fmt.Errorf("lua: stopped: %w", parent.Err())
	}
	return err
}
