package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure a Lua module's caps and calls show on the RPC's metrics, and
// the status page links its app.
func TestDaemon_ModuleMetricsAndLinks(t *testing.T) {
	repo := initRepo(t)
	dir := t.TempDir()
	src := "module:depends(\"http\")\nmodule:provides(\"http\", { route = { [\"GET /\"] = function() return \"hello\" end } })\n"
	if err := os.WriteFile(filepath.Join(dir, "mod_hello.lua"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	setConfig(t, repo, map[string]any{"Modules.Dir": dir, "Modules.Enabled": []any{"http_status", "hello"}})
	_, api, out := startDaemon(t, repo)
	status := statusURL(t, out)
	get := func(method, u string) string {
		t.Helper()
		req, _ := http.NewRequest(method, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %.300s", method, u, resp.StatusCode, b)
		}
		return string(b)
	}
	if b := get("GET", strings.TrimSuffix(status, "/status/")+"/hello/"); b != "hello" {
		t.Fatalf("the module's app: %q", b)
	}
	if page := get("GET", status); !strings.Contains(page, `<a href="/hello/">hello</a>`) {
		t.Errorf("the status page does not link the app: %.3000s", page)
	}
	metrics := get("POST", api+"/debug/metrics/prometheus")
	for _, want := range []string{
		`cairn_module_max_run_seconds{module="hello"} 1`,
		`cairn_module_calls_total{module="hello"} 2`, // its load and the one request
		`cairn_module_cap_stops_total{cap="time",module="hello"} 0`,
		`cairn_module_cap_stops_total{cap="memory",module="hello"} 0`,
		`cairn_module_max_memory_bytes{module="hello"} `,
		`cairn_module_peak_call_memory_bytes{module="hello"} `,
	} {
		if !strings.HasSuffix(want, " ") {
			want += "\n" // the whole value
		}
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(metrics, `module="http_status"`) {
		t.Error("a built-in module (no Lua caps) reports module metrics")
	}
}
