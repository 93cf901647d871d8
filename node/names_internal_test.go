package node

import (
	"testing"

	"cairn/node/config"
)

// The name cache is Ipns.ResolveCacheSize (Kubo's 128 by default) but
// never more than 32 entries per MiB of memory budget.
func TestIpnsCacheSize_BoundedByBudget(t *testing.T) {
	for _, tc := range []struct {
		size, budget, want int
	}{
		{0, 0, 128},
		{0, 2, 64},
		{1000, 0, 1000},
		{100000, 200, 6400},
		{10, 200, 10},
	} {
		cfg := &config.Config{}
		cfg.Ipns.ResolveCacheSize = tc.size
		cfg.Budget.MemoryMiB = tc.budget
		if got := ipnsCacheSize(cfg); got != tc.want {
			t.Errorf("size %d, budget %d MiB: %d, want %d", tc.size, tc.budget, got, tc.want)
		}
	}
}
