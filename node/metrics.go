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
	mProviders      = desc("cairn_dht_provider_records", "Provider records the DHT stores for other peers (ADD_PROVIDER), as last counted plus those accepted since; absent without a DHT.")
	mProvidersMax   = desc("cairn_dht_provider_records_max", "The cap on those records (a thousandth of Datastore.StorageMax at 256 bytes a record, at most 256 a MiB of the memory budget; a peer may hold an eighth).")
	mProvRefused    = desc("cairn_dht_provider_records_refused_total", "Provider records refused past the caps since start.")
	mProvEvicted    = desc("cairn_dht_provider_records_evicted_total", "Provider records of the largest holders evicted since start to make room past the cap for peers holding few.")
	mShunned        = desc("cairn_p2p_peers_shunned_total", "Times since start a peer was disconnected and refused for 30 s: for provider records past the caps (1,024 refused) or identify and ping streams past its rate (64 refused).")
	mServiceRefused = desc("cairn_p2p_service_streams_refused_total", "Identify, ping and unnegotiated streams reset since start past their peer's rate (16 at once, then one a second).")
	mPubsubDropped  = desc("cairn_pubsub_messages_dropped_total", "Pubsub messages dropped before validation past a peer's rate (100 a second, bursts of 256); absent without pubsub.")
	mPeersForgotten = desc("cairn_peerstore_forgotten_peers_total", "Peers whose records were removed from the peerstore a minute after they left (not in a routing table, not protected, no provider records).")
	mStoreFault     = desc("cairn_store_fault", "1 while the store cannot write: its file system is read-only, or its last write failed (disk full, I/O error) and none succeeded since; the status page says why.")
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
		mGCRuns, mGCFreed, mQueue, mBudget, mGoLimit, mMemoryUsed, mMemoryHeadroom, mStoreFault,
		mProviders, mProvidersMax, mProvRefused, mShunned, mServiceRefused, mPubsubDropped, mPeersForgotten} {
		ch <- d
	}
}

// Vitals are the node's storage, flash wear and memory figures, read at
// once: the one source of the metrics above and of the status app.
type Vitals struct {
	StorageUsed  uint64 // what StorageMax bounds (Usage)
	StorageMax   uint64 // 0: no cap
	BlockBytes   uint64 // sum of the stored blocks' sizes
	Written      uint64 // bytes written to the store file since the daemon started
	WrittenTotal uint64 // the same over the store file's life
	GC           GCStats
	WriteQueue   uint64 // bytes of blocks queued for the store's writer
	MemoryBudget uint64 // Budget.MemoryMiB in bytes; 0: no budget
	GoMemLimit   int64  // GOMEMLIMIT
	MemoryUsed   uint64 // what the Go runtime holds from the system
	StoreFault   string // why the store cannot write, "" when it can (storage.Store.Fault)
}

// Headroom is the budget less the memory used (negative: over budget);
// ok is false without a budget.
func (v Vitals) Headroom() (headroom int64, ok bool) {
	if v.MemoryBudget == 0 {
		return 0, false
	}
	return int64(v.MemoryBudget) - int64(v.MemoryUsed), true
}

// Vitals reads the node's figures.
func (n *Node) Vitals() Vitals {
	used, _ := n.Storage().Usage() // never fails
	w := n.Store.Writes()
	return Vitals{
		StorageUsed: used, StorageMax: n.Storage().Max(), BlockBytes: n.Store.BlockBytes(),
		Written: w.SinceOpen, WrittenTotal: w.Total, GC: n.Storage().GCStats(), WriteQueue: n.Store.PendingBytes(),
		MemoryBudget: uint64(max(n.Config().Budget.MemoryMiB, 0)) << 20,
		GoMemLimit:   debug.SetMemoryLimit(-1),
		MemoryUsed:   goMemoryUsed(),
		StoreFault:   n.Store.Fault(),
	}
}

// Collect implements prometheus.Collector.
func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	v := c.n.Vitals()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(mStorageUsed, float64(v.StorageUsed))
	gauge(mStorageMax, float64(v.StorageMax))
	gauge(mStorageBlocks, float64(v.BlockBytes))
	counter(mWritten, float64(v.Written))
	counter(mWrittenLife, float64(v.WrittenTotal))
	counter(mGCRuns, float64(v.GC.Runs))
	counter(mGCFreed, float64(v.GC.FreedBytes))
	gauge(mQueue, float64(v.WriteQueue))
	gauge(mBudget, float64(v.MemoryBudget))
	gauge(mGoLimit, float64(v.GoMemLimit))
	gauge(mMemoryUsed, float64(v.MemoryUsed))
	if h, ok := v.Headroom(); ok {
		gauge(mMemoryHeadroom, float64(h))
	}
	fault := 0.0
	if v.StoreFault != "" {
		fault = 1
	}
	gauge(mStoreFault, fault)
	nt := c.n.Net
	if nt == nil {
		return
	}
	counter(mPeersForgotten, float64(nt.ForgottenPeers()))
	sh := nt.ShunStats()
	counter(mShunned, float64(sh.Shunned))
	counter(mServiceRefused, float64(sh.ServiceRefused))
	if nt.DHT != nil {
		p := nt.ProviderStats()
		gauge(mProviders, float64(p.Stored))
		gauge(mProvidersMax, float64(p.Max))
		counter(mProvRefused, float64(p.Refused))
		counter(mProvEvicted, float64(p.Evicted))
	}
	if nt.PubSub != nil {
		counter(mPubsubDropped, float64(nt.PubSub.DroppedMessages()))
	}
}

// goMemoryUsed is what the runtime has mapped less what it returned to the
// system: the memory GOMEMLIMIT governs, read without stopping the world.
func goMemoryUsed() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}
