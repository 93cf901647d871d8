package commands_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"cairn/internal/testutil"
)

// sparseTar is an old-GNU sparse archive of one file of size bytes:
// zeros but its last byte, which is 'x'. It takes 2 KiB.
func sparseTar(size int64) []byte {
	h := make([]byte, 512)
	copy(h, "sparse.bin")
	field := func(off, n int, v int64) { copy(h[off:off+n], fmt.Sprintf("%0*o\x00", n-1, v)) }
	field(100, 8, 0o644)
	field(108, 8, 0)
	field(116, 8, 0)
	field(124, 12, 1) // stored bytes
	field(136, 12, 0)
	h[156] = 'S'
	copy(h[257:], "ustar  \x00")
	field(386, 12, size-1) // the one stored region: offset, length
	field(398, 12, 1)
	field(483, 12, size) // real size
	copy(h[148:156], "        ")
	sum := 0
	for _, b := range h {
		sum += int(b)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
	data := make([]byte, 512)
	data[0] = 'x'
	return append(append(h, data...), make([]byte, 1024)...)
}

// waitStopped waits until no goroutine runs fn (a stack frame naming
// it), and fails after timeout.
func waitStopped(t *testing.T, fn string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 1<<20)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, fn) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still running %v after the client left:\n%s", fn, timeout, stacks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cpuTime is the CPU time this process used so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Ensure a command whose client hangs up stops its work: tar/add of a
// sparse 4 GiB tar (2 KiB sent) stops within a second of the hang-up,
// leaves no goroutine behind and writes no more blocks.
func TestHangup_StopsTarAdd(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	// One request first, so that the server's own goroutines exist.
	testutil.PostURL(t, srv.URL+"/api/v0/version", nil)
	time.Sleep(100 * time.Millisecond)
	base := runtime.NumGoroutine()

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "sparse.tar")
	w.Write(sparseTar(4 << 30))
	mw.Close()
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /api/v0/tar/add HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", mw.FormDataContentType(), body.Len())
	c.Write(body.Bytes())
	time.Sleep(300 * time.Millisecond) // the import is under way
	c.Close()
	waitStopped(t, "ImportTar", 2*time.Second)
	used, cpu := n.Store.BlockBytes(), cpuTime(t)
	time.Sleep(time.Second)
	if now := n.Store.BlockBytes(); now != used {
		t.Fatalf("blocks still written after the client left: %d then %d bytes", used, now)
	}
	if d := cpuTime(t) - cpu; d > 300*time.Millisecond {
		t.Fatalf("%v of CPU in the second after the command stopped", d)
	}
	if g := runtime.NumGoroutine(); g > base+2 {
		t.Fatalf("%d goroutines after the client left, %d before", g, base)
	}
}

// Ensure add refuses a max-file-links that can never finish (a file node
// of one link), as a 400-class answer before reading the body.
func TestAdd_MaxFileLinksOne(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "f")
	w.Write(bytes.Repeat([]byte("a"), 300<<10))
	mw.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp := rpcPost(t, srv, "add", map[string][]string{"max-file-links": {"1"}}, &body, mw.FormDataContentType())
		b, _ := io.ReadAll(resp.Body)
		msg := string(b) + resp.Trailer.Get("X-Stream-Error")
		if !strings.Contains(msg, "max-file-links must be at least 2, got 1") {
			t.Errorf("add max-file-links=1: %d %q", resp.StatusCode, msg)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("add max-file-links=1 still running after 10s")
	}
}
