// metrics.go: the modules' caps and what their calls took, as
// Prometheus metrics on the RPC's /debug/metrics/prometheus.

package modules

import (
	"sync/atomic"

	"cairn/modules/modapi"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	label       = []string{"module"}
	mTimeCap    = prometheus.NewDesc("cairn_module_max_run_seconds", "A module's time cap per call (Modules.Lua.MaxRunTime).", label, nil)
	mMemCap     = prometheus.NewDesc("cairn_module_max_memory_bytes", "A module's memory cap per call (Modules.Lua.MaxMemory).", label, nil)
	mCalls      = prometheus.NewDesc("cairn_module_calls_total", "Calls of a module's code (its load, handlers, hooks, timers) since it loaded.", label, nil)
	mCallTime   = prometheus.NewDesc("cairn_module_call_seconds_total", "Time a module's calls took, summed.", label, nil)
	mStops      = prometheus.NewDesc("cairn_module_cap_stops_total", "Calls of a module stopped at a cap (cap: time or memory).", []string{"module", "cap"}, nil)
	mPeakMemory = prometheus.NewDesc("cairn_module_peak_call_memory_bytes", "The most the heap grew during one call of a module, as its memory cap measures it.", label, nil)
)

// Metrics is the Prometheus collector of a Host's modules. It can be
// registered before the host starts: until Attach it reports nothing.
type Metrics struct{ h atomic.Pointer[Host] }

// Attach makes m report h's modules (nil: none).
func (m *Metrics) Attach(h *Host) { m.h.Store(h) }

// Describe implements prometheus.Collector.
func (*Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mTimeCap, mMemCap, mCalls, mCallTime, mStops, mPeakMemory} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	h := m.h.Load()
	if h == nil {
		return
	}
	for _, mu := range h.Usage() {
		name, u := mu.Module, mu.Usage
		g := func(d *prometheus.Desc, t prometheus.ValueType, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, t, v, append([]string{name}, extra...)...)
		}
		g(mTimeCap, prometheus.GaugeValue, u.MaxRunTime.Seconds())
		g(mMemCap, prometheus.GaugeValue, float64(u.MaxMemory))
		g(mCalls, prometheus.CounterValue, float64(u.Calls))
		g(mCallTime, prometheus.CounterValue, u.CallTime.Seconds())
		g(mStops, prometheus.CounterValue, float64(u.TimeStops), "time")
		g(mStops, prometheus.CounterValue, float64(u.MemStops), "memory")
		g(mPeakMemory, prometheus.GaugeValue, float64(u.PeakMemory))
	}
}

// ModuleUsage is one loaded module's usage.
type ModuleUsage struct {
	Module string
	modapi.Usage
}

// Usage returns the usage of the loaded modules that run under caps (Lua
// modules), in load order.
func (h *Host) Usage() []ModuleUsage {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []ModuleUsage
	for _, name := range h.order {
		if r, ok := h.loaded[name].(modapi.UsageReporter); ok {
			out = append(out, ModuleUsage{name, r.Usage()})
		}
	}
	return out
}
