// Command namesbench measures the memory of keys and IPNS names on a
// board's budget: a cairn daemon with the board profile, inside
// a memory cgroup as large as the budget, offline on loopback in a network
// namespace of its own, generates N keys, publishes one name per key
// (allow-offline) and resolves every name twice, while RssAnon and VmHWM
// are sampled every 50 ms. `make bench-names`; medians of 3 runs.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"
)

func main() {
	daemon.EnterNetNS()
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	board := flag.String("board", "pi-zero-2w", "board profile; its budget sizes the cgroup")
	n := flag.Int("n", 1000, "keys and names")
	runs := flag.Int("runs", 3, "runs (the table shows medians)")
	flag.Parse()
	if err := run(*bin, *board, *n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "namesbench:", err)
		os.Exit(1)
	}
}

type measured struct {
	gen, publish, resolve         time.Duration
	idle, afterGen, peak, hwm, cg float64 // MiB
}

func run(bin, board string, n, runs int) error {
	work, err := os.MkdirTemp("", "cairn-namesbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	budget, err := benchutil.BoardBudget(bin, work, board)
	if err != nil {
		return err
	}
	figs := []*benchutil.Figure{
		{Name: fmt.Sprintf("key/gen x %d", n), Unit: "s"},
		{Name: fmt.Sprintf("name/publish x %d (allow-offline)", n), Unit: "s"},
		{Name: fmt.Sprintf("name/resolve x %d, twice", n), Unit: "s"},
		{Name: "RssAnon idle after start", Unit: "MiB"},
		{Name: "peak RssAnon over gen, publish, resolve", Unit: "MiB"},
		{Name: "VmHWM (peak RSS, file pages included)", Unit: "MiB"},
		{Name: "cgroup peak (memory.max_usage / memory.peak)", Unit: "MiB"},
	}
	for r := 0; r < runs; r++ {
		m, err := measure(bin, board, work, budget, n, r)
		if err != nil {
			return fmt.Errorf("run %d: %w", r+1, err)
		}
		fmt.Printf("run %d: %+v\n", r+1, *m)
		for i, v := range []float64{m.gen.Seconds(), m.publish.Seconds(), m.resolve.Seconds(), m.idle, m.peak, m.hwm, m.cg} {
			figs[i].Cairn = append(figs[i].Cairn, v)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	benchutil.PrintTable(os.Stdout, fmt.Sprintf("cairn --board=%s in a memory cgroup of %d MiB (its budget), offline on loopback; %d keys and names, medians of %d runs (load average %s)",
		board, budget, n, runs, strings.Join(strings.Fields(string(load))[:3], " ")), figs)
	return nil
}

func measure(bin, board, work string, budget int64, n, r int) (*measured, error) {
	cg, err := benchutil.NewCgroup(fmt.Sprintf("cairn-namesbench-%d-%d", os.Getpid(), r), budget<<20)
	if err != nil {
		return nil, err
	}
	defer cg.Remove()
	repo := filepath.Join(work, fmt.Sprintf("run-%d", r))
	defer os.RemoveAll(repo)
	d, err := daemon.StartCairn(bin, repo, daemon.Options{Offline: true, Board: board, CgroupProcs: cg.ProcsFile()})
	if err != nil {
		return nil, err
	}
	defer d.Kill()
	m := &measured{}
	time.Sleep(500 * time.Millisecond)
	m.idle = float64(daemon.ProcStatus(d.Pid(), "RssAnon")) / 1024
	s := benchutil.Sample(d.Pid(), 50*time.Millisecond, "RssAnon", "VmHWM")

	// One value to point every name at.
	c, err := benchutil.Add(d.URL, "pin=true", "value.txt", func(w io.Writer) error {
		_, err := io.WriteString(w, "the value of every name\n")
		return err
	})
	if err != nil {
		return nil, err
	}
	value := "/ipfs/" + c

	t0 := time.Now()
	for i := 0; i < n; i++ {
		if _, err := d.Post("key/gen", url.Values{"arg": {fmt.Sprintf("k%d", i)}}, nil, ""); err != nil {
			return nil, err
		}
	}
	m.gen = time.Since(t0)
	m.afterGen = float64(daemon.ProcStatus(d.Pid(), "RssAnon")) / 1024

	names := make([]string, 0, n)
	t0 = time.Now()
	for i := 0; i < n; i++ {
		b, err := d.Post("name/publish", url.Values{"arg": {value}, "key": {fmt.Sprintf("k%d", i)}, "allow-offline": {"true"}}, nil, "")
		if err != nil {
			return nil, err
		}
		var out struct{ Name, Value string }
		if err := json.Unmarshal(b, &out); err != nil || out.Name == "" {
			return nil, fmt.Errorf("name/publish answered %q", b)
		}
		names = append(names, out.Name)
	}
	m.publish = time.Since(t0)

	t0 = time.Now()
	for pass := 0; pass < 2; pass++ {
		for _, name := range names {
			var out struct{ Path string }
			if err := d.JSON("name/resolve", url.Values{"arg": {name}}, &out); err != nil {
				return nil, err
			}
			if out.Path != value {
				return nil, fmt.Errorf("name/resolve %s: %q, want %q", name, out.Path, value)
			}
		}
	}
	m.resolve = time.Since(t0)
	peaks := s.Done()
	m.peak, m.hwm = float64(peaks[0])/1024, float64(peaks[1])/1024
	m.cg = float64(cg.Peak()) / (1 << 20)
	return m, nil
}
