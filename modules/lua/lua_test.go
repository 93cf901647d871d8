package lua_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/modules/lua"
	"cairn/modules/modapi"
	"cairn/node/config"

	"github.com/prometheus/client_golang/prometheus"
)

// startHost runs the module host on a fresh node with the Lua files of
// testdata/ and the given enabled modules.
func startHost(t *testing.T, enabled []string, edit func(*config.ModulesConfig)) (*modules.Host, string) {
	t.Helper()
	return startHostLog(t, enabled, slog.New(slog.DiscardHandler), edit)
}

// startHostLog is startHost with the host's logger.
func startHostLog(t *testing.T, enabled []string, log *slog.Logger, edit func(*config.ModulesConfig)) (*modules.Host, string) {
	t.Helper()
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.Enabled = enabled
	cfg.Dir, _ = filepath.Abs("testdata")
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	if edit != nil {
		edit(&cfg)
	}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, h.Listeners()[0].URL()
}

var client = &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type result struct {
	code int
	body string
	h    http.Header
}

func req(t *testing.T, method, url, body string, hdr ...string) result {
	t.Helper()
	r, _ := http.NewRequest(method, url, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, string(b), resp.Header}
}

func TestLua_Returns_Conventions(t *testing.T) {
	_, u := startHost(t, []string{"http_conv"}, func(c *config.ModulesConfig) {
		c.Options = map[string]map[string]any{"http_conv": {"greeting": "hi there"}}
	})
	for _, tc := range []struct {
		method, path string
		code         int
		body         string // exact unless prefixed by "~"
		ctype        string
	}{
		{"GET", "/conv", 200, "base", ""},
		{"GET", "/conv/string", 200, "a string", ""},
		{"GET", "/conv/404", 404, "~<title>404 Not Found</title>", "text/html; charset=utf-8"},
		{"GET", "/conv/503", 503, "~That&#39;s all I know.", "text/html; charset=utf-8"},
		{"GET", "/conv/201", 201, "made", ""},
		{"GET", "/conv/send", 202, "sent", "text/plain"},
		{"GET", "/conv/table", 418, "teapot", "text/plain"},
		{"GET", "/conv/errobj", 409, "~conflict here", "text/html; charset=utf-8"},
		{"GET", "/conv/nil", 404, "~Not Found", "text/html; charset=utf-8"},
		{"GET", "/conv/false", 200, "", ""},
		{"GET", "/conv/wild/a/b%20c", 200, "wild:a/b c", ""},
		{"GET", "/conv/wild/", 200, "wild:", ""},
		{"GET", "/conv/wild", 301, "", ""},
		{"GET", "/conv/const", 200, "constant", ""},
		{"POST", "/conv/echo", 200, "a b|application/x-www-form-urlencoded|2", ""},
		{"GET", "/conv/req?x=1", 200, "GET /conv/req /conv/req x=1 nil 127.0.0.1", ""},
		{"GET", "/conv/sandbox", 200, "nil nil nil nil nil nil number function", ""},
		{"GET", "/conv/require", 500, "~500 Internal Server Error", "text/html; charset=utf-8"},
		{"GET", "/conv/write", 200, "~refused: the node is read-only", ""},
		{"GET", "/conv/option", 200, "hi there", ""},
		{"HEAD", "/conv/string", 200, "", ""},
	} {
		var hdr []string
		body := ""
		if tc.method == "POST" {
			body, hdr = "name=a+b&other=%21", []string{"Content-Type", "application/x-www-form-urlencoded"}
		}
		r := req(t, tc.method, u+tc.path, body, hdr...)
		ok := r.code == tc.code && r.h.Get("Content-Type") == tc.ctype
		if want, found := strings.CutPrefix(tc.body, "~"); found {
			ok = ok && strings.Contains(r.body, want)
		} else {
			ok = ok && r.body == tc.body
		}
		if !ok {
			t.Errorf("%s %s: got %d %q type %q, want %d %q type %q", tc.method, tc.path, r.code, r.body, r.h.Get("Content-Type"), tc.code, tc.body, tc.ctype)
		}
	}
	if r := req(t, "GET", u+"/conv/string", ""); r.h.Get("X-Set") != "1" {
		t.Errorf("header set before returning a string was lost: %v", r.h)
	}
	if r := req(t, "HEAD", u+"/conv/string", ""); r.h.Get("Content-Length") != "8" {
		t.Errorf("HEAD Content-Length: %v", r.h)
	}
}

func TestLua_Limits_Contained(t *testing.T) {
	h, u := startHost(t, []string{"http_limits", "http_conv", "broken_syntax", "broken_loop", "broken_route", "missing_module"}, func(c *config.ModulesConfig) {
		c.Lua.MaxRunTime = "2s"
		c.Lua.MaxMemory = "16MiB" // reached well inside the time cap, even under -race
	})
	failed := h.Failed()
	for _, name := range []string{"broken_syntax", "broken_loop", "broken_route", "missing_module"} {
		if failed[name] == nil {
			t.Errorf("module %s: want a load failure, got none (failed: %v)", name, failed)
		}
	}
	if !strings.Contains(failed["broken_loop"].Error(), "run time limit") {
		t.Errorf("broken_loop: %v", failed["broken_loop"])
	}
	var ms runtime.MemStats
	for _, tc := range []struct {
		path    string
		maxTime time.Duration
	}{
		{"/limits/loop", 3 * time.Second},
		{"/limits/error", time.Second},
		{"/limits/alloc", 3 * time.Second}, // the memory cap stops it: see the hoard check
		{"/limits/rep", time.Second},
		{"/limits/concat", 5 * time.Second},
		{"/limits/recurse", 2 * time.Second},
		{"/limits/coroutine", 3 * time.Second},
	} {
		for round := 0; round < 2; round++ {
			start := time.Now()
			r := req(t, "GET", u+tc.path, "")
			took := time.Since(start)
			runtime.ReadMemStats(&ms)
			t.Logf("%s (round %d): %d after %v, heap in use %d MiB", tc.path, round, r.code, took.Round(time.Millisecond), ms.HeapInuse>>20)
			if r.code != 500 || !strings.Contains(r.body, "500 Internal Server Error") {
				t.Errorf("%s: got %d %.80q, want the 500 page", tc.path, r.code, r.body)
			}
			if took > tc.maxTime {
				t.Errorf("%s: took %v, want under %v", tc.path, took, tc.maxTime)
			}
			if tc.path == "/limits/alloc" {
				// The memory cap, not the time cap, stopped it: only a
				// memory stop throws the state (and its hoard) away.
				if r := req(t, "GET", u+"/limits/count", ""); r.code != 200 || r.body != "0" {
					t.Errorf("after the memory stop (round %d): got %d %q, want a fresh state with an empty hoard", round, r.code, r.body)
				}
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use after GC: %d MiB", ms.HeapInuse>>20)
	if ms.HeapInuse > 200<<20 {
		t.Errorf("heap still holds %d MiB after the runaway modules", ms.HeapInuse>>20)
	}
	// The other module and the host are alive.
	if r := req(t, "GET", u+"/conv/string", ""); r.code != 200 || r.body != "a string" {
		t.Errorf("healthy module after the runaways: %d %q", r.code, r.body)
	}
	checkUsage(t, h)
}

// checkUsage checks what TestLua_Limits_Contained's calls left in the
// modules' usage and in their Prometheus metrics.
func checkUsage(t *testing.T, h *modules.Host) {
	t.Helper()
	got := map[string]modapi.Usage{}
	for _, mu := range h.Usage() {
		got[mu.Module] = mu.Usage
	}
	lim, conv := got["http_limits"], got["http_conv"]
	t.Logf("http_limits: %+v; http_conv: %+v", lim, conv)
	if lim.MaxRunTime != 2*time.Second || lim.MaxMemory != 16<<20 {
		t.Errorf("http_limits caps: %v, %d; want 2s and 16 MiB", lim.MaxRunTime, lim.MaxMemory)
	}
	// The load, 14 handler calls and 2 of /limits/count.
	if lim.Calls < 17 || lim.TimeStops < 2 || lim.MemStops < 2 || lim.CallTime < time.Second || lim.PeakMemory <= 0 {
		t.Errorf("http_limits usage: %+v; want at least 17 calls, 2 time stops (loop), 2 memory stops (alloc), a peak", lim)
	}
	if conv.Calls < 2 || conv.TimeStops != 0 || conv.MemStops != 0 {
		t.Errorf("http_conv usage: %+v; want its load and a call, no stop", conv)
	}
	if _, ok := got["broken_loop"]; ok {
		t.Error("a module that failed to load reports usage")
	}
	var m modules.Metrics
	reg := prometheus.NewRegistry()
	reg.MustRegister(&m)
	if mfs, err := reg.Gather(); err != nil || len(mfs) != 0 {
		t.Fatalf("before Attach: %d families, %v; want none", len(mfs), err)
	}
	m.Attach(h)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	stops := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "cairn_module_cap_stops_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			var mod, cp string
			for _, l := range s.GetLabel() {
				switch l.GetName() {
				case "module":
					mod = l.GetValue()
				case "cap":
					cp = l.GetValue()
				}
			}
			stops[mod+"/"+cp] = s.GetCounter().GetValue()
		}
	}
	if stops["http_limits/time"] != float64(lim.TimeStops) || stops["http_limits/memory"] < 2 || stops["http_conv/time"] != 0 {
		t.Errorf("cairn_module_cap_stops_total: %v; want http_limits' stops (%d time)", stops, lim.TimeStops)
	}
	if len(mfs) != 6 {
		t.Errorf("%d metric families, want 6", len(mfs))
	}
}

func TestLua_NodeAPI_WriteAllowed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.txt"), []byte("static"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, u := startHost(t, []string{"http_writer", "pastebin"}, func(c *config.ModulesConfig) {
		c.AllowWrite = []string{"http_writer"}
		c.Options = map[string]map[string]any{"http_writer": {"dir": dir}}
	})
	r := req(t, "POST", u+"/writer/add", "hello from lua\n")
	if r.code != 200 || r.body != "QmVpMekySiV9XSMp6t8B9ncu6spfixVWJ6PsymrVTa5FAz hello from lua\n 15" {
		t.Errorf("add/pin/cat/stat: got %d %q", r.code, r.body)
	}
	for _, p := range []string{"/writer/static/s.txt", "/writer/wrapped/s.txt"} {
		if r := req(t, "GET", u+p, ""); r.code != 200 || r.body != "static" || r.h.Get("Etag") == "" {
			t.Errorf("%s: got %d %q", p, r.code, r.body)
		}
	}
	if r := req(t, "GET", u+"/writer/static/..%2F..%2Fetc/passwd", ""); r.code != 400 {
		t.Errorf("traversal through a Lua serve: %d", r.code)
	}
	if r := req(t, "GET", u+"/pastebin/", ""); r.code != 200 || r.body != "paste" {
		t.Errorf("provider from globals: got %d %q", r.code, r.body)
	}
}

// BenchmarkLua_Handler measures one keep-alive GET answered by a Lua
// handler (event tables, the call under limits, the result).
func BenchmarkLua_Handler(b *testing.B) {
	n := testutil.MustOpenNode(b)
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_conv"}
	cfg.Dir, _ = filepath.Abs("testdata")
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	u := h.Listeners()[0].URL() + "/conv/string"
	for b.Loop() {
		resp, err := client.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// Ensure module:depends takes names, not paths: a name that climbs out
// of Modules.Dir is refused and the file it points at never runs.
func TestLua_Depends_NameIsNotAPath(t *testing.T) {
	dir := t.TempDir()
	evil := `module:depends("http") module:provides("http", {route = {["GET /"] = function() return "pwned" end}})`
	if err := os.WriteFile(filepath.Join(dir, "evil.lua"), []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	mods, _ := filepath.Abs("testdata")
	// mod_<name>.lua under testdata/ names <dir>/evil.lua.
	name := "/.." + strings.Repeat("/..", strings.Count(mods, "/")) + filepath.Join(dir, "evil")
	h, u := startHost(t, []string{"http_dep"}, func(c *config.ModulesConfig) {
		c.Options = map[string]map[string]any{"http_dep": {"dep": name}}
	})
	r := req(t, "GET", u+"/dep/", "")
	if r.code != 200 || !strings.HasPrefix(r.body, "false ") || !strings.Contains(r.body, "invalid module name") {
		t.Errorf("depends(%q): got %d %q, want a refusal", name, r.code, r.body)
	}
	for _, a := range h.Loaded() {
		if strings.Contains(a, "evil") {
			t.Errorf("loaded %q", a)
		}
	}
	if r := req(t, "GET", u+"/evil/", ""); r.code != 404 {
		t.Errorf("the file outside Modules.Dir was loaded: %d %q", r.code, r.body)
	}
	for _, bad := range []string{"../x", "a/b", "a.b", "", "x y", "mod\x00"} {
		if err := h.Load(bad); err == nil || !strings.Contains(err.Error(), "invalid module name") {
			t.Errorf("Load(%q): %v", bad, err)
		}
	}
}

// Ensure work done inside Go builtins stays within the caps:
// a gsub with a 256 MiB result, a backtracking pattern, a lazy pattern
// over 1 MiB, table.concat of 64 x 8 MiB, an endless tail call (alone and
// under pcall), a format width of a billion, %s of 64 x 8 MiB, upper of
// 20 MiB 64 times and rep(2^62) each get the 500 page within the time cap
// and with the heap's peak growth within a few times the memory cap.
func TestLua_Builtins_WithinCaps(t *testing.T) {
	_, u := startHost(t, []string{"http_builtins"}, func(c *config.ModulesConfig) {
		c.Lua.MaxRunTime = "1s"
		c.Lua.MaxMemory = "32MiB"
	})
	if r := req(t, "GET", u+"/builtins/ok", ""); r.code != 200 || r.body != "11 a;b;;c \"a\\\"\\\n\"   3.1|z  |ff" {
		t.Errorf("ordinary use: %d %q", r.code, r.body)
	}
	want := `a12|<table,string>|<string,table>|1<table,number>|xf|p-q1.5|nil|<string>: line 1: nested more than 200 levels deep|false`
	if r := req(t, "GET", u+"/builtins/ok2", ""); r.code != 200 || !strings.HasPrefix(r.body, want) {
		t.Errorf("concatenation and loadstring: %d %q, want %q...", r.code, r.body, want)
	}
	for _, path := range []string{"/gsub", "/backtrack", "/lazy", "/concat", "/tail", "/tailpcall", "/format", "/formats", "/upper", "/rep",
		"/concatop", "/concatloop", "/loadnest", "/loadfuncs", "/loadchain", "/loadreader"} {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base, peak := ms.HeapAlloc, ms.HeapAlloc
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var s runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				runtime.ReadMemStats(&s)
				peak = max(peak, s.HeapAlloc)
			}
		}()
		start := time.Now()
		r := req(t, "GET", u+"/builtins"+path, "")
		took := time.Since(start)
		close(stop)
		<-sampled
		grown := (int64(peak) - int64(base)) >> 20
		t.Logf("%s: %d after %v, heap peak +%d MiB", path, r.code, took.Round(time.Millisecond), grown)
		if r.code != 500 {
			t.Errorf("%s: got %d %.100q, want the 500 page", path, r.code, r.body)
		}
		// The cap stopped it: a runaway the cap missed runs on until
		// the client gives up. The margin is for the race detector on a
		// loaded machine (2.06 s was seen there), not a speed bound.
		if took > 10*time.Second {
			t.Errorf("%s: took %v with a 1s cap", path, took)
		}
		if grown > 4*32 {
			t.Errorf("%s: heap grew by %d MiB with a 32 MiB cap", path, grown)
		}
	}
	if r := req(t, "GET", u+"/builtins/ok", ""); r.code != 200 {
		t.Errorf("after the runaways: %d %q", r.code, r.body)
	}
}

// RunSnippet (scripts/luacmp) runs a chunk as module code runs: print
// goes to the writer, the caps hold.
func TestLua_RunSnippet(t *testing.T) {
	var out strings.Builder
	if err := lua.RunSnippet(`local t = {} for w in ("a b c"):gmatch("%a") do t[#t+1] = w end print(table.concat(t, ","), 1 .. 2)`, "s.lua", &out, time.Second, 32<<20); err != nil || out.String() != "a,b,c\t12\n" {
		t.Errorf("snippet: %v %q", err, out.String())
	}
	if err := lua.RunSnippet(`while true do end`, "loop.lua", &out, 100*time.Millisecond, 32<<20); !errors.Is(err, lua.ErrTimeLimit) {
		t.Errorf("endless loop: %v", err)
	}
}
