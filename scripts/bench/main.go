package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"
)

func main() {
	daemon.EnterNetNS()
	sizeMiB := flag.Int("size", 256, "file size in MiB")
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	arm := flag.String("arm64", "bin/cairn-linux-arm64", "cairn linux/arm64 binary (size figure)")
	kubo := flag.String("kubo", filepath.Join(daemon.KuboDir(), "ipfs"), "Kubo "+daemon.KuboVersion+" binary (scripts/bench-kubo.sh)")
	runs := flag.Int("runs", 3, "runs of every figure (the table shows medians)")
	wrkSecs := flag.Int("wrk", 3, "seconds of wrk per run")
	cairnEnv := flag.String("cairn-env", "", "extra environment of the cairn daemon, e.g. GOMAXPROCS=1 (comma-separated)")
	only := flag.String("only", "", "run only these phases (comma-separated: onlyhash, add, read, gateway, rps, flash; read, gateway and flash imply add), e.g. while tuning")
	flag.Parse()
	if *only != "" {
		phases = map[string]bool{}
		for _, p := range strings.Split(*only, ",") {
			switch p {
			case "onlyhash", "add", "rps":
			case "read", "gateway", "flash":
				phases["add"] = true
			default:
				fmt.Fprintf(os.Stderr, "bench: -only: unknown phase %q (onlyhash, add, read, gateway, rps, flash)\n", p)
				os.Exit(2)
			}
			phases[p] = true
		}
	}
	if *cairnEnv != "" {
		extraEnv = strings.Split(*cairnEnv, ",")
	}
	if err := run(*bin, *arm, *kubo, int64(*sizeMiB)<<20, *runs, *wrkSecs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// phases are the phases -only selected; nil runs all of them.
var phases map[string]bool

func want(phase string) bool { return phases == nil || phases[phase] }

// extraEnv is added to the cairn daemon's environment (-cairn-env).
var extraEnv []string

// measured is what one daemon run gives.
type measured struct {
	idle, onlyHash, add, cat, export, get, peak, rps, rpsCPU, addWrite float64
	// cairn only: flash wear of GC and of reusing the freed pages.
	gcMs, gcWrite, readdWrite, growth float64
	gw                                benchutil.GatewayRun
}

func run(bin, arm, kubo string, size int64, runs, wrkSecs int) error {
	for _, b := range []string{bin, kubo} {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("%s: %w (make bench builds cairn and installs Kubo)", b, err)
		}
	}
	work, err := os.MkdirTemp("", "cairn-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	input := filepath.Join(work, "input.bin")
	if _, err := benchutil.WriteRandom(input, size); err != nil {
		return err
	}
	mib := size >> 20
	figs := []*benchutil.Figure{
		{Name: fmt.Sprintf("add %d MiB, only-hash (CPU path, no disk)", mib), Unit: "MiB/s", Goal: 2},
		{Name: fmt.Sprintf("add %d MiB, stored and pinned", mib), Unit: "MiB/s", Goal: 1},
		{Name: fmt.Sprintf("cat %d MiB", mib), Unit: "MiB/s", Goal: 4},
		{Name: fmt.Sprintf("dag/export %d MiB", mib), Unit: "MiB/s", Goal: 6},
		{Name: fmt.Sprintf("get archive+gzip %d MiB", mib), Unit: "MiB/s", Goal: 10, Keep: true},
		{Name: "peak RssAnon over add/cat/export/get", Unit: "MiB", Goal: 1.0 / 3, Lower: true},
		{Name: "POST /api/v0/version, 16 conns (wrk)", Unit: "req/s", Goal: 3},
		{Name: "same: daemon CPU per request", Unit: "µs", Lower: true, Note: "utime+stime over the run; wrk shares the cores, so the throughput ratio is bounded by wrk's own CPU"},
		{Name: "idle RssAnon after start", Unit: "MiB", Goal: 1.0 / 3, Lower: true},
		{Name: "disk bytes written per byte added", Unit: "B/B", Note: "Kubo's flatfs does not fsync"},
		{Name: "cairn: unpin + repo/gc of the add", Unit: "ms"},
		{Name: "cairn: bytes written per byte freed by GC", Unit: "B/B"},
		{Name: "cairn: re-add after GC, bytes per byte", Unit: "B/B"},
		{Name: "cairn: blocks.db growth on that re-add", Unit: "MiB", Note: "0: freed pages reused"},
	}
	gwFigs := benchutil.GatewayLines(mib)
	sync := &benchutil.Figure{Name: "disk fdatasync write rate (dd conv=fdatasync)", Unit: "MiB/s"}
	direct := &benchutil.Figure{Name: "disk write rate, O_DIRECT (no page cache)", Unit: "MiB/s"}
	for r := 0; r < runs; r++ {
		s, err := benchutil.SyncWriteSpeed(work, size)
		if err != nil {
			return err
		}
		sync.Cairn = append(sync.Cairn, s)
		// Informative only: a file system without O_DIRECT (tmpfs) leaves
		// the line out.
		if s, err := benchutil.DirectWriteSpeed(work, size); err == nil {
			direct.Cairn = append(direct.Cairn, s)
		} else {
			fmt.Fprintln(os.Stderr, "bench: O_DIRECT write rate:", err)
		}
		for _, impl := range []string{"cairn", "kubo"} {
			repo := filepath.Join(work, fmt.Sprintf("%s-%d", impl, r))
			var d *daemon.Daemon
			var gw string
			if impl == "cairn" {
				o := daemon.Options{Offline: true, Env: extraEnv}
				if gw, err = benchutil.GatewayConfig(&o); err == nil {
					d, err = daemon.StartCairn(bin, repo, o)
				}
			} else {
				o := daemon.Options{Offline: true}
				if gw, err = benchutil.GatewayConfig(&o); err == nil {
					d, err = daemon.StartKubo(kubo, repo, o)
				}
			}
			if err != nil {
				return err
			}
			m, err := measure(d, gw, input, size, wrkSecs, work)
			d.Stop()
			os.RemoveAll(repo)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", impl, r+1, err)
			}
			vals := []float64{m.onlyHash, m.add, m.cat, m.export, m.get, m.peak, m.rps, m.rpsCPU, m.idle, m.addWrite,
				m.gcMs, m.gcWrite, m.readdWrite, m.growth}
			for i, v := range vals {
				if impl == "cairn" {
					figs[i].Cairn = append(figs[i].Cairn, v)
				} else if i < 10 {
					figs[i].Kubo = append(figs[i].Kubo, v)
				}
			}
			m.gw.AddTo(gwFigs, impl)
			fmt.Fprintf(os.Stderr, "run %d %s: %+v\n", r+1, impl, m)
		}
	}
	figs = append(figs, gwFigs...)
	figs = append(figs, sync)
	// A stored add does all an only-hash add does and stores the blocks
	// besides, so the only-hash add is the most any storage could reach.
	rate := benchutil.Median(sync.Cairn)
	figs[1].Note = fmt.Sprintf("%.2fx the fdatasync rate, goal >= 0.9x", benchutil.Median(figs[1].Cairn)/rate)
	if oh := benchutil.Median(figs[0].Cairn); oh != 0 {
		figs[1].Note += fmt.Sprintf("; the only-hash add, its ceiling: %.2fx", oh/rate)
	}
	if len(direct.Cairn) > 0 {
		figs = append(figs, direct)
	}
	figs = append(figs, binarySize(arm, filepath.Join(daemon.KuboDir(), "linux_arm64", "ipfs")))
	if phases != nil {
		// Leave out the figures of phases that did not run.
		kept := figs[:0]
		for _, f := range figs {
			if benchutil.Median(f.Cairn) != 0 || benchutil.Median(f.Kubo) != 0 {
				kept = append(kept, f)
			}
		}
		figs = kept
	}
	benchutil.PrintTable(os.Stdout, fmt.Sprintf("cairn vs Kubo %s, offline on loopback, %d MiB random file, medians of %d runs (load average %s)",
		daemon.KuboVersion, mib, runs, benchutil.LoadAvg()), figs)
	return nil
}

func binarySize(cairn, kubo string) *benchutil.Figure {
	f := &benchutil.Figure{Name: "arm64 static binary", Unit: "MB", Goal: 0.5, Lower: true}
	if fi, err := os.Stat(cairn); err == nil {
		f.Cairn = []float64{float64(fi.Size()) / 1e6}
	}
	if fi, err := os.Stat(kubo); err == nil {
		f.Kubo = []float64{float64(fi.Size()) / 1e6}
	} else {
		f.Kubo = []float64{58.3}
		f.Note = "Kubo: the release binary's size; scripts/bench-kubo.sh builds it for arm64"
	}
	return f
}

// measure runs every phase against one daemon.
func measure(d *daemon.Daemon, gw, input string, size int64, wrkSecs int, work string) (measured, error) {
	var m measured
	time.Sleep(500 * time.Millisecond)
	pid := d.Pid()
	m.idle = float64(daemon.ProcStatus(pid, "RssAnon")) / 1024
	s := benchutil.Sample(pid, 50*time.Millisecond, "RssAnon")
	defer s.Done()
	timed := func(dst *float64, fn func() error) error {
		t0 := time.Now()
		if err := fn(); err != nil {
			return err
		}
		*dst = benchutil.MiBs(size, time.Since(t0))
		return nil
	}
	if want("onlyhash") {
		if err := timed(&m.onlyHash, func() error {
			_, err := benchutil.AddFile(d.URL, "only-hash=true&quieter=true", input)
			return err
		}); err != nil {
			return m, err
		}
	}
	var root string
	if want("add") {
		w0 := ioWrite(pid)
		if err := timed(&m.add, func() error {
			var err error
			root, err = benchutil.AddFile(d.URL, "pin=true&quieter=true", input)
			return err
		}); err != nil {
			return m, err
		}
		m.addWrite = float64(ioWrite(pid)-w0) / float64(size)
	}
	if err := readPhases(d, &m, root, size, timed); err != nil {
		return m, err
	}
	m.peak = float64(s.Done()[0]) / 1024
	if want("gateway") {
		var err error
		if m.gw, err = benchutil.RunGateway(d, gw, root, size); err != nil {
			return m, err
		}
	}
	if want("rps") {
		cpu0 := benchutil.CPUTime(d.Pid())
		rps, err := benchutil.Wrk(d.URL, "/api/v0/version", 16, time.Duration(wrkSecs)*time.Second, work)
		if err != nil {
			return m, err
		}
		m.rps = rps
		if rps > 0 {
			m.rpsCPU = float64((benchutil.CPUTime(d.Pid()) - cpu0).Microseconds()) / (rps * float64(wrkSecs))
		}
	}
	if d.Name == "cairn" && want("flash") {
		return m, flash(d, &m, root, input, size)
	}
	return m, nil
}

// readPhases times cat, dag/export and get of root.
func readPhases(d *daemon.Daemon, m *measured, root string, size int64, timed func(*float64, func() error) error) error {
	if !want("read") {
		return nil
	}
	check := func(n int64, err error) error {
		if err == nil && n < size {
			err = fmt.Errorf("got %d bytes, want at least %d", n, size)
		}
		return err
	}
	if err := timed(&m.cat, func() error { return check(benchutil.Stream(d.URL, "/api/v0/cat?arg="+root, io.Discard)) }); err != nil {
		return err
	}
	if err := timed(&m.export, func() error {
		return check(benchutil.Stream(d.URL, "/api/v0/dag/export?arg="+root, io.Discard))
	}); err != nil {
		return err
	}
	// gzip of random bytes is about their size: check for most of it.
	return timed(&m.get, func() error {
		n, err := benchutil.Stream(d.URL, "/api/v0/get?arg="+root+"&archive=true&compress=true", io.Discard)
		return check(n+size/100, err)
	})
}

// flash measures what GC and the reuse of freed pages write: unpin and
// collect the add, then add the same bytes again.
func flash(d *daemon.Daemon, m *measured, root, input string, size int64) error {
	pid := d.Pid()
	db := filepath.Join(d.Repo, "blocks.db")
	if err := benchutil.Post(d.URL, "/api/v0/pin/rm?arg="+root); err != nil {
		return err
	}
	w0, t0 := ioWrite(pid), time.Now()
	if err := benchutil.Post(d.URL, "/api/v0/repo/gc"); err != nil {
		return err
	}
	m.gcMs = float64(time.Since(t0).Milliseconds())
	w1 := ioWrite(pid)
	m.gcWrite = float64(w1-w0) / float64(size)
	before := fileSize(db)
	if _, err := benchutil.AddFile(d.URL, "pin=true&quieter=true", input); err != nil {
		return err
	}
	m.readdWrite = float64(ioWrite(pid)-w1) / float64(size)
	m.growth = float64(fileSize(db)-before) / (1 << 20)
	return nil
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// ioWrite is write_bytes of /proc/<pid>/io: bytes the process caused to be
// written to storage.
func ioWrite(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "write_bytes: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
