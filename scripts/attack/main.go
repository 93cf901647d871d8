// main.go: the harness: the daemon in its cgroup, the idle figures, the
// probe, the attacker child process, the checks and the table.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"
	"cairn/scripts/internal/lanpeer"

	"github.com/libp2p/go-libp2p/core/peer"
)

func main() {
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	board := flag.String("board", "pi-zero-2w", "board profile (its budget is the cgroup's size)")
	only := flag.String("only", "", "comma-separated attack groups to run (conns, bitswap, dht, pubsub, services); all when empty")
	dur := flag.Duration("duration", 8*time.Second, "length of each attack")
	flag.BoolVar(&traceSettle, "trace-settle", false, "print RssAnon and the Go heap of the last scrape at each poll while an attack settles, for the whole of -settle")
	flag.DurationVar(&final, "final", 150*time.Second, "how long the daemon rests after the battery before its figures are checked against idle once more (0: not checked)")
	settle := flag.Duration("settle", 20*time.Second, "how long the daemon is given to come back to idle after an attack")
	floor := flag.Duration("floor", 2*time.Millisecond, "latencies below this count as this much in the 2x check")
	latency := flag.String("latency", "check", "check: an attack whose RPC median is over 2x idle fails the run; report: it is printed as FAIL but does not fail the run")
	idleMem := flag.String("idle-memory", "check", "check: an attack after which RssAnon stays over idle + budget/16 fails the run; report: it is printed as FAIL but does not fail the run (peers and goroutines are always checked)")
	flag.StringVar(&heapDir, "heap", "", "directory to write the daemon's heap profile to after each attack (diag/profile, a zip per attack)")
	flag.StringVar(&cpuDir, "cpu", "", "directory to write the daemon's CPU profile of each attack to (diag/profile over the attack's duration, a zip per attack)")
	child := flag.String("child", "", "internal: run this one attack against $"+targetEnv+" and print what it saw")
	flag.Parse()
	if *child != "" {
		runChild(*child, *dur)
		return
	}
	daemon.EnterNetNS()
	if err := daemon.LoopbackOnly(); err != nil {
		fail(err)
	}
	if *latency != "check" && *latency != "report" {
		fail(fmt.Errorf("-latency %q: want check or report", *latency))
	}
	if *idleMem != "check" && *idleMem != "report" {
		fail(fmt.Errorf("-idle-memory %q: want check or report", *idleMem))
	}
	checkIdleMemory = *idleMem == "check"
	ok, err := run(*bin, *board, *only, *dur, *settle, *floor, *latency == "check")
	if err != nil {
		fail(err)
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "attack: some attacks failed (see the table)")
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "attack:", err)
	os.Exit(1)
}

// target is the daemon under attack; its exported fields are handed to
// the attacking child process as JSON.
type target struct {
	d      *daemon.Daemon
	URL    string // the RPC
	Repo   string
	Info   peer.AddrInfo
	TCP    string // host:port of its TCP swarm listener
	File   string // CID of the local file the probe cats
	Big    string // CID of the large file the bitswap attacks fetch
	IPNSID string // its peer ID as an IPNS name (the pubsub record topic)
	budget int64  // MiB
}

// lanOutMiB is the daemon's LAN upload cap (Swarm.Bandwidth.LANOut), in
// MiB a second: a tenth of what 20 peers fetch without one here.
const lanOutMiB = 16

func run(bin, board, only string, dur, settle, floor time.Duration, checkLatency bool) (bool, error) {
	work, err := os.MkdirTemp("", "cairn-attack-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(work)
	budget, err := benchutil.BoardBudget(bin, work, board)
	if err != nil {
		return false, err
	}
	cg, err := benchutil.NewCgroup(fmt.Sprintf("cairn-attack-%d", os.Getpid()), budget<<20)
	if err != nil {
		return false, err
	}
	defer cg.Remove()
	// The board's profile makes the DHT a client only; Routing.Type
	// auto makes the LAN DHT serve (as Kubo's default does), so that
	// its server side is attacked too. An upload cap, as a board on a
	// shared LAN would set, is checked under bitswap/same-blocks.
	opts := daemon.Options{Board: board, CgroupProcs: cg.ProcsFile(), Config: map[string]string{
		"Pubsub.Enabled":         `true`,
		"Ipns.UsePubsub":         `true`,
		"Routing.Type":           `"auto"`,
		"Bootstrap":              `[]`,
		"Discovery.MDNS.Enabled": `false`,
		"Swarm.Bandwidth":        fmt.Sprintf(`{"LANOut": "%dMiB"}`, lanOutMiB),
	}}
	d, err := daemon.StartCairn(bin, filepath.Join(work, "repo"), opts)
	if err != nil {
		return false, err
	}
	defer d.Stop()
	t := &target{d: d, URL: d.URL, Repo: d.Repo, budget: budget}
	if err := t.prepare(); err != nil {
		return false, err
	}

	fmt.Printf("attack: cairn --board=%s in a %d MiB memory cgroup, online on loopback; each attack %v, then up to %v to settle\n",
		board, budget, dur, settle)
	idle, err := t.measureIdle(3 * time.Second)
	if err != nil {
		return false, err
	}
	fmt.Printf("idle: RssAnon %.1f MiB (Go heap in use %.1f MiB, free not returned %.1f MiB), goroutines %d, peers %d, probe median %s p95 %s\n\n",
		mib(idle.rss), idle.heapInuse/(1<<20), idle.heapFree/(1<<20), idle.goroutines, idle.peers, ms(idle.p50), ms(idle.p95))

	var want map[string]bool
	if only != "" {
		want = map[string]bool{}
		for _, g := range strings.Split(only, ",") {
			want[strings.TrimSpace(g)] = true
		}
	}
	var results []*result
	for _, a := range battery {
		if want != nil && !want[a.group] {
			continue
		}
		r := t.runAttack(a, idle, dur, settle, floor)
		if heapDir != "" {
			t.saveHeap(filepath.Join(heapDir, a.group+"-"+a.name+".zip"))
		}
		results = append(results, r)
		r.print(os.Stdout, t.budget)
		if r.exited {
			break
		}
	}
	finalOK := true
	if final > 0 && len(results) > 0 && !results[len(results)-1].exited {
		finalOK = t.finalCheck(idle, final)
	}
	passed, heldButSlow := 0, 0
	for _, r := range results {
		switch {
		case r.ok():
			passed++
		case r.okButLatency():
			heldButSlow++
		}
	}
	fmt.Printf("\n%d of %d attacks held; %d more held but for the RPC latency; cgroup peak %d MiB of %d\n",
		passed, len(results), heldButSlow, cg.Peak()>>20, budget)
	if !checkLatency {
		return finalOK && passed+heldButSlow == len(results), nil
	}
	return finalOK && passed == len(results), nil
}

// final is how long the daemon rests after the whole battery before
// finalCheck (-final).
var final time.Duration

// finalCheck waits d after the battery, longer than the caches an
// attack fills live (pubsub's seen-message IDs, 2 minutes; the records
// of peers that left, a minute), and checks the daemon against idle with
// the bounds of an attack's "after": what it holds then it keeps.
func (t *target) finalCheck(idle figures, d time.Duration) bool {
	time.Sleep(d)
	if !t.alive() {
		fmt.Printf("\nafter the battery and %v at rest: the daemon EXITED\n", d)
		return false
	}
	f := t.snapshot()
	if heapDir != "" {
		t.saveHeap(filepath.Join(heapDir, "final.zip"))
	}
	others, mem := t.backTo(idle, f)
	verdict := "pass"
	if !others || !mem {
		verdict = "FAIL"
	}
	fmt.Printf("\nafter the battery and %v at rest: RssAnon %.1f MiB (Go heap in use %.1f MiB, free %.1f MiB), %d goroutines, %d peers, against idle %.1f MiB, %d goroutines, %d peers: %s\n",
		d, mib(f.rss), f.heapInuse/(1<<20), f.heapFree/(1<<20), f.goroutines, f.peers, mib(idle.rss), idle.goroutines, idle.peers, verdict)
	fmt.Printf("   the runtime outside the heap, now against idle: stacks %.1f / %.1f MiB, spans %.1f / %.1f, collector %.1f / %.1f, other %.1f / %.1f\n",
		f.stacks/(1<<20), idle.stacks/(1<<20), f.spans/(1<<20), idle.spans/(1<<20),
		f.gcSys/(1<<20), idle.gcSys/(1<<20), f.otherSys/(1<<20), idle.otherSys/(1<<20))
	return backHolds(others, others && mem)
}

// prepare reads the daemon's addresses and adds the files the probe and
// the bitswap attacks read.
func (t *target) prepare() error {
	info, err := lanpeer.Target(t.d, string(lanKad))
	if err != nil {
		return err
	}
	t.Info, t.TCP, t.IPNSID = info.AddrInfo, info.TCP, info.IPNSID
	if t.File, err = benchutil.AddRandom(t.d.URL, "pin=true&quieter=true", 256<<10); err != nil {
		return err
	}
	t.Big, err = benchutil.AddRandom(t.d.URL, "pin=true&quieter=true&raw-leaves=true&cid-version=1", 16<<20)
	return err
}

// figures are what the node looks like at a moment, and the probe's
// latencies over a period.
type figures struct {
	rss        int64 // kB
	goroutines int
	peers      int
	p50, p95   time.Duration
	// The Go heap: in use, and free but not yet returned to the system
	// (idle less released), from go_memstats_* (bytes).
	heapInuse, heapFree float64
	// The runtime's memory outside the heap (bytes): goroutine stacks,
	// span structures, the collector's metadata, the rest.
	stacks, spans, gcSys, otherSys float64
}

func (t *target) measureIdle(d time.Duration) (figures, error) {
	p := t.startProbe()
	time.Sleep(d)
	lat, errs := p.stop()
	if errs > 0 {
		return figures{}, fmt.Errorf("the probe failed %d times on the idle daemon", errs)
	}
	f := t.snapshot()
	f.p50, f.p95 = percentile(lat, 50), percentile(lat, 95)
	return f, nil
}

func (t *target) snapshot() figures {
	m := t.metrics()
	var peers struct{ Peers []struct{} }
	t.d.JSON("swarm/peers", nil, &peers)
	return figures{rss: daemon.ProcStatus(t.d.Pid(), "RssAnon"), goroutines: int(m["go_goroutines"]), peers: len(peers.Peers),
		heapInuse: m["go_memstats_heap_inuse_bytes"], heapFree: m["go_memstats_heap_idle_bytes"] - m["go_memstats_heap_released_bytes"],
		stacks: m["go_memstats_stack_inuse_bytes"], spans: m["go_memstats_mspan_inuse_bytes"],
		gcSys: m["go_memstats_gc_sys_bytes"], otherSys: m["go_memstats_other_sys_bytes"]}
}

// scrape reads the daemon's metrics (lanpeer.Scrape).
func (t *target) scrape(fn func(name, labels string, v float64)) { lanpeer.Scrape(t.d.URL, fn) }

// metrics sums the samples of each metric name.
func (t *target) metrics() map[string]float64 { return lanpeer.Metrics(t.d.URL) }

// blocked is libp2p_rcmgr_blocked_resources by scope and resource: the
// resource manager's refusals (a gauge of the last interval, so the
// harness samples it during the attack and keeps the peak).
func (t *target) blocked() map[string]float64 {
	out := map[string]float64{}
	t.scrape(func(name, labels string, v float64) {
		if name != "libp2p_rcmgr_blocked_resources" || v == 0 {
			return
		}
		var scope, res, dir string
		for _, kv := range strings.Split(labels, ",") {
			k, val, _ := strings.Cut(kv, "=")
			val = strings.Trim(val, `"`)
			switch k {
			case "scope":
				scope = val
			case "resource":
				res = val
			case "dir":
				dir = val
			}
		}
		key := scope + " " + res
		if dir != "" {
			key += " " + dir
		}
		out[key] += v
	})
	return out
}

// probe is the RPC load of a legitimate client: id and cat of the local
// file in turn, one at a time, every 20 ms.
type probe struct {
	stopc chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	lat   []time.Duration
	errs  int
}

func (t *target) startProbe() *probe {
	p := &probe{stopc: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	go func() {
		defer close(p.done)
		for i := 0; ; i++ {
			select {
			case <-p.stopc:
				return
			case <-time.After(20 * time.Millisecond):
			}
			path := "/api/v0/id"
			if i%2 == 1 {
				path = "/api/v0/cat?arg=" + t.File
			}
			t0 := time.Now()
			resp, err := client.Post(t.d.URL+path, "", nil)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode != 200 {
					err = fmt.Errorf("%s: %s", path, resp.Status)
				}
			}
			el := time.Since(t0)
			p.mu.Lock()
			if err != nil {
				p.errs++
				fmt.Fprintln(os.Stderr, "probe:", err)
			} else {
				p.lat = append(p.lat, el)
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *probe) stop() ([]time.Duration, int) {
	close(p.stopc)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lat, p.errs
}

func percentile(v []time.Duration, q int) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := (len(s)*q + 99) / 100
	return s[max(min(i, len(s))-1, 0)]
}

// attack is one entry of the battery. run floods the target until ctx
// ends and returns what it saw (counts the attacker made and was
// refused); it closes everything it opened before returning.
type attack struct {
	group, name string
	run         func(ctx context.Context, t *target) (string, error)
}

// targetEnv carries the target to the child process, as JSON.
const targetEnv = "CAIRN_ATTACK_TARGET"

// childReport is what the child prints on its last line.
type childReport struct {
	Saw, FirstErr, Err string
}

// spawn runs attack a in a child process at nice 19 for dur.
func (t *target) spawn(a attack, dur time.Duration) (saw string, cpu time.Duration, firstErr, err error) {
	saw, cmd, firstErr, err := t.spawnCmd(a, dur)
	if cmd != nil && cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return saw, cpu, firstErr, err
}

// spawnCmd runs the attacker's process (nice execs it, so its CPU is
// the attacker's).
func (t *target) spawnCmd(a attack, dur time.Duration) (saw string, cmd *exec.Cmd, firstErr, err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, nil, err
	}
	tj, err := json.Marshal(t)
	if err != nil {
		return "", nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	cmd = exec.CommandContext(ctx, "nice", "-n", "19", exe, "-child", a.group+"/"+a.name, "-duration", dur.String())
	cmd.Env = append(os.Environ(), targetEnv+"="+string(tj))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", cmd, nil, fmt.Errorf("the attacker: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var rep childReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		return "", cmd, nil, fmt.Errorf("the attacker's report %q: %w", out, err)
	}
	if rep.FirstErr != "" {
		firstErr = errors.New(rep.FirstErr)
	}
	if rep.Err != "" {
		err = errors.New(rep.Err)
	}
	return rep.Saw, cmd, firstErr, err
}

// runChild is the child process: one attack for dur, then its report.
func runChild(name string, dur time.Duration) {
	var t target
	if err := json.Unmarshal([]byte(os.Getenv(targetEnv)), &t); err != nil {
		fail(fmt.Errorf("$%s: %w", targetEnv, err))
	}
	t.d = &daemon.Daemon{Name: "cairn", URL: t.URL, Repo: t.Repo}
	for _, a := range battery {
		if a.group+"/"+a.name != name {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), dur)
		saw, err := a.run(ctx, &t)
		cancel()
		rep := childReport{Saw: saw}
		if err != nil {
			rep.Err = err.Error()
		}
		if e := firstErr.take(); e != nil {
			rep.FirstErr = e.Error()
		}
		b, _ := json.Marshal(rep)
		fmt.Println(string(b))
		return
	}
	fail(fmt.Errorf("no attack %s", name))
}

// result is one attack's figures.
type result struct {
	name              string
	peak              int64 // kB
	during            figures
	after             figures
	idle              figures
	probes, errs      int
	exited            bool
	saw               string
	refused           map[string]float64
	latOK, backIdle   bool
	backIdleButMemory bool // peers and goroutines back, whatever RssAnon
	memBudgetOK       bool
	floor             time.Duration
	// The daemon's and the attackers' CPU over the attack's wall time.
	wall, daemonCPU, attackerCPU time.Duration
	attackErr                    error
	firstErr                     error
}

func (r *result) memOK(budget int64) bool { return r.peak < budget<<10 }

func (r *result) ok() bool { return r.latOK && r.okButLatency() }

// okButLatency: every check but the latency's passed.
func (r *result) okButLatency() bool {
	return r.peak > 0 && !r.exited && r.errs == 0 && backHolds(r.backIdleButMemory, r.backIdle) && r.attackErr == nil && r.memBudgetOK
}

func (t *target) runAttack(a attack, idle figures, dur, settle, floor time.Duration) *result {
	r := &result{name: a.group + "/" + a.name, idle: idle, floor: floor, refused: map[string]float64{}}
	before := t.blocked()
	sample := benchutil.Sample(t.d.Pid(), 20*time.Millisecond, "RssAnon")
	p := t.startProbe()
	stopBlocked := make(chan struct{})
	var bwg sync.WaitGroup
	bwg.Add(1)
	go func() {
		defer bwg.Done()
		for {
			for k, v := range t.blocked() {
				if v-before[k] > r.refused[k] {
					r.refused[k] = v - before[k]
				}
			}
			select {
			case <-stopBlocked:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	// The attackers run in a child process at nice 19: they stand for
	// other machines, so their own CPU is kept from competing with the
	// daemon's on the shared cores as far as the scheduler allows.
	var cpu chan struct{}
	if cpuDir != "" {
		cpu = make(chan struct{})
		go func() {
			defer close(cpu)
			t.saveCPU(filepath.Join(cpuDir, a.group+"-"+a.name+".zip"), dur)
		}()
	}
	cpu0, start := benchutil.CPUTime(t.d.Pid()), time.Now()
	saw, acpu, ferr, err := t.spawn(a, dur)
	r.wall, r.daemonCPU, r.attackerCPU = time.Since(start), benchutil.CPUTime(t.d.Pid())-cpu0, acpu
	if cpu != nil {
		<-cpu
	}
	r.saw, r.firstErr, r.attackErr = saw, ferr, err
	close(stopBlocked)
	bwg.Wait()
	lat, errs := p.stop()
	r.probes, r.errs = len(lat)+errs, errs
	r.during.p50, r.during.p95 = percentile(lat, 50), percentile(lat, 95)
	r.peak = sample.Done()[0]
	r.latOK = within2x(r.during.p50, idle.p50, floor)
	r.memBudgetOK = r.memOK(t.budget)

	// Back to idle: poll until every figure is back or settle passes.
	// RssAnon is read from /proc at every poll, but the daemon's figures
	// (metrics, peers) only every fullEvery: each scrape allocates a few
	// hundred KiB in the daemon, and polled every 500 ms they kept it
	// collecting every 4-5 s, never quiet for the 5 s after which it
	// returns its free memory (internal/memtarget), so RssAnon stayed at
	// the memory limit of the live heap instead of near the heap itself
	// (measured with -trace-settle: 19 MiB against 12 after the same
	// attack).
	const fullEvery = 5 * time.Second
	deadline := time.Now().Add(settle)
	var fullAt time.Time
	for {
		if time.Since(fullAt) >= fullEvery {
			if !t.alive() {
				r.exited = true
				return r
			}
			r.after, fullAt = t.snapshot(), time.Now()
		} else {
			r.after.rss = daemon.ProcStatus(t.d.Pid(), "RssAnon")
		}
		if traceSettle {
			fmt.Printf("   settle %5.1fs RssAnon %.1f MiB (the last scrape, %.1fs ago: heap in use %.1f MiB, free %.1f MiB)\n",
				time.Since(deadline.Add(-settle)).Seconds(), mib(r.after.rss), time.Since(fullAt).Seconds(),
				r.after.heapInuse/(1<<20), r.after.heapFree/(1<<20))
		}
		others, mem := t.backTo(idle, r.after)
		r.backIdleButMemory, r.backIdle = others, others && mem
		if (r.backIdle && !traceSettle) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	return r
}

// traceSettle prints the figures of each poll while an attack settles
// (-trace-settle).
var traceSettle bool

// heapDir is where -heap writes the heap profiles ("" none); cpuDir
// where -cpu writes the CPU profiles.
var heapDir, cpuDir string

// saveCPU writes the daemon's CPU profile over the next d to path.
func (t *target) saveCPU(path string, d time.Duration) {
	b, err := t.d.Post("diag/profile", url.Values{"collectors": {"cpu"}, "profile-time": {d.String()}}, nil, "")
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "attack: cpu profile: %v\n", err)
	}
}

// saveHeap writes the daemon's heap profile (diag/profile's heap
// collector, as of its last GC) to path.
func (t *target) saveHeap(path string) {
	b, err := t.d.Post("diag/profile", url.Values{"collectors": {"heap"}, "profile-time": {"0"}}, nil, "")
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "attack: heap profile: %v\n", err)
	}
}

// backTo reports whether f is back to idle: peers at most idle's and
// goroutines within 10% (+25) of idle's (others), and RssAnon within a
// sixteenth of the budget of idle's (mem; 16 MiB at 256 MiB). What the
// daemon still holds then are caches that expire in minutes (the
// seen-message IDs of pubsub, the peerstore records of peers that left a
// minute ago) and maps that do not shrink (bitswap's want ledger).
func (t *target) backTo(idle, f figures) (others, mem bool) {
	others = f.peers <= idle.peers && f.goroutines <= idle.goroutines+idle.goroutines/10+25
	return others, f.rss <= idle.rss+(t.budget<<10)/16
}

// checkIdleMemory: whether RssAnon over idle + budget/16 after an attack
// fails the run (-idle-memory).
var checkIdleMemory = true

// backHolds is whether a return to idle passes the run: all of it
// (back), or all but RssAnon (others) when -idle-memory is report.
func backHolds(others, back bool) bool { return back || (others && !checkIdleMemory) }

func within2x(v, ref, floor time.Duration) bool { return max(v, floor) <= 2*max(ref, floor) }

// alive reports whether the daemon still answers.
func (t *target) alive() bool {
	resp, err := http.Post(t.d.URL+"/api/v0/version", "", nil)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func (r *result) print(w io.Writer, budget int64) {
	verdict := func(ok bool) string {
		if ok {
			return "pass"
		}
		return "FAIL"
	}
	fmt.Fprintf(w, "== %s: %s\n", r.name, verdict(r.ok()))
	if r.attackErr != nil {
		fmt.Fprintf(w, "   attacker error: %v\n", r.attackErr)
	}
	fmt.Fprintf(w, "   attacker saw: %s\n", r.saw)
	if r.firstErr != nil {
		fmt.Fprintf(w, "   first error the attacker met: %v\n", r.firstErr)
	}
	fmt.Fprintf(w, "   %-10s %-34s %-34s %s\n", "", "during", "idle", "check")
	fmt.Fprintf(w, "   %-10s %-34s %-34s %s\n", "RssAnon", fmt.Sprintf("peak %.1f MiB (budget %d)", mib(r.peak), budget),
		fmt.Sprintf("%.1f MiB", mib(r.idle.rss)), verdict(r.memBudgetOK))
	fmt.Fprintf(w, "   %-10s %-34s %-34s %s\n", "RPC", fmt.Sprintf("median %s (%.1fx) p95 %s (%d probes, %d failed)", ms(r.during.p50),
		float64(r.during.p50)/float64(max(r.idle.p50, 1)), ms(r.during.p95), r.probes, r.errs),
		fmt.Sprintf("median %s p95 %s", ms(r.idle.p50), ms(r.idle.p95)), verdict(r.latOK && r.errs == 0))
	if r.wall > 0 {
		fmt.Fprintf(w, "   %-10s daemon %.2f cores, attackers %.2f cores (of the %d the machine has)\n", "CPU",
			r.daemonCPU.Seconds()/r.wall.Seconds(), r.attackerCPU.Seconds()/r.wall.Seconds(), runtime.NumCPU())
	}
	if r.exited {
		fmt.Fprintf(w, "   the daemon EXITED\n")
		return
	}
	fmt.Fprintf(w, "   %-10s %-34s %-34s %s\n", "after", fmt.Sprintf("RssAnon %.1f MiB, %d goroutines, %d peers", mib(r.after.rss), r.after.goroutines, r.after.peers),
		fmt.Sprintf("%.1f MiB, %d goroutines, %d peers", mib(r.idle.rss), r.idle.goroutines, r.idle.peers), verdict(r.backIdle))
	fmt.Fprintf(w, "   %-10s %-34s %-34s\n", "Go heap", fmt.Sprintf("in use %.1f MiB, free %.1f MiB", r.after.heapInuse/(1<<20), r.after.heapFree/(1<<20)),
		fmt.Sprintf("in use %.1f MiB, free %.1f MiB", r.idle.heapInuse/(1<<20), r.idle.heapFree/(1<<20)))
	var keys []string
	for k, v := range r.refused {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		fmt.Fprintf(w, "   refused by the resource manager: nothing\n")
	} else {
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, r.refused[k]))
		}
		fmt.Fprintf(w, "   refused by the resource manager (peak per interval): %s\n", strings.Join(parts, ", "))
	}
}

func mib(kb int64) float64 { return float64(kb) / 1024 }

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
