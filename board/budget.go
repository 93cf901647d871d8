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

// Budget is the config's Budget section (cairn's; Kubo has none) and the
// numbers one memory budget sets for the process as a whole. Memory is in
// MiB. MemoryMiB is the one input (the service's hard memory cap); `cairn
// init --board` writes the other fields, derived from it by Derive, so they
// can be read and tuned. Zero means "derive from MemoryMiB" (Fill). Without
// MemoryMiB the daemon sets no GOMEMLIMIT and keeps its built-in sizes.
//
// The network layer derives its own limits (connection watermarks,
// bitswap) from MemoryMiB in node.NetLimitsOf; its memory is
// NetMemoryMiB, which is never written to the config.
type Budget struct {
	// Board is the profile init used ("pi-zero-2w", "generic", ...).
	Board string `json:",omitempty"`
	// MemoryMiB is the budget: systemd MemoryMax. At least MinMemoryMiB.
	MemoryMiB int `json:",omitempty"`
	// MemoryHighMiB is where the kernel starts reclaiming (systemd
	// MemoryHigh): 85% of the budget.
	MemoryHighMiB int `json:",omitempty"`
	// GoMemLimitMiB is the Go runtime's soft limit (GOMEMLIMIT): 70%. The
	// daemon applies it with debug.SetMemoryLimit unless GOMEMLIMIT is set
	// in the environment.
	GoMemLimitMiB int `json:",omitempty"`
	// NetMemoryMiB is the libp2p resource manager's memory, always
	// NetMemoryMiB(MemoryMiB); it enters here so that Check sees everything
	// that shares GOMEMLIMIT.
	NetMemoryMiB int `json:"-"`
	// HTTPConcurrency caps simultaneous RPC connections.
	HTTPConcurrency int `json:",omitempty"`
	// StoreBatchMiB caps the bytes committed in one bbolt transaction.
	StoreBatchMiB int `json:",omitempty"`
	// StorePendingMiB caps the bytes queued for the writer.
	StorePendingMiB int `json:",omitempty"`
}

// NetMemoryMiB is the libp2p resource manager's memory for a budget of
// memoryMiB: a quarter of it, at least 32 MiB.
func NetMemoryMiB(memoryMiB int) int { return max(memoryMiB/4, 32) }

// MemTargetMiB is the Go runtime's soft memory target (package memtarget)
// for a write queue of pendingMiB in batches of batchMiB: 21 MiB for the
// runtime, an idle daemon and one add's chunker and leaf workers, plus the
// queue at its fullest (the queued blocks and the pages bbolt builds for
// the batch being committed). The target follows the live heap upwards, so
// it is a point to collect at, not a cap. (A 20 MiB target kept a 256 MiB
// add's peak RssAnon at 17-20 MiB but cost 20% more CPU than none, the
// runtime returning and faulting pages back near the limit; 24 MiB kept it
// at 21-22 MiB for 5% more.)
func MemTargetMiB(pendingMiB, batchMiB int) int { return 21 + pendingMiB + batchMiB }

// Derive computes the limits for a budget of memoryMiB.
func Derive(memoryMiB int) (Budget, error) {
	if memoryMiB < MinMemoryMiB {
		return Budget{}, fmt.Errorf("%w: %d MiB is below the floor of %d MiB (Budget.MemoryMiB)", ErrBudgetTooSmall, memoryMiB, MinMemoryMiB)
	}
	m := memoryMiB
	l := Budget{
		MemoryMiB:       m,
		MemoryHighMiB:   m * 85 / 100,
		GoMemLimitMiB:   m * 70 / 100,
		NetMemoryMiB:    NetMemoryMiB(m),
		HTTPConcurrency: clamp(m/4, 32, 256),
		// The write queue is most of an add's heap (see storage.Options):
		// a 128th of the budget, 2 MiB on a 256 MiB board.
		StorePendingMiB: clamp(m/128, 2, 32),
	}
	l.StoreBatchMiB = l.StorePendingMiB / 2
	return l, l.Check()
}

// Fill sets every zero field of l from Derive(l.MemoryMiB), so a config
// can override single limits and leave the rest to the budget.
func (l Budget) Fill() (Budget, error) {
	d, err := Derive(l.MemoryMiB)
	if err != nil {
		return Budget{}, err
	}
	for _, f := range []struct{ dst, src *int }{
		{&l.MemoryHighMiB, &d.MemoryHighMiB}, {&l.GoMemLimitMiB, &d.GoMemLimitMiB},
		{&l.NetMemoryMiB, &d.NetMemoryMiB}, {&l.HTTPConcurrency, &d.HTTPConcurrency},
		{&l.StoreBatchMiB, &d.StoreBatchMiB}, {&l.StorePendingMiB, &d.StorePendingMiB},
	} {
		if *f.dst == 0 {
			*f.dst = *f.src
		}
	}
	return l, l.Check()
}

// HeapNeedMiB is the memory the derived consumers may take together: it
// must fit under GOMEMLIMIT.
func (l Budget) HeapNeedMiB() int {
	return RuntimeFloorMiB + l.NetMemoryMiB + l.StorePendingMiB + l.StoreBatchMiB +
		(l.HTTPConcurrency*httpConnKiB+1023)/1024
}

// Check reports the first relation l breaks, as ErrBudgetTooSmall or
// ErrInconsistent.
func (l Budget) Check() error {
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
		return bad("resource manager, write queue, HTTP buffers and runtime need %d MiB, more than GOMEMLIMIT %d MiB",
			l.HeapNeedMiB(), l.GoMemLimitMiB)
	case l.StoreBatchMiB <= 0 || l.StorePendingMiB < l.StoreBatchMiB:
		return bad("write queue %d MiB must hold at least one batch of %d MiB", l.StorePendingMiB, l.StoreBatchMiB)
	case l.HTTPConcurrency <= 0:
		return bad("HTTP concurrency must be positive")
	}
	return nil
}

// String is a one-line summary for the daemon's start banner.
func (l Budget) String() string {
	return fmt.Sprintf("budget %d MiB (MemoryHigh %d MiB, GOMEMLIMIT %d MiB), resource manager %d MiB, "+
		"HTTP %d connections, write queue %d/%d MiB",
		l.MemoryMiB, l.MemoryHighMiB, l.GoMemLimitMiB, l.NetMemoryMiB, l.HTTPConcurrency,
		l.StoreBatchMiB, l.StorePendingMiB)
}

func clamp(v, lo, hi int) int {
	return min(max(v, lo), hi)
}
