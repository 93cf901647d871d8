// latency.go: ipfs_http_request_duration_seconds, a Prometheus summary
// whose observations cost a few atomic adds instead of client_golang's
// quantile streams (which inserted each request's duration into five
// sorted streams: 4% of the daemon's CPU under wrk on version).

package rpc

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The window of the quantiles is client_golang's default for a summary:
// the last 10 minutes, moved on in 5 steps of 2 minutes.
const (
	latencySteps    = 5
	latencyStepTime = 2 * time.Minute
)

// Durations are counted in buckets 3% wide from 10 µs to about 2.6
// hours; a quantile is the middle of its bucket, within 1.5% of the
// duration of that rank (shorter and longer ones fall into the first and
// last bucket). client_golang's streams promise a rank within 5% (0.5),
// 1% (0.9) and 0.1% (0.99) instead.
const (
	latencyMin     = 1e-5 // seconds
	latencyGrowth  = 1.03
	latencyBuckets = 700
)

var latencyLogGrowth = math.Log(latencyGrowth)

// latencyQuantiles are those Kubo's summary reports.
var latencyQuantiles = []float64{0.5, 0.9, 0.99}

// latencySummary is a prometheus.Collector of one summary without labels
// of its own: count and sum since the start, quantiles over the window.
type latencySummary struct {
	desc *prometheus.Desc

	count   atomic.Uint64
	sumBits atomic.Uint64 // float64 bits of the sum of the durations

	mu    sync.Mutex // taken to move the window on and to read it
	steps [latencySteps]*[latencyBuckets]atomic.Uint64
	cur   atomic.Int64 // index in steps of the step now counted
	next  atomic.Int64 // when (UnixNano) the window moves on
}

func newLatencySummary(name, help string, constLabels prometheus.Labels, now time.Time) *latencySummary {
	s := &latencySummary{desc: prometheus.NewDesc(name, help, nil, constLabels)}
	for i := range s.steps {
		s.steps[i] = new([latencyBuckets]atomic.Uint64)
	}
	s.next.Store(now.Add(latencyStepTime).UnixNano())
	return s
}

func latencyBucket(seconds float64) int {
	if !(seconds > latencyMin) { // also NaN
		return 0
	}
	return min(int(math.Log(seconds/latencyMin)/latencyLogGrowth), latencyBuckets-1)
}

// observe records a duration that ended at now.
func (s *latencySummary) observe(d time.Duration, now time.Time) {
	s.advance(now)
	v := d.Seconds()
	s.steps[s.cur.Load()][latencyBucket(v)].Add(1)
	s.count.Add(1)
	for {
		old := s.sumBits.Load()
		if s.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// advance moves the window on to now, emptying the steps that left it.
func (s *latencySummary) advance(now time.Time) {
	t := now.UnixNano()
	if t < s.next.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n := 0; t >= s.next.Load(); n++ {
		if n == latencySteps { // idle for longer than the window
			s.next.Store(t + int64(latencyStepTime))
			break
		}
		i := (s.cur.Load() + 1) % latencySteps
		for j := range s.steps[i] {
			s.steps[i][j].Store(0)
		}
		s.cur.Store(i)
		s.next.Add(int64(latencyStepTime))
	}
}

func (s *latencySummary) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

func (s *latencySummary) Collect(ch chan<- prometheus.Metric) {
	ch <- s.metric(time.Now())
}

// metric is the summary as of now.
func (s *latencySummary) metric(now time.Time) prometheus.Metric {
	s.advance(now)
	var counts [latencyBuckets]uint64
	var total uint64
	s.mu.Lock()
	for _, st := range s.steps {
		for j := range st {
			c := st[j].Load()
			counts[j] += c
			total += c
		}
	}
	s.mu.Unlock()
	q := make(map[float64]float64, len(latencyQuantiles))
	for _, p := range latencyQuantiles {
		q[p] = math.NaN() // as client_golang's summary with no observation in its window
		if total == 0 {
			continue
		}
		rank := uint64(math.Ceil(p * float64(total)))
		var seen uint64
		for j, c := range counts {
			seen += c
			if seen >= rank {
				q[p] = latencyMin * math.Pow(latencyGrowth, float64(j)+0.5)
				break
			}
		}
	}
	return prometheus.MustNewConstSummary(s.desc, s.count.Load(), math.Float64frombits(s.sumBits.Load()), q)
}
