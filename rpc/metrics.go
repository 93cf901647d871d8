// metrics.go: /debug/metrics/prometheus on the RPC port, where Kubo serves
// it, and the request metrics the server records: Kubo's HTTP metrics
// (ipfs_http_*, handler "api") and cairn's per command. The scrape holds
// the default registry (Go runtime, process, libp2p's resource manager,
// bitswap) and the server's own (its requests, the node's figures).

package rpc

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/valyala/fasthttp"
)

// MetricsPath is where the server answers Prometheus scrapes.
const MetricsPath = "/debug/metrics/prometheus"

type serverMetrics struct {
	gather   prometheus.Gatherers
	requests *prometheus.CounterVec
	duration *latencySummary
	commands *prometheus.CounterVec
	cmdTime  *prometheus.HistogramVec

	// children caches the metrics of one method, command and status
	// (POST only: other methods are the client's to choose), so that a
	// request finds them with lock-free loads instead of hashing and
	// checking its label values under the vectors' locks.
	children sync.Map // metricKey => *requestMetrics
}

type metricKey struct {
	method, command string
	code            int
}

type requestMetrics struct {
	requests, commands prometheus.Counter // commands: nil without a command
	cmdTime            prometheus.Observer
}

func newServerMetrics(own ...prometheus.Collector) *serverMetrics {
	api := prometheus.Labels{"handler": "api"}
	m := &serverMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ipfs", Subsystem: "http",
			Name: "requests_total", Help: "Total number of HTTP requests made.", ConstLabels: api},
			[]string{"method", "code"}),
		duration: newLatencySummary("ipfs_http_request_duration_seconds", "The HTTP request latencies in seconds.",
			api, time.Now()),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_rpc_requests_total",
			Help: "RPC requests per command and HTTP status."}, []string{"command", "code"}),
		cmdTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_rpc_request_duration_seconds",
			Help:    "Time from an RPC request to the end of its answer, per command.",
			Buckets: []float64{.005, .025, .1, .5, 2.5, 10, 60, 300}}, []string{"command"}),
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(append([]prometheus.Collector{m.requests, m.duration, m.commands, m.cmdTime}, own...)...)
	m.gather = prometheus.Gatherers{prometheus.DefaultGatherer, reg}
	return m
}

// observe records one request that ended at end; command is "" for one
// that named none.
func (m *serverMetrics) observe(method string, code int, command string, d time.Duration, end time.Time) {
	k := metricKey{method, command, code}
	var rm *requestMetrics
	if v, ok := m.children.Load(k); ok {
		rm = v.(*requestMetrics)
	} else {
		c := codeLabel(code)
		rm = &requestMetrics{requests: m.requests.WithLabelValues(method, c)}
		if command != "" {
			rm.commands = m.commands.WithLabelValues(command, c)
			rm.cmdTime = m.cmdTime.WithLabelValues(command)
		}
		if method == "POST" {
			m.children.Store(k, rm)
		}
	}
	rm.requests.Inc()
	m.duration.observe(d, end)
	if rm.commands != nil {
		rm.commands.Inc()
		rm.cmdTime.Observe(d.Seconds())
	}
}

// codeLabel is code as a label value, without an allocation for the
// usual ones.
func codeLabel(code int) string {
	switch code {
	case 200:
		return "200"
	case 204:
		return "204"
	case 307:
		return "307"
	case 400:
		return "400"
	case 403:
		return "403"
	case 404:
		return "404"
	case 405:
		return "405"
	case 500:
		return "500"
	}
	return strconv.Itoa(code)
}

// methodLabel is the request's method as a label value, without an
// allocation for POST.
func methodLabel(m []byte) string {
	if string(m) == "POST" {
		return "POST"
	}
	return string(m)
}

// serveMetrics answers a scrape in Prometheus' text format.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	mfs, err := s.metrics.gather.Gather()
	if err != nil && len(mfs) == 0 {
		textError(ctx, 500, "gathering metrics: "+err.Error())
		return
	}
	if err != nil {
		log.Errorf("metrics: %v", err)
	}
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	ctx.Response.Header.Set("Content-Type", string(format))
	enc := expfmt.NewEncoder(ctx, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			log.Errorf("metrics: %v", err)
			return
		}
	}
}
