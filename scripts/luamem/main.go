// Command luamem measures what capped Lua handlers cost the process:
// resident memory before, during (peak) and after N runs of a handler
// that allocates until its memory cap stops it. Run by hand (not in CI),
// holding the build lock on a shared machine:
//
//	flock /tmp/cairn-build.lock go run ./scripts/luamem [-runs 100] [-budget 512]
//
// The module host runs in this process, as in the daemon, so the
// process's RSS is the daemon's.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"cairn/internal/daemon"
	"cairn/modules"
	"cairn/node"
	"cairn/node/config"
	"cairn/scripts/internal/benchutil"
)

const grow = `module:depends("http")
local hoard = {}
module:provides("http", { route = {
	["GET /alloc"] = function()
		local i = 0
		while true do i = i + 1; hoard[i] = string.rep("x", 1048576) .. i end
	end,
	["GET /ok"] = function() return "ok " .. #hoard end,
} })
`

func rss() int64 { return daemon.ProcStatus(os.Getpid(), "VmRSS") >> 10 } // MiB

func main() {
	runs := flag.Int("runs", 100, "capped handler runs")
	budget := flag.Int("budget", 512, "Budget.MemoryMiB the Lua cap is derived from")
	flag.Parse()
	dir, err := os.MkdirTemp("", "cairn-luamem-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if _, err := node.Init(dir, "test"); err != nil {
		log.Fatal(err)
	}
	n, err := node.New(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer n.Close()
	if err := os.MkdirAll(filepath.Join(dir, "modules"), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modules", "mod_http_grow.lua"), []byte(grow), 0o644); err != nil {
		log.Fatal(err)
	}
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_grow"}
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	cfg.Lua.MaxRunTime = "5s"
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: dir, MemoryMiB: *budget, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	u := h.Listeners()[0].URL() + "/grow/"
	get := func(p string) (int, string) {
		resp, err := http.Get(u + p)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	get("ok")
	runtime.GC()
	before := rss()
	s := benchutil.Sample(os.Getpid(), 5*time.Millisecond, "VmRSS")
	start := time.Now()
	for i := 0; i < *runs; i++ {
		if code, _ := get("alloc"); code != 500 {
			log.Fatalf("run %d: status %d, want 500 (stopped at the cap)", i, code)
		}
	}
	took := time.Since(start)
	peak := s.Done()[0] >> 10
	after := rss()
	time.Sleep(5 * time.Second)
	idle := rss()
	_, ok := get("ok")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("Lua cap %d MiB (budget %d MiB), %d capped runs in %v (%v each)\n", modules.LuaMemoryFor(*budget)>>20, *budget, *runs, took.Round(time.Millisecond), (took / time.Duration(*runs)).Round(time.Millisecond))
	fmt.Printf("RSS before %d MiB, peak during %d MiB, right after %d MiB, after 5 s idle %d MiB\n", before, peak, after, idle)
	fmt.Printf("heap in use %d MiB, released to the OS %d MiB; the module answers %q\n", ms.HeapInuse>>20, ms.HeapReleased>>20, ok)
}
