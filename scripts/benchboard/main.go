package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"cairn/scripts/internal/benchutil"
)

func main() {
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	sizeMiB := flag.Int64("size", 1024, "file size in MiB")
	pins := flag.Int("pins", 10000, "pinned blocks to store and list")
	boards := flag.String("boards", "pi-zero-2w,pi4-8g", "board profiles to measure")
	dir := flag.String("dir", "", "work directory (default: a new one under $TMPDIR)")
	flag.Parse()
	if err := run(*bin, *sizeMiB<<20, *pins, strings.Split(*boards, ","), *dir); err != nil {
		fmt.Fprintln(os.Stderr, "benchboard:", err)
		os.Exit(1)
	}
}

func run(bin string, size int64, pins int, boards []string, dir string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: %w (run make build first)", bin, err)
	}
	work := dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "cairn-benchboard-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	input := filepath.Join(work, "input.bin")
	sum, err := benchutil.WriteRandom(input, size)
	if err != nil {
		return err
	}
	var failed []string
	for _, b := range boards {
		r, err := measure(bin, work, b, input, size, sum, pins)
		if err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
		r.print()
		if !r.underBudget() {
			failed = append(failed, b)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("over budget: %s", strings.Join(failed, ", "))
	}
	return nil
}

type phase struct {
	name    string
	rssAnon int64 // peak, kB
	rssFile int64 // peak, kB
	dur     time.Duration
	bytes   int64
	note    string
	skipped bool // the daemon does not have the command yet
}

type result struct {
	board     string
	budgetMiB int64
	goMemMiB  int64
	idleAnon  int64
	phases    []phase
	vmHWM     int64 // kB, at the end
}

func (r *result) peakAnon() int64 {
	var m int64
	for _, p := range r.phases {
		m = max(m, p.rssAnon)
	}
	return m
}

func (r *result) underBudget() bool { return r.peakAnon() < r.budgetMiB<<10 }

func mib(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

func (r *result) print() {
	fmt.Printf("board %s: budget (MemoryMax) %d MiB, GOMEMLIMIT %d MiB; idle RssAnon %s\n", r.board, r.budgetMiB, r.goMemMiB, mib(r.idleAnon))
	for _, p := range r.phases {
		speed := fmt.Sprintf("%8.2f s   ", p.dur.Seconds())
		switch {
		case p.bytes > 0:
			speed = fmt.Sprintf("%7.1f MB/s", float64(p.bytes)/1e6/p.dur.Seconds())
		case p.skipped:
			speed = "         -   "
		}
		fmt.Printf("  %-26s %s  peak RssAnon %9s (%4.1f%% of budget)  peak RssFile %9s  %s\n", p.name, speed, mib(p.rssAnon),
			100*float64(p.rssAnon)/float64(r.budgetMiB<<10), mib(p.rssFile), p.note)
	}
	verdict := "UNDER budget"
	if !r.underBudget() {
		verdict = "OVER budget"
	}
	fmt.Printf("  VmHWM %s (anon + file-backed pages of the bbolt map; the map's pages are page cache the kernel reclaims under MemoryHigh)\n", mib(r.vmHWM))
	fmt.Printf("  peak RssAnon %s = %.1f%% of the %d MiB budget: %s\n\n", mib(r.peakAnon()), 100*float64(r.peakAnon())/float64(r.budgetMiB<<10), r.budgetMiB, verdict)
}

func measure(bin, work, board, input string, size int64, sum [32]byte, pins int) (*result, error) {
	repo := filepath.Join(work, "repo-"+board)
	defer os.RemoveAll(repo)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") {
			env = append(env, kv)
		}
	}
	env = append(env, "CAIRN_PATH="+repo)
	init := exec.Command(bin, "init", "--profile=test", "--board="+board)
	init.Env = env
	if out, err := init.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("init: %v %s", err, out)
	}
	var cfg struct {
		Budget struct{ MemoryMiB, GoMemLimitMiB int64 }
	}
	b, err := os.ReadFile(filepath.Join(repo, "config"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, err
	}
	daemon := exec.Command(bin, "daemon")
	daemon.Env = env
	var log bytes.Buffer
	daemon.Stdout, daemon.Stderr = &log, &log
	if err := daemon.Start(); err != nil {
		return nil, err
	}
	defer func() {
		if daemon.ProcessState == nil {
			daemon.Process.Kill()
			daemon.Wait()
		}
	}()
	url, err := benchutil.WaitReady(repo)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, log.String())
	}
	pid := daemon.Process.Pid
	r := &result{board: board, budgetMiB: cfg.Budget.MemoryMiB, goMemMiB: cfg.Budget.GoMemLimitMiB,
		idleAnon: benchutil.ProcStatus(pid, "RssAnon")}

	step := func(name string, bytes int64, fn func() (string, error)) error {
		s := benchutil.Sample(pid, 10*time.Millisecond, "RssAnon", "RssFile")
		t0 := time.Now()
		note, err := fn()
		d := time.Since(t0)
		peaks := s.Done()
		anon, file := peaks[0], peaks[1]
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r.phases = append(r.phases, phase{name: name, rssAnon: anon, rssFile: file, dur: d, bytes: bytes, note: note,
			skipped: strings.Contains(note, "not implemented")})
		return nil
	}
	var root string
	if err := step(fmt.Sprintf("add %d MiB", size>>20), size, func() (string, error) {
		var err error
		root, err = benchutil.AddFile(url, "pin=true&quieter=true", input)
		return "", err
	}); err != nil {
		return nil, err
	}
	if err := step(fmt.Sprintf("cat %d MiB", size>>20), size, func() (string, error) {
		h := sha256.New()
		n, err := benchutil.Cat(url, root, h)
		var got [32]byte
		copy(got[:], h.Sum(nil))
		if err == nil && (n != size || got != sum) {
			err = fmt.Errorf("cat returned %d bytes, SHA-256 %x; want %d bytes, %x", n, got, size, sum)
		}
		return "SHA-256 matches", err
	}); err != nil {
		return nil, err
	}
	if err := step(fmt.Sprintf("block put --pin x%d", pins), 0, func() (string, error) {
		return "", putPinned(url, pins)
	}); err != nil {
		return nil, err
	}
	if err := step(fmt.Sprintf("list %d pins", pins), 0, func() (string, error) {
		return listPins(url, pins)
	}); err != nil {
		return nil, err
	}
	if err := step("refs/local (all blocks)", 0, func() (string, error) {
		n, err := countLines(url + "/api/v0/refs/local")
		return fmt.Sprintf("%d blocks listed", n), err
	}); err != nil {
		return nil, err
	}
	r.vmHWM = benchutil.ProcStatus(pid, "VmHWM")
	resp, err := http.Post(url+"/api/v0/shutdown", "", nil)
	if err == nil {
		resp.Body.Close()
	}
	done := make(chan error, 1)
	go func() { done <- daemon.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("daemon exit: %v: %s", err, log.String())
		}
	case <-time.After(15 * time.Second):
		return nil, fmt.Errorf("daemon did not stop after shutdown")
	}
	return r, nil
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

// listPins lists the recursive pins with pin/ls when the daemon has it.
func listPins(url string, want int) (string, error) {
	resp, err := http.Post(url+"/api/v0/pin/ls?type=recursive&stream=true", "", nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		var e struct{ Message string }
		json.Unmarshal(b, &e)
		if strings.Contains(e.Message, "not implemented") {
			return "pin/ls: " + e.Message + " (pins measured by block put --pin above)", nil
		}
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

func countLines(u string) (int, error) {
	resp, err := http.Post(u, "", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}
