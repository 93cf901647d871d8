package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cairn/board"
	"cairn/node"
	"cairn/node/config"
	"cairn/storage"
)

// setConfig sets dotted keys in repo's config file.
func setConfig(t *testing.T, repo string, kv map[string]any) {
	t.Helper()
	doc, err := config.ReadDoc(repo)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range kv {
		if err := config.SetKey(doc, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := config.WriteDoc(repo, doc); err != nil {
		t.Fatal(err)
	}
}

func loadConfig(t *testing.T, repo string) *config.Config {
	t.Helper()
	doc, err := config.ReadDoc(repo)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startDaemon runs `cairn daemon` on repo with extra environment and
// returns it with its RPC URL and output.
func startDaemon(t *testing.T, repo string, env ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	return startDaemonFlags(t, repo, nil, env...)
}

// startDaemonFlags is startDaemon with daemon flags.
func startDaemonFlags(t *testing.T, repo string, args []string, env ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"daemon"}, args...)...)
	cmd.Env = append(append(os.Environ(), "CAIRN_TEST_MAIN=1", "CAIRN_PATH="+repo), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if a, _ := node.ReadAPIFile(repo); a != "" {
			return cmd, "http://127.0.0.1:" + a[strings.LastIndex(a, "/")+1:], out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("daemon did not start: %s", out.String())
	return nil, "", nil
}

// waitExit waits up to d for cmd and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		t.Fatalf("daemon still running after %s", d)
	}
	return -1
}

// Ensure every board profile makes a config that loads, opens as a node,
// and whose limits are consistent: resource manager < GOMEMLIMIT <
// MemoryHigh < MemoryMax, StorageMax within the disk.
func TestInit_Board_EveryProfileLoads(t *testing.T) {
	for _, p := range board.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			repo := filepath.Join(t.TempDir(), "repo")
			out, errs, code := cli(t, repo, nil, "init", "--profile=test", "--board="+p.Name)
			if code != 0 {
				t.Fatalf("init: %s", errs)
			}
			if !strings.Contains(out, "board: "+p.Name+",") || !strings.Contains(out, "memory: budget ") {
				t.Fatalf("init output: %q", out)
			}
			cfg := loadConfig(t, repo)
			doc, err := config.ReadDoc(repo)
			if err != nil {
				t.Fatal(err)
			}
			// The daemon decodes it without encoding/json's field tables
			// (docs/performance.md, "Idle memory").
			if !config.DecodeDoc(doc, &config.Config{}) {
				t.Fatal("config.DecodeDoc declined the board's config")
			}
			if cfg.Budget.Board != p.Name || cfg.Budget.MemoryMiB != board.BudgetFor(p, memTotalHere()) {
				t.Fatalf("budget: %+v", cfg.Budget)
			}
			lim, err := budgetLimits(cfg)
			if err != nil || lim == nil {
				t.Fatalf("limits: %v %v", lim, err)
			}
			net, err := node.NetLimitsOf(cfg)
			if err != nil {
				t.Fatal(err)
			}
			b := cfg.Budget
			rm := int(net.LibP2PMemory >> 20)
			if !(rm < b.GoMemLimitMiB && b.GoMemLimitMiB < b.MemoryHighMiB && b.MemoryHighMiB < b.MemoryMiB) || lim.NetMemoryMiB != rm {
				t.Fatalf("order broken: resource manager %d MiB, budget %+v", rm, b)
			}
			if lim.HeapNeedMiB() > b.GoMemLimitMiB {
				t.Fatalf("consumers need %d MiB > GOMEMLIMIT %d", lim.HeapNeedMiB(), b.GoMemLimitMiB)
			}
			if cfg.Swarm.ConnMgr.LowWater.WithDefault(0) != int64(net.LowWater) || cfg.Swarm.ConnMgr.HighWater.WithDefault(0) != int64(net.HighWater) || net.LowWater == 0 {
				t.Fatalf("watermarks %+v, network limits %+v", cfg.Swarm.ConnMgr, net)
			}
			if b.MemoryMiB <= 256 && (net.LowWater != 10 || net.HighWater != 20) {
				t.Fatalf("512 MiB board: watermarks %d/%d, want 10/20", net.LowWater, net.HighWater)
			}
			if cfg.Routing.Type.IsDefault() || cfg.Routing.Type.WithDefault("") != "dhtclient" {
				t.Fatalf("routing: %v", cfg.Routing.Type)
			}
			umax, err := config.ParseStorageMax(cfg.Datastore.StorageMax)
			if err != nil {
				t.Fatal(err)
			}
			max := int64(umax)
			disk, err := statDisk(repo)
			if err != nil || max > disk.Avail() || max < board.MinStorage {
				t.Fatalf("StorageMax %d, disk %+v, %v", max, disk, err)
			}
			if p.Only32Bit != strings.Contains(out, "note: 32-bit ARM: the block index may take 768 MiB") {
				t.Fatalf("armv6 board %v, init says %q", p.Only32Bit, out)
			}
			if max < disk.Avail()/100*80 { // 90%, rounded down to two digits
				t.Fatalf("StorageMax %d is not about 90%% of the %d the disk offers", max, disk.Avail())
			}
			if err := checkStorage(repo, cfg, true, io.Discard); err != nil {
				t.Fatalf("start check: %v", err)
			}
			n, err := node.New(repo, nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			n.Close()
		})
	}
}

func memTotalHere() int {
	return board.Detect(os.DirFS("/")).MemTotalMiB
}

// Ensure init --board=auto reads the device tree and meminfo (under
// CAIRN_BOARD_ROOT) and says what it detected.
func TestInit_Board_Auto(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc/device-tree"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/device-tree/model"), []byte("Raspberry Pi 3 Model B Plus Rev 1.3\x00"), 0o644)
	os.WriteFile(filepath.Join(root, "proc/meminfo"), []byte("MemTotal:         943364 kB\n"), 0o644)
	repo := filepath.Join(t.TempDir(), "repo")
	cmd := exec.Command(os.Args[0], "init", "--profile=test", "--board=auto")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1", "CAIRN_PATH="+repo, "CAIRN_BOARD_ROOT="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	if !strings.Contains(string(out), `board: pi3, `) || !strings.Contains(string(out), `detected: model "Raspberry Pi 3 Model B Plus Rev 1.3"`) {
		t.Fatalf("output: %s", out)
	}
	if b := loadConfig(t, repo).Budget; b.Board != "pi3" || b.MemoryMiB != 512 || b.HTTPConcurrency != 128 {
		t.Fatalf("budget: %+v", b)
	}
}

// Ensure bad input at init is refused with a clear message and leaves no
// repo behind: unknown board, budget below the floor, StorageMax above the
// disk.
func TestInit_Board_BadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--board=pi9"}, `Error: unknown board "pi9" (known: generic, pi-zero-2w, pi-zero-w, pi3, pi4-2g, pi4-4g, pi4-8g, pi5, or auto to detect)`},
		{[]string{"--board=generic", "--budget=100"}, "Error: memory budget too small: 100 MiB is below the floor of 128 MiB"},
		{[]string{"--board=pi3", "--storage-max=lots"}, `Error: --storage-max: Datastore.StorageMax "lots"`},
		{[]string{"--board=pi3", "--storage-max=900TB"}, "Error: not enough free disk space: Datastore.StorageMax 900TB is larger than the disk offers"},
	} {
		repo := filepath.Join(t.TempDir(), "repo")
		_, errs, code := cli(t, repo, nil, append([]string{"init", "--profile=test"}, tc.args...)...)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Fatalf("%v: code %d, %q, want %q", tc.args, code, errs, tc.want)
		}
		if _, err := os.Stat(repo); !os.IsNotExist(err) {
			t.Fatalf("%v: repo created anyway (%v)", tc.args, err)
		}
	}
}

// Ensure the daemon refuses to start on a budget below the floor, an
// inconsistent override, or (for a board repo) a StorageMax above the
// disk, and only warns about the disk for a repo without a budget.
func TestDaemon_Start_BadBudgetOrStorage(t *testing.T) {
	for _, tc := range []struct {
		kv   map[string]any
		want string
	}{
		{map[string]any{"Budget.MemoryMiB": 100}, "Error: config Budget: memory budget too small: 100 MiB is below the floor of 128 MiB"},
		{map[string]any{"Budget.GoMemLimitMiB": 250}, "Error: config Budget: inconsistent memory limits: GOMEMLIMIT 250 MiB must be below MemoryHigh 217 MiB"},
		{map[string]any{"Datastore.StorageMax": "900TB"}, "Error: not enough free disk space: Datastore.StorageMax 900TB is larger than the disk offers"},
		{map[string]any{"Datastore.StorageMax": "lots"}, `Error: Datastore.StorageMax "lots"`},
	} {
		repo := filepath.Join(t.TempDir(), "repo")
		if _, errs, code := cli(t, repo, nil, "init", "--profile=test", "--board=pi-zero-2w"); code != 0 {
			t.Fatal(errs)
		}
		setConfig(t, repo, tc.kv)
		_, errs, code := cli(t, repo, nil, "daemon")
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Fatalf("%v: code %d %q, want %q", tc.kv, code, errs, tc.want)
		}
	}
	// Without a budget the disk check only warns.
	repo := initRepo(t)
	setConfig(t, repo, map[string]any{"Datastore.StorageMax": "900TB"})
	d, _, out := startDaemon(t, repo)
	d.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, d, 10*time.Second); code != 0 || !strings.Contains(out.String(), "WARNING: not enough free disk space") {
		t.Fatalf("code %d, output %q", code, out.String())
	}
}

// Ensure the daemon applies the budget it starts with (the banner names
// it) and still serves add and cat.
func TestDaemon_Budget_Applied(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	if _, errs, code := cli(t, repo, nil, "init", "--profile=test", "--board=pi-zero-2w"); code != 0 {
		t.Fatal(errs)
	}
	d, url, out := startDaemon(t, repo)
	if !strings.Contains(out.String(), "Board profile: pi-zero-2w\nMemory budget 256 MiB (MemoryHigh 217 MiB, GOMEMLIMIT 179 MiB)") ||
		!strings.Contains(out.String(), "resource manager 64 MiB, HTTP 64 connections, write queue 1/2 MiB") {
		t.Fatalf("banner: %q", out.String())
	}
	data := make([]byte, 3<<20)
	rand.Read(data)
	c, err := addHTTP(url, data)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/api/v0/cat?arg="+c, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("cat returned %d bytes that differ", len(got))
	}
	d.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, d, 10*time.Second); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
}

// Ensure the daemon tells systemd READY=1 once it serves and STOPPING=1
// when SIGTERM arrives, over $NOTIFY_SOCKET.
func TestDaemon_SdNotify_ReadyStopping(t *testing.T) {
	repo := initRepo(t)
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	d, url, out := startDaemon(t, repo, "NOTIFY_SOCKET="+sock)
	read := func() string {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 4096)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("notify socket: %v (daemon said %q)", err, out.String())
		}
		return string(buf[:n])
	}
	msg := read()
	if !strings.HasPrefix(msg, "READY=1\n") || !strings.Contains(msg, "STATUS=serving the RPC on /ip4/127.0.0.1/tcp/"+url[strings.LastIndex(url, ":")+1:]) {
		t.Fatalf("first message %q", msg)
	}
	d.Process.Signal(syscall.SIGTERM)
	if msg := read(); msg != "STOPPING=1" {
		t.Fatalf("second message %q", msg)
	}
	if code := waitExit(t, d, 10*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// slowReader yields its data in small pieces with pauses, like a client
// on a slow link, until stopped.
type slowReader struct {
	stop chan struct{}
	sent int
}

func (r *slowReader) Read(p []byte) (int, error) {
	select {
	case <-r.stop:
		return 0, io.ErrUnexpectedEOF
	case <-time.After(5 * time.Millisecond):
	}
	n := min(len(p), 64<<10)
	rand.Read(p[:n])
	r.sent += n
	return n, nil
}

// Ensure SIGTERM during an add that is still uploading stops the daemon
// within 10 s, exit code 0, and leaves a store that passes Check with every
// acknowledged add readable.
func TestDaemon_SIGTERM_DuringAdd_StopsWithin10s(t *testing.T) {
	repo := initRepo(t)
	d, url, out := startDaemon(t, repo)
	acked := make([]byte, 2<<20)
	rand.Read(acked)
	c, err := addHTTP(url, acked)
	if err != nil {
		t.Fatal(err)
	}
	// A never-ending slow upload.
	sr := &slowReader{stop: make(chan struct{})}
	defer close(sr.stop)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, _ := mw.CreateFormFile("file", "slow")
		_, err := io.Copy(w, sr)
		pw.CloseWithError(err)
	}()
	go func() {
		resp, err := http.Post(url+"/api/v0/add", mw.FormDataContentType(), pr)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	d.Process.Signal(syscall.SIGTERM)
	code := waitExit(t, d, 10*time.Second)
	if code != 0 {
		t.Fatalf("exit %d after %s: %s", code, time.Since(start), out.String())
	}
	t.Logf("stopped in %s with an upload in flight", time.Since(start).Round(time.Millisecond))
	n, err := node.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatalf("check: %v", errs)
	}
	res, err := n.Dag().Resolve(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := n.UnixFS().WriteFile(t.Context(), res.Cid, 0, -1, &buf); err != nil || !bytes.Equal(buf.Bytes(), acked) {
		t.Fatalf("acknowledged add unreadable after stop: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for a process's output and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
