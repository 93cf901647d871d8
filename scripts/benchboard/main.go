package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"
)

func main() {
	daemon.EnterNetNS()
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	kubo := flag.String("kubo", filepath.Join(daemon.KuboDir(), "ipfs"), "Kubo "+daemon.KuboVersion+" binary (scripts/bench-kubo.sh)")
	kuboProfile := flag.String("kubo-profile", "lowpower", "Kubo profile besides test")
	board := flag.String("board", "pi-zero-2w", "cairn board profile; its budget sizes the cgroup")
	sizeMiB := flag.Int64("size", 1024, "file size in MiB")
	runs := flag.Int("runs", 3, "runs (the table shows medians)")
	pins := flag.Int("pins", 0, "also store this many pinned blocks with block put --pin and list them")
	only := flag.String("only", "", "run only this daemon (cairn or kubo), e.g. while tuning")
	dir := flag.String("dir", "", "work directory (default: a new one under $TMPDIR)")
	flag.Parse()
	if err := run(*bin, *kubo, *kuboProfile, *board, *sizeMiB<<20, *runs, *pins, *only, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "benchboard:", err)
		os.Exit(1)
	}
}

// measured is what one daemon run in the cgroup gives.
type measured struct {
	add, cat, peak, idle, catFaults, cgFaults, cgPeak float64
	notes                                             []string
	gw                                                benchutil.GatewayRun
}

func run(bin, kubo, kuboProfile, board string, size int64, runs, pins int, only, dir string) error {
	impls := []string{"cairn", "kubo"}
	if only != "" {
		impls = []string{only}
	}
	for _, impl := range impls {
		b := bin
		if impl == "kubo" {
			b = kubo
		}
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("%s: %w (make bench-board builds cairn and installs Kubo)", b, err)
		}
	}
	work := dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "cairn-benchboard-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	budget, err := benchutil.BoardBudget(bin, work, board)
	if err != nil {
		return err
	}
	input := filepath.Join(work, "input.bin")
	sum, err := benchutil.WriteRandom(input, size)
	if err != nil {
		return err
	}
	mib := size >> 20
	figs := []*benchutil.Figure{
		{Name: fmt.Sprintf("cat %d MiB", mib), Unit: "MiB/s", Goal: 2},
		{Name: fmt.Sprintf("add %d MiB (pinned)", mib), Unit: "MiB/s", Goal: 1.2},
		{Name: "peak RssAnon (add, cat)", Unit: "MiB", Goal: 1.0 / 3, Lower: true},
		{Name: "idle RssAnon after start", Unit: "MiB", Goal: 1.0 / 3, Lower: true},
		{Name: "major page faults of the daemon during cat", Unit: ""},
		{Name: "cgroup pgmajfault during cat", Unit: ""},
		{Name: "cgroup peak memory (page cache included)", Unit: "MiB"},
	}
	gwFigs := benchutil.GatewayLines(mib)
	for r := 0; r < runs; r++ {
		for _, impl := range impls {
			m, err := measure(impl, bin, kubo, kuboProfile, board, work, input, size, sum, budget, r, pins)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", impl, r+1, err)
			}
			m.gw.AddTo(gwFigs, impl)
			fmt.Fprintf(os.Stderr, "run %d %s: %+v\n", r+1, impl, *m)
			for i, v := range []float64{m.cat, m.add, m.peak, m.idle, m.catFaults, m.cgFaults, m.cgPeak} {
				if impl == "cairn" {
					figs[i].Cairn = append(figs[i].Cairn, v)
				} else {
					figs[i].Kubo = append(figs[i].Kubo, v)
				}
			}
		}
	}
	figs = append(figs, gwFigs...)
	benchutil.PrintTable(os.Stdout, fmt.Sprintf("memory cgroup of %d MiB (the %s budget): cairn --board=%s, Kubo %s --profile=test,%s; %d MiB random file, medians of %d runs (load average %s)",
		budget, board, board, daemon.KuboVersion, kuboProfile, mib, runs, benchutil.LoadAvg()), figs)
	return nil
}

func measure(impl, bin, kubo, kuboProfile, board, work, input string, size int64, sum [32]byte, budget int64, r, pins int) (*measured, error) {
	cg, err := benchutil.NewCgroup(fmt.Sprintf("cairn-bench-%d-%s-%d", os.Getpid(), impl, r), budget<<20)
	if err != nil {
		return nil, err
	}
	defer cg.Remove()
	repo := filepath.Join(work, fmt.Sprintf("%s-%d", impl, r))
	defer os.RemoveAll(repo)
	var d *daemon.Daemon
	o := daemon.Options{Offline: true, CgroupProcs: cg.ProcsFile()}
	gw, err := benchutil.GatewayConfig(&o)
	if err != nil {
		return nil, err
	}
	if impl == "cairn" {
		o.Board = board
		d, err = daemon.StartCairn(bin, repo, o)
	} else {
		o.Profiles = kuboProfile
		d, err = daemon.StartKubo(kubo, repo, o)
	}
	if err != nil {
		return nil, err
	}
	defer d.Kill()
	m := &measured{}
	time.Sleep(500 * time.Millisecond)
	pid := d.Pid()
	m.idle = float64(daemon.ProcStatus(pid, "RssAnon")) / 1024
	s := benchutil.Sample(pid, 50*time.Millisecond, "RssAnon")
	defer s.Done()
	t0 := time.Now()
	root, err := benchutil.AddFile(d.URL, "pin=true&quieter=true", input)
	if err != nil {
		return nil, fmt.Errorf("add: %w", err)
	}
	m.add = benchutil.MiBs(size, time.Since(t0))
	f0, cg0 := benchutil.MajorFaults(pid), cg.Stat()
	h := sha256.New()
	t0 = time.Now()
	n, err := benchutil.Stream(d.URL, "/api/v0/cat?arg="+root, h)
	m.cat = benchutil.MiBs(size, time.Since(t0))
	if err != nil {
		return nil, fmt.Errorf("cat: %w", err)
	}
	if got := h.Sum(nil); n != size || !bytes.Equal(got, sum[:]) {
		return nil, fmt.Errorf("cat returned %d bytes, SHA-256 %x; want %d bytes, %x", n, got, size, sum)
	}
	m.catFaults = float64(benchutil.MajorFaults(pid) - f0)
	m.cgFaults = float64(cg.Stat()["pgmajfault"] - cg0["pgmajfault"])
	m.peak = float64(s.Done()[0]) / 1024
	if m.gw, err = benchutil.RunGateway(d, gw, root, size); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if pins > 0 {
		t0 := time.Now()
		if err := putPinned(d.URL, pins); err != nil {
			return nil, err
		}
		note, err := listPins(d.URL, pins)
		if err != nil {
			return nil, err
		}
		m.notes = append(m.notes, fmt.Sprintf("%d block put --pin + pin ls: %.2f s, %s", pins, time.Since(t0).Seconds(), note))
	}
	m.cgPeak = float64(cg.Peak()) / (1 << 20)
	d.Stop()
	return m, nil
}

// putPinned stores n distinct small blocks with block put --pin from 8
// concurrent clients.
func putPinned(url string, n int) error {
	var next atomic.Int64
	errc := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					errc <- nil
					return
				}
				var body bytes.Buffer
				mw := multipart.NewWriter(&body)
				fw, _ := mw.CreateFormFile("data", "block")
				fmt.Fprintf(fw, "cairn benchboard pinned block %d", i)
				mw.Close()
				resp, err := http.Post(url+"/api/v0/block/put?pin=true&cid-codec=raw", mw.FormDataContentType(), &body)
				if err != nil {
					errc <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errc <- fmt.Errorf("block put: status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	for w := 0; w < 8; w++ {
		if err := <-errc; err != nil {
			return err
		}
	}
	return nil
}

// listPins lists the recursive pins with pin/ls.
func listPins(url string, want int) (string, error) {
	resp, err := http.Post(url+"/api/v0/pin/ls?type=recursive&stream=true", "", nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("pin/ls: status %d %s", resp.StatusCode, b)
	}
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		n++
	}
	if n < want {
		return "", fmt.Errorf("pin/ls listed %d pins, want at least %d", n, want)
	}
	return fmt.Sprintf("pin/ls listed %d pins", n), sc.Err()
}
