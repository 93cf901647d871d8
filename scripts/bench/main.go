package main

import (
	"crypto/rand"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cairn/scripts/internal/benchutil"
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
	if _, err := benchutil.WriteRandom(input, size); err != nil {
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
	url, err := benchutil.WaitReady(repo)
	if err != nil {
		return err
	}
	ready := time.Since(start)
	idleRSS := float64(benchutil.ProcStatus(daemon.Process.Pid, "RssAnon")) / 1024

	// add
	s := benchutil.Sample(daemon.Process.Pid, 20*time.Millisecond, "RssAnon")
	wBefore := ioWrite(daemon.Process.Pid)
	t0 := time.Now()
	c, err := benchutil.AddFile(url, "pin=true", input)
	if err != nil {
		return err
	}
	addDur := time.Since(t0)
	addWrite := ioWrite(daemon.Process.Pid) - wBefore
	addRSS := float64(s.Done()[0]) / 1024

	// cat
	s = benchutil.Sample(daemon.Process.Pid, 20*time.Millisecond, "RssAnon")
	t0 = time.Now()
	n, err := benchutil.Cat(url, c, io.Discard)
	if err != nil {
		return err
	}
	catDur := time.Since(t0)
	catRSS := float64(s.Done()[0]) / 1024
	if n != size {
		return fmt.Errorf("cat returned %d bytes, want %d", n, size)
	}

	// Flash wear: bytes the daemon wrote to disk per byte added, for the
	// add above, then for unpinning it and collecting it, then for adding
	// new data of the same size (free pages must be reused, not the file
	// grown).
	pid := daemon.Process.Pid
	w0 := ioWrite(pid)
	if err := benchutil.Post(url, "/api/v0/pin/rm?arg="+c); err != nil {
		return err
	}
	gcStart := time.Now()
	if err := benchutil.Post(url, "/api/v0/repo/gc"); err != nil {
		return err
	}
	gcDur := time.Since(gcStart)
	w1 := ioWrite(pid)
	fileAfterGC := fileSize(filepath.Join(repo, "blocks.db"))
	input2 := filepath.Join(work, "input2.bin")
	if _, err := benchutil.WriteRandom(input2, size); err != nil {
		return err
	}
	w2 := ioWrite(pid)
	if _, err := benchutil.AddFile(url, "pin=true", input2); err != nil {
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
