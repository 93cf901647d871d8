// budget.go: the limits derived from one memory budget, and their checks.

package board

import "fmt"

// MinMemoryMiB is the smallest budget cairn runs in: below it the runtime
// floor, one write queue and a few RPC connections no longer fit under
// GOMEMLIMIT.
const MinMemoryMiB = 128

// RuntimeFloorMiB is what the daemon uses whatever the load: Go runtime,
// binary data, goroutine stacks, one add's chunker and DAG builder.
const RuntimeFloorMiB = 24

// httpConnKiB is the most one RPC connection buffers: the 256 KiB read
// buffer (request line and headers) plus the 32 KiB write buffer.
const httpConnKiB = 256 + 32

// Limits are the numbers a memory budget sets for the process as a whole.
// Memory is in MiB. The network layer derives its own limits (resource
// manager, connection watermarks, bitswap) from the same budget in
// node.Config.NetLimits; its memory enters here as NetMemoryMiB so that
// Check sees everything that shares GOMEMLIMIT.
type Limits struct {
	// MemoryMiB is the budget: the service's hard cap (systemd MemoryMax).
	MemoryMiB int
	// MemoryHighMiB is where the kernel starts reclaiming (systemd
	// MemoryHigh): 85% of the budget.
	MemoryHighMiB int
	// GoMemLimitMiB is the Go runtime's soft limit (GOMEMLIMIT): 70%.
	GoMemLimitMiB int
	// NetMemoryMiB is the libp2p resource manager's memory. Derive
	// estimates it as node.NetLimits does (a quarter, at least 32 MiB);
	// callers that have the config put node's figure here.
	NetMemoryMiB int
	// HTTPConcurrency caps simultaneous RPC connections.
	HTTPConcurrency int
	// StoreBatchMiB caps the bytes committed in one bbolt transaction.
	StoreBatchMiB int
	// StorePendingMiB caps the bytes queued for the writer.
	StorePendingMiB int
	// CacheMiB is the budget for block and key caches.
	CacheMiB int
}

// Derive computes the limits for a budget of memoryMiB.
func Derive(memoryMiB int) (Limits, error) {
	if memoryMiB < MinMemoryMiB {
		return Limits{}, fmt.Errorf("%w: %d MiB is below the floor of %d MiB (Budget.MemoryMiB)", ErrBudgetTooSmall, memoryMiB, MinMemoryMiB)
	}
	m := memoryMiB
	l := Limits{
		MemoryMiB:       m,
		MemoryHighMiB:   m * 85 / 100,
		GoMemLimitMiB:   m * 70 / 100,
		NetMemoryMiB:    max(m/4, 32),
		HTTPConcurrency: clamp(m/4, 32, 256),
		StorePendingMiB: clamp(m/32, 4, 32),
		CacheMiB:        clamp(m/16, 8, 256),
	}
	l.StoreBatchMiB = l.StorePendingMiB / 2
	return l, l.Check()
}

// Fill sets every zero field of l from Derive(l.MemoryMiB), so a config
// can override single limits and leave the rest to the budget.
func (l Limits) Fill() (Limits, error) {
	d, err := Derive(l.MemoryMiB)
	if err != nil {
		return Limits{}, err
	}
	for _, f := range []struct{ dst, src *int }{
		{&l.MemoryHighMiB, &d.MemoryHighMiB}, {&l.GoMemLimitMiB, &d.GoMemLimitMiB},
		{&l.NetMemoryMiB, &d.NetMemoryMiB}, {&l.HTTPConcurrency, &d.HTTPConcurrency},
		{&l.StoreBatchMiB, &d.StoreBatchMiB}, {&l.StorePendingMiB, &d.StorePendingMiB},
		{&l.CacheMiB, &d.CacheMiB},
	} {
		if *f.dst == 0 {
			*f.dst = *f.src
		}
	}
	return l, l.Check()
}

// HeapNeedMiB is the memory the derived consumers may take together: it
// must fit under GOMEMLIMIT.
func (l Limits) HeapNeedMiB() int {
	return RuntimeFloorMiB + l.NetMemoryMiB + l.StorePendingMiB + l.StoreBatchMiB +
		(l.HTTPConcurrency*httpConnKiB+1023)/1024 + l.CacheMiB
}

// Check reports the first relation l breaks, as ErrBudgetTooSmall or
// ErrInconsistent.
func (l Limits) Check() error {
	if l.MemoryMiB < MinMemoryMiB {
		return fmt.Errorf("%w: %d MiB is below the floor of %d MiB (Budget.MemoryMiB)", ErrBudgetTooSmall, l.MemoryMiB, MinMemoryMiB)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInconsistent}, a...)...)
	}
	switch {
	case l.MemoryHighMiB >= l.MemoryMiB:
		return bad("MemoryHigh %d MiB must be below the budget (MemoryMax) %d MiB", l.MemoryHighMiB, l.MemoryMiB)
	case l.GoMemLimitMiB >= l.MemoryHighMiB:
		return bad("GOMEMLIMIT %d MiB must be below MemoryHigh %d MiB", l.GoMemLimitMiB, l.MemoryHighMiB)
	case l.NetMemoryMiB >= l.GoMemLimitMiB:
		return bad("resource manager memory %d MiB must be below GOMEMLIMIT %d MiB", l.NetMemoryMiB, l.GoMemLimitMiB)
	case l.HeapNeedMiB() > l.GoMemLimitMiB:
		return bad("resource manager, write queue, HTTP buffers, caches and runtime need %d MiB, more than GOMEMLIMIT %d MiB",
			l.HeapNeedMiB(), l.GoMemLimitMiB)
	case l.StoreBatchMiB <= 0 || l.StorePendingMiB < l.StoreBatchMiB:
		return bad("write queue %d MiB must hold at least one batch of %d MiB", l.StorePendingMiB, l.StoreBatchMiB)
	case l.HTTPConcurrency <= 0 || l.CacheMiB < 0:
		return bad("HTTP concurrency must be positive")
	}
	return nil
}

// String is a one-line summary for the daemon's start banner.
func (l Limits) String() string {
	return fmt.Sprintf("budget %d MiB (MemoryHigh %d MiB, GOMEMLIMIT %d MiB), resource manager %d MiB, "+
		"HTTP %d connections, write queue %d/%d MiB, caches %d MiB",
		l.MemoryMiB, l.MemoryHighMiB, l.GoMemLimitMiB, l.NetMemoryMiB, l.HTTPConcurrency,
		l.StoreBatchMiB, l.StorePendingMiB, l.CacheMiB)
}

func clamp(v, lo, hi int) int {
	return min(max(v, lo), hi)
}
