// Command bench measures add and cat of a large random file through the
// RPC of a cairn daemon started from bin/cairn, and reports the figures as
// ratios to single-core SHA-256 speed measured in the same run. It also
// reports the daemon's peak RssAnon during each phase, its start-to-ready
// time and the binary size. Only loopback is used.
//
//	go run ./scripts/bench [-size 256] [-bin bin/cairn]
package main

import (
	"bufio"
	"crypto/rand"
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	sizeMiB := flag.Int("size", 256, "file size in MiB")
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	flag.Parse()
	if err := run(*bin, int64(*sizeMiB)<<20); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// sha256Speed is the single-core SHA-256 throughput in MB/s.
func sha256Speed(size int64) float64 {
	buf := make([]byte, 1<<20)
	rand.Read(buf)
	h := sha256.New()
	start := time.Now()
	for n := int64(0); n < size; n += int64(len(buf)) {
		h.Write(buf)
	}
	h.Sum(nil)
	return float64(size) / 1e6 / time.Since(start).Seconds()
}

// rssSampler records the peak RssAnon (kB) of pid while running.
type rssSampler struct {
	pid  int
	peak atomic.Int64
	stop chan struct{}
	wg   sync.WaitGroup
}

func procStatus(pid int, key string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), key+":") {
			fs := strings.Fields(sc.Text())
			v, _ := strconv.ParseInt(fs[1], 10, 64)
			return v
		}
	}
	return 0
}

func sample(pid int) *rssSampler {
	s := &rssSampler{pid: pid, stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if v := procStatus(pid, "RssAnon"); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) done() float64 {
	close(s.stop)
	s.wg.Wait()
	return float64(s.peak.Load()) / 1024
}

func run(bin string, size int64) error {
	st, err := os.Stat(bin)
	if err != nil {
		return fmt.Errorf("%s: %w (run make build first)", bin, err)
	}
	work, err := os.MkdirTemp("", "cairn-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	repo := filepath.Join(work, "repo")
	env := append(os.Environ(), "CAIRN_PATH="+repo)

	shaMBs := sha256Speed(size)

	input := filepath.Join(work, "input.bin")
	if err := writeRandom(input, size); err != nil {
		return err
	}
	cpStart := time.Now()
	if err := exec.Command("cp", input, filepath.Join(work, "copy.bin")).Run(); err != nil {
		return err
	}
	cpMBs := float64(size) / 1e6 / time.Since(cpStart).Seconds()
	os.Remove(filepath.Join(work, "copy.bin"))

	init := exec.Command(bin, "init", "--profile=test")
	init.Env = env
	if out, err := init.CombinedOutput(); err != nil {
		return fmt.Errorf("init: %v %s", err, out)
	}
	daemon := exec.Command(bin, "daemon")
	daemon.Env = env
	start := time.Now()
	if err := daemon.Start(); err != nil {
		return err
	}
	defer func() { daemon.Process.Kill(); daemon.Wait() }()
	url, err := waitReady(repo)
	if err != nil {
		return err
	}
	ready := time.Since(start)
	idleRSS := float64(procStatus(daemon.Process.Pid, "RssAnon")) / 1024

	// add
	s := sample(daemon.Process.Pid)
	wBefore := ioWrite(daemon.Process.Pid)
	t0 := time.Now()
	c, err := add(url, input)
	if err != nil {
		return err
	}
	addDur := time.Since(t0)
	addWrite := ioWrite(daemon.Process.Pid) - wBefore
	addRSS := s.done()

	// cat
	s = sample(daemon.Process.Pid)
	t0 = time.Now()
	n, err := cat(url, c)
	if err != nil {
		return err
	}
	catDur := time.Since(t0)
	catRSS := s.done()
	if n != size {
		return fmt.Errorf("cat returned %d bytes, want %d", n, size)
	}

	// Flash wear: bytes the daemon wrote to disk per byte added, for the
	// add above, then for unpinning it and collecting it, then for adding
	// new data of the same size (free pages must be reused, not the file
	// grown).
	pid := daemon.Process.Pid
	w0 := ioWrite(pid)
	if err := post(url, "/api/v0/pin/rm?arg="+c); err != nil {
		return err
	}
	gcStart := time.Now()
	if err := post(url, "/api/v0/repo/gc"); err != nil {
		return err
	}
	gcDur := time.Since(gcStart)
	w1 := ioWrite(pid)
	fileAfterGC := fileSize(filepath.Join(repo, "blocks.db"))
	input2 := filepath.Join(work, "input2.bin")
	if err := writeRandom(input2, size); err != nil {
		return err
	}
	w2 := ioWrite(pid)
	if _, err := add(url, input2); err != nil {
		return err
	}
	w3 := ioWrite(pid)
	fileAfterReadd := fileSize(filepath.Join(repo, "blocks.db"))

	mb := float64(size) / 1e6
	addMBs, catMBs := mb/addDur.Seconds(), mb/catDur.Seconds()
	fmt.Printf("cairn benchmark: %d MiB random file through the RPC (loopback)\n", size>>20)
	fmt.Printf("  reference: sha256 single core %.0f MB/s, cp %.0f MB/s\n", shaMBs, cpMBs)
	fmt.Printf("  add: %6.1f MB/s = %.2f x sha256, %.2f x cp; daemon peak RssAnon %.1f MiB\n", addMBs, addMBs/shaMBs, addMBs/cpMBs, addRSS)
	fmt.Printf("  cat: %6.1f MB/s = %.2f x sha256, %.2f x cp; daemon peak RssAnon %.1f MiB\n", catMBs, catMBs/shaMBs, catMBs/cpMBs, catRSS)
	fmt.Printf("  daemon start to ready: %d ms; idle RssAnon %.1f MiB\n", ready.Milliseconds(), idleRSS)
	fmt.Printf("  flash: add wrote %.3f bytes per byte added (first add; write_bytes of the daemon)\n", float64(addWrite)/float64(size))
	fmt.Printf("  flash: unpin + GC of it took %d ms and wrote %.4f bytes per byte freed\n", gcDur.Milliseconds(), float64(w1-w0)/float64(size))
	fmt.Printf("  flash: a second add of %d MiB wrote %.3f bytes per byte; blocks.db %.1f MiB after GC -> %.1f MiB after it (free pages reused)\n",
		size>>20, float64(w3-w2)/float64(size), float64(fileAfterGC)/(1<<20), float64(fileAfterReadd)/(1<<20))
	fmt.Printf("  binary %s: %.1f MiB\n", bin, float64(st.Size())/(1<<20))
	return nil
}

func writeRandom(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for n := int64(0); n < size; n += int64(len(buf)) {
		rand.Read(buf)
		if _, err := f.Write(buf); err != nil {
			return err
		}
	}
	return f.Sync()
}

func waitReady(repo string) (string, error) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(repo, "api")); err == nil && len(b) > 0 {
			a := string(b)
			url := "http://127.0.0.1:" + a[strings.LastIndex(a, "/")+1:]
			if resp, err := http.Post(url+"/api/v0/version", "", nil); err == nil {
				resp.Body.Close()
				return url, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return "", fmt.Errorf("daemon not ready after 20s")
}

// add streams the file as multipart, never holding it in memory.
func add(url, path string) (string, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, err := mw.CreateFormFile("file", filepath.Base(path))
		if err == nil {
			var f *os.File
			if f, err = os.Open(path); err == nil {
				_, err = io.Copy(w, f)
				f.Close()
			}
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	resp, err := http.Post(url+"/api/v0/add?pin=true", mw.FormDataContentType(), pr)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var last struct{ Hash string }
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct{ Hash string }
		if err := dec.Decode(&ev); err != nil {
			break
		}
		if ev.Hash != "" {
			last = ev
		}
	}
	if e := resp.Trailer.Get("X-Stream-Error"); e != "" || last.Hash == "" {
		return "", fmt.Errorf("add failed: status %d %s", resp.StatusCode, e)
	}
	return last.Hash, nil
}

func cat(url, c string) (int64, error) {
	resp, err := http.Post(url+"/api/v0/cat?arg="+c, "", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, err
	}
	if e := resp.Trailer.Get("X-Stream-Error"); e != "" {
		return n, fmt.Errorf("cat: %s", e)
	}
	return n, nil
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

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func post(url, path string) error {
	resp, err := http.Post(url+path, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 || resp.Trailer.Get("X-Stream-Error") != "" {
		return fmt.Errorf("%s: status %d %s", path, resp.StatusCode, resp.Trailer.Get("X-Stream-Error"))
	}
	return nil
}
