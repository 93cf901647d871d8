package benchutil

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"cairn/internal/daemon"
)

// Sampler records the peak of some /proc/<pid>/status fields.
type Sampler struct {
	peaks []atomic.Int64
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	out   []int64
}

// Sample reads keys of pid every interval until Done.
func Sample(pid int, every time.Duration, keys ...string) *Sampler {
	s := &Sampler{peaks: make([]atomic.Int64, len(keys)), stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			for i, k := range keys {
				if v := daemon.ProcStatus(pid, k); v > s.peaks[i].Load() {
					s.peaks[i].Store(v)
				}
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

// Done stops sampling and returns the peaks (kB), in the keys' order.
// Later calls return the same peaks.
func (s *Sampler) Done() []int64 {
	s.once.Do(func() {
		close(s.stop)
		s.wg.Wait()
		s.out = make([]int64, len(s.peaks))
		for i := range s.peaks {
			s.out[i] = s.peaks[i].Load()
		}
	})
	return s.out
}

// WriteRandom writes size random bytes to path, fsynced, and returns
// their SHA-256.
func WriteRandom(path string, size int64) ([32]byte, error) {
	var sum [32]byte
	f, err := os.Create(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for n := int64(0); n < size; n += int64(len(buf)) {
		rand.Read(buf)
		h.Write(buf)
		if _, err := f.Write(buf); err != nil {
			return sum, err
		}
	}
	copy(sum[:], h.Sum(nil))
	return sum, f.Sync()
}

// Add streams one file named name, whose bytes write produces, as a
// multipart add with the given query ("pin=true"), never holding it in
// memory, and returns the last hash of the events.
func Add(url, query, name string, write func(io.Writer) error) (string, error) {
	return addParts(url, query, func(mw *multipart.Writer) error {
		w, err := mw.CreateFormFile("file", name)
		if err != nil {
			return err
		}
		return write(w)
	})
}

// addParts streams the parts that parts writes as one multipart add and
// returns the last hash of the events.
func addParts(url, query string, parts func(*multipart.Writer) error) (string, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := parts(mw)
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	resp, err := http.Post(url+"/api/v0/add?"+query, mw.FormDataContentType(), pr)
	if err != nil {
		return "", err
	}
	return addResult(resp)
}

// addResult reads the events of an add's answer and returns the last
// hash.
func addResult(resp *http.Response) (string, error) {
	defer resp.Body.Close()
	var last, msg string
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct{ Hash, Message string }
		if err := dec.Decode(&ev); err != nil {
			break
		}
		if ev.Hash != "" {
			last = ev.Hash
		}
		if ev.Message != "" {
			msg = ev.Message
		}
	}
	if e := resp.Trailer.Get("X-Stream-Error"); e != "" || last == "" {
		return "", fmt.Errorf("add failed: status %d %s%s", resp.StatusCode, e, msg)
	}
	return last, nil
}

// AddFile adds the file at path as one multipart part, as Add does, but
// with the body's length known, as curl -F sends a file: the client
// stands for another machine on the LAN, so it should take as little of
// the shared cores as it can, and a known length spares it the pipe and
// the chunked framing of a stream (the file goes from its reads to the
// socket in 32 KiB writes). The same request goes to cairn and to Kubo.
func AddFile(url, query, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	body, n, ctype, err := fileBody(f)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequest("POST", url+"/api/v0/add?"+query, body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", ctype)
	req.ContentLength = n
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	return addResult(resp)
}

// fileBody is the multipart body of Add for the file f: its reader, its
// length and its Content-Type.
func fileBody(f *os.File) (io.Reader, int64, string, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, "", err
	}
	var head, tail bytes.Buffer
	mw := multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("file", filepath.Base(f.Name())); err != nil {
		return nil, 0, "", err
	}
	// Close of a writer without parts writes the closing delimiter
	// alone: CRLF, then the boundary with two dashes on each side.
	mw2 := multipart.NewWriter(&tail)
	if err := mw2.SetBoundary(mw.Boundary()); err != nil {
		return nil, 0, "", err
	}
	if err := mw2.Close(); err != nil {
		return nil, 0, "", err
	}
	n := int64(head.Len()) + st.Size() + int64(tail.Len())
	return io.MultiReader(&head, f, &tail), n, mw.FormDataContentType(), nil
}

// AddRandom adds size random bytes (see Add).
func AddRandom(url, query string, size int64) (string, error) {
	return Add(url, query, "random.bin", func(w io.Writer) error {
		buf := make([]byte, 1<<20)
		for n := int64(0); n < size; n += int64(len(buf)) {
			rand.Read(buf)
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
}

// Cat copies the bytes of c to w and returns their count; a trailer error
// is an error.
func Cat(url, c string, w io.Writer) (int64, error) {
	return Stream(url, "/api/v0/cat?arg="+c, w)
}

// Post calls an RPC path (with its query) and fails on a non-200 answer or
// a trailer error.
func Post(url, path string) error {
	resp, err := http.Post(url+path, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Trailer.Get("X-Stream-Error") != "" {
		return fmt.Errorf("%s: status %d %s %s", path, resp.StatusCode, body, resp.Trailer.Get("X-Stream-Error"))
	}
	return nil
}

// statField is field n (1-based, as proc(5) numbers them) of
// /proc/<pid>/stat as a number; 0 when it cannot be read.
func statField(pid, n int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	// Fields after the command name, which is in parentheses, start at 3.
	fs := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if n-3 >= len(fs) {
		return 0
	}
	v, _ := strconv.ParseInt(fs[n-3], 10, 64)
	return v
}

// MajorFaults is majflt of /proc/<pid>/stat: page faults that read from
// disk.
func MajorFaults(pid int) int64 { return statField(pid, 12) }

// CPUTime is the CPU time pid has used (utime + stime of
// /proc/<pid>/stat, in clock ticks of 10 ms).
func CPUTime(pid int) time.Duration {
	return time.Duration(statField(pid, 14)+statField(pid, 15)) * 10 * time.Millisecond
}

// BoardBudget is Budget.MemoryMiB of a repo inited with the board profile.
func BoardBudget(bin, work, board string) (int64, error) {
	repo := filepath.Join(work, "budget-probe")
	defer os.RemoveAll(repo)
	d, err := daemon.StartCairn(bin, repo, daemon.Options{Offline: true, Board: board})
	if err != nil {
		return 0, err
	}
	d.Stop()
	var cfg struct{ Budget struct{ MemoryMiB int64 } }
	b, err := os.ReadFile(filepath.Join(repo, "config"))
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return 0, err
	}
	if cfg.Budget.MemoryMiB <= 0 {
		return 0, fmt.Errorf("board %s has no memory budget", board)
	}
	return cfg.Budget.MemoryMiB, nil
}

// DiskUsage is what `du -s --block-size=1 dir` prints: the bytes of disk
// allocated to dir and everything under it (st_blocks, so a sparse file
// counts what it holds; a hard-linked file once).
func DiskUsage(dir string) (int64, error) {
	var total int64
	seen := map[uint64]bool{}
	err := filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // removed while walking (a temporary file)
			}
			return err
		}
		fi, err := e.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if st.Nlink > 1 && !fi.IsDir() { // a hard link: count its inode once
			if seen[uint64(st.Ino)] {
				return nil
			}
			seen[uint64(st.Ino)] = true
		}
		total += int64(st.Blocks) * 512
		return nil
	})
	return total, err
}

// LoadAvg is the first three fields of /proc/loadavg ("1.53 1.58 1.44"),
// for a table's title; "?" where it cannot be read.
func LoadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if fs := strings.Fields(string(b)); len(fs) >= 3 {
		return strings.Join(fs[:3], " ")
	}
	return "?"
}
