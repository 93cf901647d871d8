// metrics.go: the node's own Prometheus metrics (storage, flash wear, GC,
// write queue, memory budget), read at each scrape. The RPC serves them on
// /debug/metrics/prometheus beside the Go runtime's, libp2p's resource
// manager's and bitswap's (docs/operate.md says what each means on a
// board).

package node

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"

	mprome "github.com/ipfs/go-metrics-prometheus"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/prometheus/client_golang/prometheus"
)

// injectMetrics makes the metrics of go-metrics-interface (bitswap's)
// Prometheus metrics of the default registry, as Kubo does, and registers
// the resource manager's there; once per process.
var injectMetrics = sync.OnceFunc(func() {
	if err := mprome.Inject(); err != nil {
		log.Errorf("metrics: %v", err)
	}
	rcmgr.MustRegisterWith(prometheus.DefaultRegisterer)
})

func desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, nil, nil)
}

var (
	mStorageUsed    = desc("cairn_storage_used_bytes", "Bytes the store takes against Datastore.StorageMax: pages in use plus queued writes.")
	mStorageMax     = desc("cairn_storage_max_bytes", "Datastore.StorageMax in bytes (0: no cap).")
	mStorageBlocks  = desc("cairn_storage_block_bytes", "Sum of the sizes of the stored blocks.")
	mWritten        = desc("cairn_store_written_bytes_total", "Bytes written to the store file since the daemon started (flash wear).")
	mWrittenLife    = desc("cairn_store_lifetime_written_bytes_total", "Bytes written to the store file over its life (flash wear; the last commit counts from the next).")
	mGCRuns         = desc("cairn_gc_runs_total", "Garbage collections run since start.")
	mGCFreed        = desc("cairn_gc_freed_bytes_total", "Block bytes garbage collection removed since start.")
	mQueue          = desc("cairn_store_write_queue_bytes", "Bytes of blocks queued for the store's writer.")
	mBudget         = desc("cairn_memory_budget_bytes", "The board profile's memory budget (Budget.MemoryMiB; 0: none).")
	mGoLimit        = desc("cairn_memory_go_limit_bytes", "The Go runtime's soft memory limit (GOMEMLIMIT).")
	mMemoryUsed     = desc("cairn_memory_used_bytes", "Memory the Go runtime holds from the system and has not returned.")
	mMemoryHeadroom = desc("cairn_memory_headroom_bytes", "Budget less memory used (negative: over budget; absent without a budget).")
)

// Collector returns the node's metrics as a Prometheus collector.
func (n *Node) Collector() prometheus.Collector {
	injectMetrics()
	return nodeCollector{n}
}

type nodeCollector struct{ n *Node }

// Describe implements prometheus.Collector.
func (nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mStorageUsed, mStorageMax, mStorageBlocks, mWritten, mWrittenLife,
		mGCRuns, mGCFreed, mQueue, mBudget, mGoLimit, mMemoryUsed, mMemoryHeadroom} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.n
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	if used, err := n.Usage(); err == nil {
		gauge(mStorageUsed, float64(used))
	}
	gauge(mStorageMax, float64(n.StorageMax()))
	gauge(mStorageBlocks, float64(n.Store.BlockBytes()))
	w := n.Store.Writes()
	counter(mWritten, float64(w.SinceOpen))
	counter(mWrittenLife, float64(w.Total))
	gc := n.GCStats()
	counter(mGCRuns, float64(gc.Runs))
	counter(mGCFreed, float64(gc.FreedBytes))
	gauge(mQueue, float64(n.Store.PendingBytes()))
	budget := float64(n.Config().Budget.MemoryMiB) * (1 << 20)
	gauge(mBudget, budget)
	gauge(mGoLimit, float64(debug.SetMemoryLimit(-1)))
	used := goMemoryUsed()
	gauge(mMemoryUsed, used)
	if budget > 0 {
		gauge(mMemoryHeadroom, budget-used)
	}
}

// goMemoryUsed is what the runtime has mapped less what it returned to the
// system: the memory GOMEMLIMIT governs, read without stopping the world.
func goMemoryUsed() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
