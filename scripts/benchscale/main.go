package main

import (
	"bytes"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"
)

// addQuery makes every 1 KiB of a file one raw block: a file of n KiB
// stores n leaves (plus one dag-pb node per 174 of them).
const addQuery = "chunker=size-1024&raw-leaves=true&cid-version=1&pin=true&quieter=true"

const (
	leafSize  = 1024
	smallSize = 100 // bytes of a one-block add
	oneAdds   = 50  // one-block adds per run, for their median
	statCalls = 5   // repo/stat calls per run, for their median
	idleWait  = 3 * time.Second
	termWait  = 2 * time.Minute
)

func main() {
	daemon.EnterNetNS()
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	kubo := flag.String("kubo", filepath.Join(daemon.KuboDir(), "ipfs"),
		"Kubo "+daemon.KuboVersion+" binary (scripts/bench-kubo.sh)")
	stagesFlag := flag.String("stages", "131072,1048576", "cumulative block counts (1 KiB leaves) the repos grow to, one stage each")
	runs := flag.Int("runs", 3, "runs of the measurements after each stage, on the grown repo (the tables show medians)")
	fileMiB := flag.Int64("file", 64, "size of the random files a stage adds, MiB (its last file is cut to the stage's block count)")
	keepMiB := flag.Int64("keep", 128, "MiB of the first files left pinned for the GC (at most half of what was added)")
	window := flag.Duration("window", 10*time.Second, "how long one-block adds run without GC, for their rate")
	board := flag.String("board", "", "cairn board profile; with it cairn and Kubo (-kubo-profile) each run in a memory cgroup of the board's budget (root)")
	kuboProfile := flag.String("kubo-profile", "lowpower", "Kubo profile besides test, with -board")
	only := flag.String("only", "", "run only this daemon (cairn or kubo)")
	dir := flag.String("dir", "", "work directory (default: a new one under $TMPDIR, removed after)")
	withGC := flag.Bool("gc", true, "after the last stage, unpin and run repo/gc (false leaves the grown repos in -dir as they are)")
	ready := flag.Duration("ready", 10*time.Minute, "how long a start may take before its RPC answers")
	flag.Parse()
	stages, err := parseStages(*stagesFlag)
	if err == nil && *runs < 1 {
		err = errors.New("-runs must be at least 1")
	}
	if err == nil && *only != "" && *only != "cairn" && *only != "kubo" {
		err = fmt.Errorf("-only %q: cairn or kubo", *only)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(2)
	}
	b := &bench{
		bin: *bin, kubo: *kubo, board: *board, kuboProfile: *kuboProfile,
		stages: plan(stages, *fileMiB<<20), runs: *runs, keep: *keepMiB << 20,
		window: *window, ready: *ready, sums: map[int][32]byte{}, gc: *withGC,
	}
	if err := b.run(*only, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}

// parseStages reads "131072,1048576": increasing cumulative block counts.
func parseStages(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(f), "_", ""), 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-stages %q: %q is not a positive block count", s, f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("-stages %q: counts are cumulative and must increase", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// file is one random file of the run. Its bytes come from ChaCha8 under a
// seed of its own, so they can be produced again to check a cat; cairn
// and Kubo add the same files.
type file struct {
	index int
	size  int64
	seed  [32]byte
}

func (f file) reader() io.Reader { return io.LimitReader(mrand.NewChaCha8(f.seed), f.size) }

// stage is a cumulative block count and the files that reach it.
type stage struct {
	blocks int64
	files  []file
}

// plan splits every stage's new blocks into files of fileSize bytes, the
// last one cut to the count.
func plan(counts []int64, fileSize int64) []stage {
	var master [32]byte
	crand.Read(master[:])
	var out []stage
	prev, index := int64(0), 0
	for _, c := range counts {
		st := stage{blocks: c}
		for left := (c - prev) * leafSize; left > 0; left -= fileSize {
			f := file{index: index, size: min(left, fileSize)}
			var b [40]byte
			copy(b[:], master[:])
			binary.LittleEndian.PutUint64(b[32:], uint64(index))
			f.seed = sha256.Sum256(b[:])
			st.files = append(st.files, f)
			index++
		}
		out = append(out, st)
		prev = c
	}
	return out
}

// bench is one invocation: the stages, then the GC after the last one.
type bench struct {
	bin, kubo, board, kuboProfile string
	stages                        []stage
	runs                          int
	keep                          int64
	window, ready                 time.Duration
	sums                          map[int][32]byte // SHA-256 by file index, once computed
	kuboLabel                     string
	gc                            bool // unpin and GC after the last stage
}

// node is one daemon under test and what it holds.
type node struct {
	name    string // "cairn" or "kubo"
	d       *daemon.Daemon
	opts    daemon.Options
	cg      *benchutil.Cgroup
	repo    string
	running bool
	roots   []string // by file index
	small   int      // one-block adds so far (each pinned)
	err     error    // the first failure; the node sits out the rest
}

func (b *bench) run(only, dir string) error {
	names := []string{"cairn", "kubo"}
	if only != "" {
		names = []string{only}
	}
	for _, name := range names {
		p := b.bin
		if name == "kubo" {
			p = b.kubo
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s: %w (make bench-scale builds cairn and installs Kubo %s)", p, err, daemon.KuboVersion)
		}
	}
	b.kuboLabel = "Kubo " + strings.TrimPrefix(daemon.KuboVersion, "v")
	if slices.Contains(names, "kubo") {
		if out, err := exec.Command(b.kubo, "version", "--number").Output(); err == nil {
			b.kuboLabel = "Kubo " + strings.TrimSpace(string(out))
		}
	}
	work := dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "cairn-benchscale-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	var budget int64
	if b.board != "" {
		var err error
		if budget, err = benchutil.BoardBudget(b.bin, work, b.board); err != nil {
			return err
		}
	}
	var nodes []*node
	defer func() {
		for _, n := range nodes {
			n.close()
		}
	}()
	// StorageMax (10 GB by default, a hard cap in cairn) would stop a
	// 10^7-block stage (about 10.6 GB of records) before its end; a
	// board profile refuses to start with one the disk cannot hold. So
	// it is what the last stage needs, 2 KiB a block, and 1 GB more.
	storageMax := fmt.Sprintf(`"%dMB"`, b.stages[len(b.stages)-1].blocks*2048/1e6+1000)
	for _, name := range names {
		n := &node{name: name, repo: filepath.Join(work, name)}
		n.opts = daemon.Options{Offline: true, ReadyTimeout: b.ready,
			Config: map[string]string{"Datastore.StorageMax": storageMax}}
		if b.board != "" {
			if name == "cairn" {
				n.opts.Board = b.board
			} else {
				n.opts.Profiles = b.kuboProfile
			}
			cg, err := benchutil.NewCgroup(fmt.Sprintf("cairn-benchscale-%d-%s", os.Getpid(), name), budget<<20)
			if err != nil {
				return err
			}
			n.cg = cg
			n.opts.CgroupProcs = cg.ProcsFile()
		}
		nodes = append(nodes, n)
	}
	// Ctrl-C or a SIGTERM mid-run (the daemons get Ctrl-C too): leave no
	// daemon, cgroup or repo behind.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "benchscale: %v: stopping\n", s)
		for _, n := range nodes {
			if n.d != nil {
				n.d.Kill()
			}
			if n.cg != nil {
				n.cg.Remove()
			}
		}
		if dir == "" {
			os.RemoveAll(work)
		}
		os.Exit(1)
	}()
	setup := "cairn --profile=test, " + b.kuboLabel + " --profile=test"
	if b.board != "" {
		setup = fmt.Sprintf("each in a memory cgroup of %d MiB (the %s budget): cairn --board=%s, %s --profile=test,%s",
			budget, b.board, b.board, b.kuboLabel, b.kuboProfile)
	}
	fmt.Printf("cairn vs %s at scale, offline on loopback; %s; files added with %s\n", b.kuboLabel, setup, addQuery)
	var restart []*benchutil.Figure
	for si := range b.stages {
		figs := newStageFigs(b, si)
		restart = append(restart, figs.restart)
		var gc *gcFigs
		if si == len(b.stages)-1 && b.gc {
			gc = newGCFigs()
		}
		for _, n := range nodes {
			if n.err != nil {
				continue
			}
			if err := b.stage(n, si, figs, gc); err != nil {
				n.err = fmt.Errorf("%s, stage %d: %w", n.name, si+1, err)
				fmt.Fprintln(os.Stderr, "benchscale:", n.err)
				if n.d != nil {
					fmt.Fprintf(os.Stderr, "%s log (end):\n%s\n", n.name, tail(n.d.Log(), 2000))
				}
				n.close()
			}
		}
		st := b.stages[si]
		b.table(fmt.Sprintf("stage %d of %d: %d blocks (%d new, in %d random files); the add once, the rest medians of %d runs on the grown repo (load average %s)",
			si+1, len(b.stages), st.blocks, st.blocks-b.prevBlocks(si), len(st.files), b.runs, benchutil.LoadAvg()), figs.list())
		if gc != nil {
			b.table(fmt.Sprintf("after stage %d: %s, then repo/gc; one measurement (load average %s)",
				si+1, gc.kept, benchutil.LoadAvg()), gc.list())
		}
	}
	if len(b.stages) > 1 {
		b.table("across the stages", []*benchutil.Figure{flatness(restart)})
	}
	var failed []string
	for _, n := range nodes {
		if n.err != nil {
			failed = append(failed, n.err.Error())
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

func (b *bench) table(title string, figs []*benchutil.Figure) {
	benchutil.Table{Title: title, Kubo: b.kuboLabel, Met: "meets", Missed: "misses"}.Print(os.Stdout, figs)
}

func (b *bench) prevBlocks(si int) int64 {
	if si == 0 {
		return 0
	}
	return b.stages[si-1].blocks
}

// files are the files added up to and including stage si.
func (b *bench) files(si int) []file {
	var out []file
	for _, st := range b.stages[:si+1] {
		out = append(out, st.files...)
	}
	return out
}

// sum is the SHA-256 of f's bytes.
func (b *bench) sum(f file) [32]byte {
	s, ok := b.sums[f.index]
	if !ok {
		h := sha256.New()
		io.Copy(h, f.reader())
		copy(s[:], h.Sum(nil))
		b.sums[f.index] = s
	}
	return s
}

// stageFigs are the figures measured after every stage.
type stageFigs struct {
	add, addPeak, stop, restart, idle, cat, stat, one, disk *benchutil.Figure
}

func newStageFigs(b *bench, si int) *stageFigs {
	catFile := b.stages[si].files[0]
	f := &stageFigs{
		add:     &benchutil.Figure{Name: "add rate (the stage's files)", Unit: "blocks/s", Goal: 1.5},
		addPeak: &benchutil.Figure{Name: "peak RssAnon during the add", Unit: "MiB", Goal: 1.0 / 3, Lower: true},
		stop:    &benchutil.Figure{Name: "stop: SIGTERM to exit", Unit: "ms", Lower: true},
		restart: &benchutil.Figure{Name: "restart: process start to RPC ready", Unit: "ms", Abs: 500, Goal: 2, Lower: true},
		idle:    &benchutil.Figure{Name: "idle RssAnon 3 s after ready", Unit: "MiB", Goal: 1.0 / 3, Lower: true},
		cat: &benchutil.Figure{Name: fmt.Sprintf("cat of a stage file (%.1f MiB, 1 KiB blocks)", float64(catFile.size)/(1<<20)),
			Unit: "MiB/s"},
		stat: &benchutil.Figure{Name: "repo/stat, median of 5", Unit: "ms", Lower: true},
		one:  &benchutil.Figure{Name: "one-block add (100 B, pinned), median of 50", Unit: "ms", Goal: 1, Lower: true},
		disk: &benchutil.Figure{Name: "repo on disk per byte added", Unit: "B/B", Lower: true},
	}
	if b.board != "" {
		f.cat.Goal = 2
	} else {
		f.cat.Note = "the goal, >= 2x, is for the board's cgroup: -board"
	}
	return f
}

func (f *stageFigs) list() []*benchutil.Figure {
	return []*benchutil.Figure{f.add, f.addPeak, f.stop, f.restart, f.idle, f.cat, f.stat, f.one, f.disk}
}

// gcFigs are the figures of the GC after the last stage.
type gcFigs struct {
	kept                                                    string
	gc, during, duringRate, quietRate, ratio, disk, perByte *benchutil.Figure
	diskRestart, perByteRestart                             *benchutil.Figure
}

func newGCFigs() *gcFigs {
	return &gcFigs{
		gc:             &benchutil.Figure{Name: "repo/gc (one-block adds running beside it)", Unit: "s", Goal: 1, Lower: true},
		during:         &benchutil.Figure{Name: "one-block adds answered during the GC", Unit: "adds"},
		duringRate:     &benchutil.Figure{Name: "one-block adds/s during the GC", Unit: "adds/s"},
		quietRate:      &benchutil.Figure{Name: "one-block adds/s without GC (before it)", Unit: "adds/s"},
		ratio:          &benchutil.Figure{Name: "adds/s during the GC / without GC", Unit: "x", Abs: 0.5},
		disk:           &benchutil.Figure{Name: "repo on disk after the GC", Unit: "MiB", Lower: true},
		perByte:        &benchutil.Figure{Name: "bytes on disk per byte held", Unit: "B/B", Abs: 1.2, Lower: true},
		diskRestart:    &benchutil.Figure{Name: "repo on disk after a restart", Unit: "MiB", Lower: true},
		perByteRestart: &benchutil.Figure{Name: "bytes on disk per byte held, after a restart", Unit: "B/B", Lower: true},
	}
}

func (g *gcFigs) list() []*benchutil.Figure {
	return []*benchutil.Figure{g.gc, g.during, g.duringRate, g.quietRate, g.ratio, g.disk, g.perByte, g.diskRestart, g.perByteRestart}
}

// flatness is the slowest stage's median restart over the fastest's.
func flatness(restart []*benchutil.Figure) *benchutil.Figure {
	f := &benchutil.Figure{Name: "restart, slowest stage / fastest stage", Unit: "x", Abs: 2, Lower: true}
	var notes []string
	spread := func(name string, col func(*benchutil.Figure) []float64) []float64 {
		var ms []float64
		var s []string
		for _, r := range restart {
			if v := col(r); len(v) > 0 {
				ms = append(ms, benchutil.Median(v))
				s = append(s, fmt.Sprintf("%.0f", ms[len(ms)-1]))
			}
		}
		if len(s) > 0 {
			notes = append(notes, name+" "+strings.Join(s, ", "))
		}
		if len(ms) < 2 || slices.Min(ms) == 0 {
			return nil
		}
		return []float64{slices.Max(ms) / slices.Min(ms)}
	}
	f.Cairn = spread("cairn", func(r *benchutil.Figure) []float64 { return r.Cairn })
	f.Kubo = spread("Kubo", func(r *benchutil.Figure) []float64 { return r.Kubo })
	f.Note = "medians by stage, ms: " + strings.Join(notes, "; ")
	return f
}

// put adds v to n's column of f.
func put(f *benchutil.Figure, n *node, v float64) {
	if n.name == "cairn" {
		f.Cairn = append(f.Cairn, v)
	} else {
		f.Kubo = append(f.Kubo, v)
	}
}

// stage grows n's repo to stage si, then measures it runs times, each
// time after a stop and a start; after the last stage it runs the GC.
// The daemon is stopped when it returns, so that the other one runs
// alone.
func (b *bench) stage(n *node, si int, figs *stageFigs, gc *gcFigs) error {
	if err := n.start(b); err != nil {
		return err
	}
	st := b.stages[si]
	s := benchutil.Sample(n.d.Pid(), 50*time.Millisecond, "RssAnon")
	t0 := time.Now()
	for _, f := range st.files {
		root, err := benchutil.Add(n.d.URL, addQuery, fmt.Sprintf("random-%d.bin", f.index),
			func(w io.Writer) error { _, err := io.Copy(w, f.reader()); return err })
		if err != nil {
			s.Done()
			return fmt.Errorf("add of file %d (%d bytes): %w", f.index, f.size, err)
		}
		n.roots = append(n.roots, root)
	}
	put(figs.add, n, float64(st.blocks-b.prevBlocks(si))/time.Since(t0).Seconds())
	put(figs.addPeak, n, float64(s.Done()[0])/1024)
	fmt.Fprintf(os.Stderr, "%s stage %d: %d blocks added in %.1f s\n", n.name, si+1, st.blocks-b.prevBlocks(si), time.Since(t0).Seconds())
	catFile := st.files[0]
	want := b.sum(catFile)
	for r := 0; r < b.runs; r++ {
		t0 := time.Now()
		if err := n.stop(); err != nil {
			return err
		}
		put(figs.stop, n, ms(time.Since(t0)))
		if r == 0 {
			du, err := benchutil.DiskUsage(n.repo)
			if err != nil {
				return err
			}
			put(figs.disk, n, float64(du)/float64(b.added(si, n)))
		}
		t0 = time.Now()
		if err := n.start(b); err != nil {
			return err
		}
		put(figs.restart, n, ms(time.Since(t0)))
		time.Sleep(idleWait)
		put(figs.idle, n, float64(daemon.ProcStatus(n.d.Pid(), "RssAnon"))/1024)
		h := sha256.New()
		t0 = time.Now()
		got, err := benchutil.Cat(n.d.URL, n.roots[catFile.index], h)
		d := time.Since(t0)
		if err != nil {
			return fmt.Errorf("cat: %w", err)
		}
		if sum := h.Sum(nil); got != catFile.size || !bytes.Equal(sum, want[:]) {
			return fmt.Errorf("cat of %s gave %d bytes, SHA-256 %x; want %d bytes, %x", n.roots[catFile.index], got, sum, catFile.size, want)
		}
		put(figs.cat, n, benchutil.MiBs(catFile.size, d))
		stat, objects, err := repoStat(n.d)
		if err != nil {
			return err
		}
		put(figs.stat, n, stat)
		if r == 0 {
			noteObjects(figs.stat, n, objects)
		}
		var lat []float64
		for range oneAdds {
			d, err := n.oneBlockAdd()
			if err != nil {
				return err
			}
			lat = append(lat, ms(d))
		}
		put(figs.one, n, benchutil.Median(lat))
		fmt.Fprintf(os.Stderr, "%s stage %d run %d done\n", n.name, si+1, r+1)
	}
	if gc != nil {
		if err := b.collect(n, si, gc); err != nil {
			return fmt.Errorf("gc: %w", err)
		}
	}
	return n.stop()
}

// added is the bytes n was given up to stage si: the files and the
// one-block adds.
func (b *bench) added(si int, n *node) int64 {
	var t int64
	for _, f := range b.files(si) {
		t += f.size
	}
	return t + int64(n.small)*smallSize
}

// noteObjects adds n's NumObjects to f's note.
func noteObjects(f *benchutil.Figure, n *node, objects int64) {
	if f.Note == "" {
		f.Note = "NumObjects:"
	} else {
		f.Note += ","
	}
	f.Note += fmt.Sprintf(" %s %d", n.name, objects)
}

// collect unpins all but the first files (b.keep bytes, at most half of
// what was added, at least one file), measures one-block adds without a
// GC for b.window, then runs repo/gc while one client adds one-block files
// back to back, then measures the repo on disk, before and after a
// restart.
func (b *bench) collect(n *node, si int, g *gcFigs) error {
	files := b.files(si)
	var total int64
	for _, f := range files {
		total += f.size
	}
	keep := min(b.keep, total/2)
	kept, held := 1, files[0].size
	for kept < len(files) && held+files[kept].size <= keep {
		held += files[kept].size
		kept++
	}
	g.kept = fmt.Sprintf("all but the first %d of %d files unpinned (%.1f MiB of %.1f MiB stay pinned)",
		kept, len(files), float64(held)/(1<<20), float64(total)/(1<<20))
	for _, f := range files[kept:] {
		if err := benchutil.Post(n.d.URL, "/api/v0/pin/rm?arg="+n.roots[f.index]); err != nil {
			return err
		}
	}
	quiet, _, err := n.addsFor(time.Now().Add(b.window), nil)
	if err != nil {
		return err
	}
	quietRate := float64(quiet) / b.window.Seconds()
	put(g.quietRate, n, quietRate)

	stop := make(chan struct{})
	type result struct {
		answered []time.Time
		err      error
	}
	done := make(chan result, 1)
	go func() {
		_, at, err := n.addsFor(time.Time{}, stop)
		done <- result{at, err}
	}()
	t0 := time.Now()
	gcErr := benchutil.Post(n.d.URL, "/api/v0/repo/gc?silent=true")
	t1 := time.Now()
	close(stop)
	res := <-done
	if gcErr != nil {
		return gcErr
	}
	if res.err != nil {
		return fmt.Errorf("one-block add during the GC: %w", res.err)
	}
	during := 0
	for _, at := range res.answered {
		if !at.After(t1) {
			during++
		}
	}
	gcSecs := t1.Sub(t0).Seconds()
	put(g.gc, n, gcSecs)
	put(g.during, n, float64(during))
	put(g.duringRate, n, float64(during)/gcSecs)
	if quietRate > 0 {
		put(g.ratio, n, float64(during)/gcSecs/quietRate)
	}
	held += int64(n.small) * smallSize
	for _, c := range []struct {
		disk, perByte *benchutil.Figure
	}{{g.disk, g.perByte}, {g.diskRestart, g.perByteRestart}} {
		if c.disk == g.diskRestart {
			if err := n.stop(); err != nil {
				return err
			}
			if err := n.start(b); err != nil {
				return err
			}
		}
		du, err := benchutil.DiskUsage(n.repo)
		if err != nil {
			return err
		}
		put(c.disk, n, float64(du)/(1<<20))
		put(c.perByte, n, float64(du)/float64(held))
		if n.name == "cairn" {
			printParts(n.repo)
		}
	}
	g.perByte.Note = fmt.Sprintf("held: the pinned files and one-block adds, %.1f MiB", float64(held)/(1<<20))
	g.perByteRestart.Note = "cairn compacts its index file at start once free pages pass half of it and 4 MiB"
	return nil
}

// addsFor adds one-block files back to back until deadline or until stop
// is closed, and returns how many were answered and when.
func (n *node) addsFor(deadline time.Time, stop chan struct{}) (int, []time.Time, error) {
	var at []time.Time
	for {
		if stop != nil {
			select {
			case <-stop:
				return len(at), at, nil
			default:
			}
		} else if !time.Now().Before(deadline) {
			return len(at), at, nil
		}
		if _, err := n.oneBlockAdd(); err != nil {
			return len(at), at, err
		}
		at = append(at, time.Now())
	}
}

// oneBlockAdd adds a fresh 100-byte file, pinned, and returns how long
// the answer took.
func (n *node) oneBlockAdd() (time.Duration, error) {
	var b [smallSize]byte
	crand.Read(b[:])
	t0 := time.Now()
	_, err := benchutil.Add(n.d.URL, addQuery, "one.bin", func(w io.Writer) error { _, err := w.Write(b[:]); return err })
	if err != nil {
		return 0, fmt.Errorf("one-block add: %w", err)
	}
	n.small++
	return time.Since(t0), nil
}

// repoStat returns the median latency of statCalls repo/stat calls in ms
// and the NumObjects of the last.
func repoStat(d *daemon.Daemon) (float64, int64, error) {
	var lat []float64
	var st struct{ NumObjects int64 }
	for range statCalls {
		t0 := time.Now()
		body, err := d.Post("repo/stat", nil, nil, "")
		if err != nil {
			return 0, 0, err
		}
		lat = append(lat, ms(time.Since(t0)))
		if err := json.Unmarshal(body, &st); err != nil {
			return 0, 0, fmt.Errorf("repo/stat: %v: %s", err, body)
		}
	}
	return benchutil.Median(lat), st.NumObjects, nil
}

// start inits and starts n's daemon the first time, and starts it again
// on its repo later.
func (n *node) start(b *bench) error {
	if n.running {
		return nil
	}
	var err error
	switch {
	case n.d != nil:
		err = n.d.Restart(n.opts)
	case n.name == "cairn":
		n.d, err = daemon.StartCairn(b.bin, n.repo, n.opts)
	default:
		n.d, err = daemon.StartKubo(b.kubo, n.repo, n.opts)
	}
	if err != nil {
		return err
	}
	n.running = true
	return nil
}

// stop sends SIGTERM and waits for the daemon to exit.
func (n *node) stop() error {
	if !n.running {
		return nil
	}
	n.running = false
	return n.d.Terminate(termWait)
}

// close kills a daemon still running and removes its cgroup.
func (n *node) close() {
	if n.running {
		n.d.Kill()
		n.running = false
	}
	if n.cg != nil {
		n.cg.Remove()
		n.cg = nil
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// printParts prints what each entry of a cairn repo takes on disk.
func printParts(repo string) {
	es, err := os.ReadDir(repo)
	if err != nil {
		return
	}
	var parts []string
	for _, e := range es {
		if du, err := benchutil.DiskUsage(filepath.Join(repo, e.Name())); err == nil && du >= 64<<10 {
			parts = append(parts, fmt.Sprintf("%s %.2f MiB", e.Name(), float64(du)/(1<<20)))
		}
	}
	fmt.Printf("cairn's repo on disk: %s\n", strings.Join(parts, ", "))
}
