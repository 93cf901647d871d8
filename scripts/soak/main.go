// Command soak runs cairn on the pi-zero-2w budget, inside a memory cgroup
// of that size, under mixed load for a long time, killing it with SIGKILL
// every few minutes, and then checks that nothing acknowledged was lost
// (not CI).
//
// The load, all at once: an add of a random file of 1 KiB to 2 MiB every
// 0.5 s (pinned; each acknowledged add is remembered with its SHA-256),
// cats of acknowledged adds (compared), pin/add and pin/rm of a scratch set,
// repo/gc every 20 s, GET of the status page on the module port, 20
// slowloris connections on the RPC, and another peer of the LAN (peer.go:
// a go-libp2p host in this process, over loopback) that fetches the
// blocks of acknowledged adds over bitswap, asks the LAN DHT and publishes
// on a pubsub topic the daemon subscribes to, a step every 200 ms. The
// daemon runs online on loopback only (the test profile, no bootstrap, no
// mDNS, the LAN DHT serving; this process runs in a network namespace of
// its own). Every -kill the daemon gets SIGKILL and is started again on
// the same repo. In each of its lives the goroutines (go_goroutines), open
// descriptors and RssAnon are read 20 s in and at its end, and must not
// grow: goroutines and descriptors by at most 10% + 25, RssAnon by at most
// an eighth of the budget. At the end it is stopped, `cairn repo verify`
// runs offline, the daemon starts once more and every acknowledged add is
// read back whole. It prints the peak RssAnon (and the cgroup's peak),
// each life's figures, requests served, errors (those while the daemon
// was down counted apart), what the peer did, and acknowledged against
// present adds.
//
//	make soak [SOAK_ARGS='-duration 30m -kill 5m']
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"
	"cairn/scripts/internal/lanpeer"
)

func main() {
	daemon.EnterNetNS()
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	board := flag.String("board", "pi-zero-2w", "board profile (its budget is the cgroup's size)")
	dur := flag.Duration("duration", 30*time.Minute, "length of the load")
	kill := flag.Duration("kill", 5*time.Minute, "time between two SIGKILLs")
	flag.Parse()
	if err := run(*bin, *board, *dur, *kill); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// soak is the state shared by the load's workers.
type soak struct {
	peer  *peerLoad
	mu    sync.Mutex
	url   string // RPC; "" while the daemon is down
	mod   string // status page URL
	acked map[string][32]byte
	order []string

	served, errs, downErrs atomic.Int64
}

func (s *soak) urls() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url, s.mod
}

// count records the outcome of one request.
func (s *soak) count(err error) {
	switch u, _ := s.urls(); {
	case err == nil:
		s.served.Add(1)
	case u == "":
		s.downErrs.Add(1)
	default:
		s.errs.Add(1)
		fmt.Fprintln(os.Stderr, "error:", err)
	}
}

var moduleURL = regexp.MustCompile(`Module app (http://127\.0\.0\.1:\d+/status/)`)

func (s *soak) up(d *daemon.Daemon) error {
	m := moduleURL.FindAllStringSubmatch(d.Log(), -1)
	s.mu.Lock()
	s.url = d.URL
	if len(m) > 0 {
		s.mod = m[len(m)-1][1]
	}
	s.mu.Unlock()
	return s.peer.attach(d)
}

func (s *soak) down() {
	s.peer.detach()
	s.mu.Lock()
	s.url, s.mod = "", ""
	s.mu.Unlock()
}

// life is what a daemon holds at a moment of one of its lives.
type life struct {
	goroutines, fds int
	rss             int64 // kB
}

func lifeOf(d *daemon.Daemon) life {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", d.Pid()))
	return life{goroutines: int(lanpeer.Metrics(d.URL)["go_goroutines"]), fds: len(ents), rss: daemon.ProcStatus(d.Pid(), "RssAnon")}
}

// grew reports how last grew past first beyond the bounds: goroutines
// and descriptors by 10% + 25, RssAnon by an eighth of budget (MiB).
func grew(first, last life, budget int64) error {
	var errs []string
	if last.goroutines > first.goroutines*11/10+25 {
		errs = append(errs, fmt.Sprintf("goroutines %d -> %d", first.goroutines, last.goroutines))
	}
	if last.fds > first.fds*11/10+25 {
		errs = append(errs, fmt.Sprintf("descriptors %d -> %d", first.fds, last.fds))
	}
	if last.rss > first.rss+budget<<10/8 {
		errs = append(errs, fmt.Sprintf("RssAnon %.1f -> %.1f MiB", float64(first.rss)/1024, float64(last.rss)/1024))
	}
	if errs != nil {
		return fmt.Errorf("%s", strings.Join(errs, ", "))
	}
	return nil
}

// lifeWarmup is how long into a life its first figures are read.
const lifeWarmup = 20 * time.Second

func run(bin, board string, dur, killEvery time.Duration) error {
	// The daemon runs online: only where loopback is the only network.
	if err := daemon.LoopbackOnly(); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "cairn-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	budget, err := benchutil.BoardBudget(bin, work, board)
	if err != nil {
		return err
	}
	cg, err := benchutil.NewCgroup(fmt.Sprintf("cairn-soak-%d", os.Getpid()), budget<<20)
	if err != nil {
		return err
	}
	defer cg.Remove()
	// Online on loopback: the board's profile makes the DHT a client
	// only; Routing.Type auto makes the LAN DHT serve, as Kubo's default
	// does, so that the peer's queries are answered.
	opts := daemon.Options{Board: board, CgroupProcs: cg.ProcsFile(), Config: map[string]string{
		"Modules.Enabled":        `["http_status"]`,
		"Pubsub.Enabled":         `true`,
		"Routing.Type":           `"auto"`,
		"Bootstrap":              `[]`,
		"Discovery.MDNS.Enabled": `false`,
	}}
	d, err := daemon.StartCairn(bin, filepath.Join(work, "repo"), opts)
	if err != nil {
		return err
	}
	s := &soak{acked: map[string][32]byte{}}
	if s.peer, err = newPeerLoad(s); err != nil {
		d.Stop()
		return err
	}
	defer s.peer.close()
	if err := s.up(d); err != nil {
		d.Stop()
		return err
	}
	var peak int64
	sample := benchutil.Sample(d.Pid(), 100*time.Millisecond, "RssAnon")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	worker := func(every time.Duration, fn func(r *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(rand.Uint64(), 1))
			for {
				select {
				case <-stop:
					return
				case <-time.After(every):
				}
				fn(r)
			}
		}()
	}
	// About 1 MB/s of adds: 1.8 GB kept over 30 minutes.
	worker(500*time.Millisecond, s.add)
	worker(50*time.Millisecond, s.cat)
	worker(200*time.Millisecond, s.pins)
	worker(20*time.Second, func(*rand.Rand) { s.post("/api/v0/repo/gc?silent=true") })
	worker(100*time.Millisecond, s.module)
	for i := 0; i < 20; i++ {
		worker(time.Second, s.slowloris)
	}
	worker(peerEvery, s.peer.run)

	end := time.Now().Add(dur)
	kills := 0
	var lives []string
	var grown []error
	// live lets the daemon run until the next kill or the end, reading
	// its figures lifeWarmup in and at the end.
	live := func() {
		span := min(killEvery, time.Until(end))
		warm := min(lifeWarmup, span/2)
		time.Sleep(warm)
		first := lifeOf(d)
		time.Sleep(span - warm)
		last := lifeOf(d)
		lives = append(lives, fmt.Sprintf("life %d: goroutines %d -> %d, descriptors %d -> %d, RssAnon %.1f -> %.1f MiB",
			len(lives)+1, first.goroutines, last.goroutines, first.fds, last.fds, float64(first.rss)/1024, float64(last.rss)/1024))
		if err := grew(first, last, budget); err != nil {
			grown = append(grown, fmt.Errorf("life %d: %w", len(lives), err))
		}
	}
	for {
		live()
		if !time.Now().Before(end) {
			break
		}
		s.down()
		peak = max(peak, sample.Done()[0])
		d.Kill()
		kills++
		if err := d.Restart(opts); err != nil {
			return fmt.Errorf("restart after SIGKILL %d: %w", kills, err)
		}
		sample = benchutil.Sample(d.Pid(), 100*time.Millisecond, "RssAnon")
		if err := s.up(d); err != nil {
			return fmt.Errorf("after SIGKILL %d: %w", kills, err)
		}
	}
	close(stop)
	wg.Wait()
	peak = max(peak, sample.Done()[0])
	s.down()
	d.Stop()

	verify, verr := d.CLI("repo", "verify")
	if err := d.Restart(daemon.Options{Offline: true}); err != nil {
		return fmt.Errorf("start for the final check: %w", err)
	}
	defer d.Stop()
	present := 0
	var lost []string
	for _, c := range s.order {
		h, want := sha256.New(), s.acked[c]
		if _, err := benchutil.Cat(d.URL, c, h); err == nil && bytes.Equal(h.Sum(nil), want[:]) {
			present++
		} else {
			lost = append(lost, c)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("soak: cairn --board=%s in a %d MiB memory cgroup, %v of mixed load, SIGKILL every %v (%d kills); load average %s\n",
		board, budget, dur, killEvery, kills, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("peak RssAnon %d MiB (cgroup peak %d MiB)\n", peak>>10, cg.Peak()>>20)
	for _, l := range lives {
		fmt.Println(l)
	}
	fmt.Printf("requests served %d, errors %d (and %d while the daemon was down)\n", s.served.Load(), s.errs.Load(), s.downErrs.Load())
	peerLine, peerErr := s.peer.report()
	fmt.Println(peerLine)
	fmt.Printf("acknowledged adds %d, present and whole %d\n", len(s.order), present)
	lines := strings.Split(strings.TrimSpace(verify), "\n")
	fmt.Printf("repo verify: %v %s\n", verr, lines[len(lines)-1])
	if len(lost) > 0 || verr != nil {
		return fmt.Errorf("%d acknowledged adds lost or damaged: %v", len(lost), lost)
	}
	return errors.Join(append(grown, peerErr)...)
}

// add adds a random file and remembers it once acknowledged.
func (s *soak) add(r *rand.Rand) {
	u, _ := s.urls()
	if u == "" {
		return
	}
	data := make([]byte, 1<<10+r.IntN(2<<20))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	c, err := benchutil.Add(u, "pin=true&quieter=true", "f", func(w io.Writer) error { _, err := w.Write(data); return err })
	s.count(err)
	if err == nil {
		s.mu.Lock()
		if _, ok := s.acked[c]; !ok {
			s.order = append(s.order, c)
		}
		s.acked[c] = sha256.Sum256(data)
		s.mu.Unlock()
	}
}

// cat reads an acknowledged add back and compares it.
func (s *soak) cat(r *rand.Rand) {
	u, _ := s.urls()
	s.mu.Lock()
	if u == "" || len(s.order) == 0 {
		s.mu.Unlock()
		return
	}
	c := s.order[r.IntN(len(s.order))]
	want := s.acked[c]
	s.mu.Unlock()
	h := sha256.New()
	_, err := benchutil.Cat(u, c, h)
	if err == nil && !bytes.Equal(h.Sum(nil), want[:]) {
		err = fmt.Errorf("cat %s: wrong bytes", c)
	}
	s.count(err)
}

// pins adds an unpinned scratch file, pins it, and unpins it (the GC then
// removes it).
func (s *soak) pins(r *rand.Rand) {
	u, _ := s.urls()
	if u == "" {
		return
	}
	data := fmt.Sprintf("scratch %d", r.Uint64())
	c, err := benchutil.Add(u, "pin=false&quieter=true", "s", func(w io.Writer) error { _, err := io.WriteString(w, data); return err })
	s.count(err)
	if err != nil {
		return
	}
	s.post("/api/v0/pin/add?arg=" + c)
	s.post("/api/v0/pin/rm?arg=" + c)
}

func (s *soak) post(path string) {
	u, _ := s.urls()
	if u == "" {
		return
	}
	s.count(benchutil.Post(u, path))
}

// module fetches the status page.
func (s *soak) module(*rand.Rand) {
	_, m := s.urls()
	if m == "" {
		return
	}
	resp, err := http.Get(m)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			err = fmt.Errorf("status page: %s", resp.Status)
		}
	}
	s.count(err)
}

// slowloris holds one connection sending a request head a line every 5 s
// until the daemon closes it.
func (s *soak) slowloris(*rand.Rand) {
	u, _ := s.urls()
	if u == "" {
		return
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(u, "http://"))
	if err != nil {
		return
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/v0/version HTTP/1.1\r\nHost: x\r\n")
	gone := make(chan struct{})
	go func() { bufio.NewReader(c).ReadByte(); close(gone) }()
	for {
		select {
		case <-gone:
			return
		case <-time.After(5 * time.Second):
			if _, err := fmt.Fprintf(c, "X-a: b\r\n"); err != nil {
				return
			}
		}
	}
}
