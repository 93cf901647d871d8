package commands_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"testing"

	"cairn/internal/testutil"
	"cairn/node/config"

	"github.com/libp2p/go-libp2p/core/peer"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches and parses the metrics with Prometheus' text parser.
func scrape(t *testing.T, url string, hdr map[string]string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/debug/metrics/prometheus", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("scrape: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	return mfs
}

// value is the sum of a family's samples whose labels include want.
func value(mf *dto.MetricFamily, want map[string]string) (float64, bool) {
	var sum float64
	found := false
next:
	for _, m := range mf.GetMetric() {
		for k, v := range want {
			ok := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					ok = true
				}
			}
			if !ok {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Summary != nil:
			sum += float64(m.Summary.GetSampleCount())
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

// Ensure /debug/metrics/prometheus on the RPC port parses with Prometheus'
// parser and holds the Go runtime's, libp2p's resource manager's,
// bitswap's (Kubo's names), the HTTP requests' and cairn's own figures,
// which follow what the node did.
func TestMetrics_Prometheus_NamesAndFigures(t *testing.T) {
	n := testutil.MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Datastore.StorageMax", "1GB")
		config.SetKey(doc, "Budget.MemoryMiB", 512)
	})
	other := testutil.MustOnlineNode(t, "none", nil)
	if err := n.Net.Host.Connect(context.Background(), peer.AddrInfo{ID: other.PeerID, Addrs: other.Net.Host.Addrs()}); err != nil {
		t.Fatal(err)
	}
	srv := testutil.StartServer(t, n)
	data := make([]byte, 300<<10)
	rand.Read(data)
	addBytes(t, n, data, map[string]string{"pin": "false"}) // freed by the GC below
	kept := make([]byte, 200<<10)
	rand.Read(kept)
	addBytes(t, n, kept, nil)
	for _, p := range []string{"version", "repo/gc", "no/such/command"} {
		testutil.PostURL(t, srv.URL+"/api/v0/"+p, nil)
	}
	mfs := scrape(t, srv.URL, nil)
	for _, name := range []string{
		"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes",
		"libp2p_rcmgr_connections", "libp2p_rcmgr_streams",
		"ipfs_bitswap_recv_all_blocks_bytes", "ipfs_bitswap_sent_all_blocks_bytes",
		"ipfs_http_requests_total", "ipfs_http_request_duration_seconds",
		"cairn_rpc_requests_total", "cairn_rpc_request_duration_seconds",
		"cairn_storage_used_bytes", "cairn_storage_max_bytes", "cairn_storage_block_bytes",
		"cairn_store_written_bytes_total", "cairn_store_lifetime_written_bytes_total",
		"cairn_gc_runs_total", "cairn_gc_freed_bytes_total", "cairn_store_write_queue_bytes",
		"cairn_memory_budget_bytes", "cairn_memory_go_limit_bytes", "cairn_memory_used_bytes", "cairn_memory_headroom_bytes",
	} {
		if mfs[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	if t.Failed() {
		return
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		ok     func(float64) bool
	}{
		{"cairn_storage_max_bytes", nil, func(v float64) bool { return v == 1e9 }},
		{"cairn_storage_block_bytes", nil, func(v float64) bool { return v >= 200<<10 && v < 300<<10 }},
		{"cairn_storage_used_bytes", nil, func(v float64) bool { return v >= 200<<10 && v < 1e9 }},
		{"cairn_store_written_bytes_total", nil, func(v float64) bool { return v >= 500<<10 }},
		{"cairn_store_lifetime_written_bytes_total", nil, func(v float64) bool { return v >= 500<<10 }},
		{"cairn_gc_runs_total", nil, func(v float64) bool { return v == 1 }},
		{"cairn_gc_freed_bytes_total", nil, func(v float64) bool { return v >= 300<<10 }},
		{"cairn_memory_budget_bytes", nil, func(v float64) bool { return v == 512<<20 }},
		{"libp2p_rcmgr_connections", nil, func(v float64) bool { return v >= 1 }},
		{"ipfs_http_requests_total", map[string]string{"handler": "api", "method": "POST", "code": "404"}, func(v float64) bool { return v == 1 }},
		{"cairn_rpc_requests_total", map[string]string{"command": "version", "code": "200"}, func(v float64) bool { return v == 1 }},
		{"cairn_rpc_requests_total", map[string]string{"command": "repo/gc", "code": "200"}, func(v float64) bool { return v == 1 }},
		{"cairn_rpc_request_duration_seconds", map[string]string{"command": "repo/gc"}, func(v float64) bool { return v == 1 }},
	} {
		v, found := value(mfs[tc.name], tc.labels)
		if !found || !tc.ok(v) {
			t.Errorf("%s%v = %v (found %v)", tc.name, tc.labels, v, found)
		}
	}
	used, _ := value(mfs["cairn_memory_used_bytes"], nil)
	headroom, _ := value(mfs["cairn_memory_headroom_bytes"], nil)
	if used <= 0 || headroom != 512<<20-used {
		t.Errorf("memory used %v, headroom %v: want budget - used", used, headroom)
	}
}

// Ensure the metrics are behind API.Authorizations like the RPC.
func TestMetrics_BehindAuthorization(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"API.Authorizations": map[string]*config.RPCAuthScope{
		"prom": {AuthSecret: "bearer:scrape", AllowedPaths: []string{"/debug/metrics/prometheus"}},
		"rpc":  {AuthSecret: "bearer:rpc", AllowedPaths: []string{"/api/v0"}},
	}})
	srv := testutil.StartServer(t, n)
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 403}, {"Bearer rpc", 403}, {"Bearer scrape", 200}} {
		req, _ := http.NewRequest("GET", srv.URL+"/debug/metrics/prometheus", nil)
		req.Header.Set("Authorization", tc.auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%q: got %d, want %d", tc.auth, resp.StatusCode, tc.want)
		}
	}
	scrape(t, srv.URL, map[string]string{"Authorization": "Bearer scrape"})
}
