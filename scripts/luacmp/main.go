// Command luacmp compares gopher-lua (the Lua 5.1 cairn's modules run
// on) with the reference Lua 5.4 interpreter (the Lua Prosody 0.12 and
// 13 run on) on the same snippets: CPU time (user + system, which other
// processes on a shared machine disturb less than wall time) and peak
// resident memory of the process, three runs each. Each run is a fresh
// process: `lua5.4 snippet.lua`, or this binary re-executed to run the
// snippet in a plain gopher-lua state with the standard libraries
// (cairn's sandbox and caps add their own cost on top, see
// docs/modules.md). Every snippet prints a result; a run whose output
// differs from Lua 5.4's is reported. Peak RSS comes from GNU time. Run by hand, not in CI (Debian's lua5.4 and time packages):
//
//	flock /tmp/cairn-build.lock go run ./scripts/luacmp [-runs 3] [-lua lua5.4]
package main

import (
	"bytes"
	"embed"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	cairnlua "cairn/modules/lua"

	lua "github.com/yuin/gopher-lua"
)

//go:embed snippets/*.lua
var snippets embed.FS

type run struct {
	cpu, wall time.Duration
	rssKiB    int64
	out       string
}

func main() {
	runs := flag.Int("runs", 3, "runs per snippet and interpreter")
	luaBin := flag.String("lua", "lua5.4", "the Lua 5.4 interpreter")
	gopher := flag.String("gopher", "", "internal: run this snippet in gopher-lua and exit")
	plain := flag.Bool("plain", false, "with -gopher: a bare gopher-lua state, not cairn's")
	flag.Parse()
	if *gopher != "" {
		runGopher(*gopher, *plain)
		return
	}
	if _, err := exec.LookPath(*luaBin); err != nil {
		log.Fatalf("%s not found (apt-get install lua5.4): %v", *luaBin, err)
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		log.Fatalf("GNU time is needed (apt-get install time): %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	names, _ := fs.Glob(snippets, "snippets/*.lua")
	sort.Strings(names)
	dir, err := os.MkdirTemp("", "luacmp")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	fmt.Printf("%d runs each; CPU = user+system seconds (median, then all runs); RSS = peak resident MiB (median)\n\n", *runs)
	fmt.Println("| snippet | Lua 5.4 CPU s | cairn's gopher-lua CPU s | ratio | Lua 5.4 RSS MiB | cairn's gopher-lua RSS MiB |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, name := range names {
		src, _ := snippets.ReadFile(name)
		file := dir + "/" + path.Base(name)
		if err := os.WriteFile(file, src, 0o644); err != nil {
			log.Fatal(err)
		}
		var ref, gl []run
		for i := 0; i < *runs; i++ { // interleaved, so both see the same load
			ref = append(ref, measure(dir+"/time", *luaBin, file))
			gl = append(gl, measure(dir+"/time", self, "-gopher", file))
		}
		for i := range gl {
			if gl[i].out != ref[0].out {
				fmt.Fprintf(os.Stderr, "%s: outputs differ:\n  lua5.4:     %q\n  gopher-lua: %q\n", name, ref[0].out, gl[i].out)
				break
			}
		}
		rc, gc := medianCPU(ref), medianCPU(gl)
		fmt.Printf("| %s | %.3f (%s) | %.3f (%s) | %.1fx | %.1f | %.1f |\n", strings.TrimSuffix(path.Base(name), ".lua"),
			rc.Seconds(), all(ref), gc.Seconds(), all(gl), gc.Seconds()/max(rc.Seconds(), 0.001), medianRSS(ref), medianRSS(gl))
	}
}

// measure runs args under GNU time, whose fork()ed child starts with a
// small address space: the peak RSS it reports is the interpreter's,
// not this (larger) process's, which a child of Go's vfork-style exec
// would be charged with.
func measure(timeOut string, args ...string) run {
	var out bytes.Buffer
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%e %U %S %M", "-o", timeOut}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log.Fatalf("%v: %v\n%s", args, err, out.String())
	}
	b, err := os.ReadFile(timeOut)
	if err != nil {
		log.Fatal(err)
	}
	var wall, user, sys float64
	var rss int64
	if _, err := fmt.Sscan(string(b), &wall, &user, &sys, &rss); err != nil {
		log.Fatalf("GNU time said %q: %v", b, err)
	}
	// CPU time in microseconds: wait4's usage of time, which includes
	// the interpreter it waited for (time's own is a few ms at most).
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return run{cpu: cpu, wall: time.Duration(wall * float64(time.Second)), rssKiB: rss, out: out.String()}
}

func medianCPU(rs []run) time.Duration {
	v := make([]time.Duration, len(rs))
	for i, r := range rs {
		v[i] = r.cpu
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v[len(v)/2]
}

func medianRSS(rs []run) float64 {
	v := make([]int64, len(rs))
	for i, r := range rs {
		v[i] = r.rssKiB
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return float64(v[len(v)/2]) / 1024
}

func all(rs []run) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.3f", r.cpu.Seconds())
	}
	return strings.Join(parts, " ")
}

// runGopher runs a snippet as cairn runs module code (its compiler,
// bounded builtins and caps: 10 minutes and 1 GiB, so that they only
// add their checks), or, with plain, in a bare gopher-lua state.
func runGopher(file string, plain bool) {
	src, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	if plain {
		L := lua.NewState(lua.Options{CallStackSize: 200, RegistrySize: 1024 * 4, RegistryMaxSize: 1024 * 256, RegistryGrowStep: 1024})
		defer L.Close()
		err = L.DoString(string(src))
	} else {
		err = cairnlua.RunSnippet(string(src), path.Base(file), os.Stdout, 10*time.Minute, 1<<30)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
