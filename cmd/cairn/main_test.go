package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cairn/node"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

// TestMain lets the test binary act as the cairn binary when
// CAIRN_TEST_MAIN=1, so tests can run the CLI and the daemon as real
// processes (and kill them).
func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// cli runs the test binary as cairn with args, returning stdout, stderr
// and the exit code.
func cli(t *testing.T, repo string, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1", "CAIRN_PATH="+repo)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// daemon starts `cairn daemon` on repo and waits for its api file.
func daemon(t *testing.T, repo string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "daemon")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1", "CAIRN_PATH="+repo)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
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
			port := a[strings.LastIndex(a, "/")+1:]
			return cmd, "http://127.0.0.1:" + port
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("daemon did not start: %s", out.String())
	return nil, ""
}

func initRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	if _, errs, code := cli(t, repo, nil, "init", "--profile=test"); code != 0 {
		t.Fatalf("init: %s", errs)
	}
	return repo
}

// Ensure init refuses an existing repo and the local CLI adds and cats.
func TestCLI_InitTwice_LocalAddCat(t *testing.T) {
	repo := initRepo(t)
	if _, errs, code := cli(t, repo, nil, "init"); code == 0 || !strings.Contains(errs, "already exists") {
		t.Fatalf("second init: code %d, %q", code, errs)
	}
	out, errs, code := cli(t, repo, strings.NewReader("hello world\n"), "add", "-Q")
	if code != 0 || out != "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o\n" {
		t.Fatalf("add: %q %q %d", out, errs, code)
	}
	out, _, _ = cli(t, repo, nil, "cat", "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o")
	if out != "hello world\n" {
		t.Fatalf("cat: %q", out)
	}
	f := filepath.Join(t.TempDir(), "hello.txt")
	os.WriteFile(f, []byte("hello world\n"), 0o644)
	out, _, _ = cli(t, repo, nil, "add", f)
	if out != "added QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o hello.txt\n" {
		t.Fatalf("add file: %q", out)
	}
	out, errs, code = cli(t, repo, nil, "cat", "--help")
	if code != 0 || !strings.Contains(out, "USAGE") || !strings.Contains(out, "--offset") {
		t.Fatalf("help: %q %q", out, errs)
	}
	if _, errs, code := cli(t, repo, nil, "add", "--bogus", f); code != 1 || !strings.Contains(errs, `unknown option "bogus"`) {
		t.Fatalf("unknown option: %d %q", code, errs)
	}
}

// Ensure the daemon writes its api file, the CLI goes through it, a
// second daemon is refused, and shutdown removes the api file.
func TestDaemon_RemoteCLI_Lock_Shutdown(t *testing.T) {
	repo := initRepo(t)
	d, url := daemon(t, repo)
	out, errs, code := cli(t, repo, strings.NewReader("hello world\n"), "add", "-q")
	if code != 0 || out != "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o\n" {
		t.Fatalf("remote add: %q %q", out, errs)
	}
	out, _, _ = cli(t, repo, nil, "cat", "/ipfs/QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o")
	if out != "hello world\n" {
		t.Fatalf("remote cat: %q", out)
	}
	out, errs, code = cli(t, repo, nil, "cat", "notacid")
	if code != 1 || errs != "Error: invalid path \"notacid\": path does not have enough components\n" {
		t.Fatalf("remote error: %q %q", out, errs)
	}
	_, errs, code = cli(t, repo, nil, "daemon")
	if code == 0 || !strings.Contains(errs, "is a cairn daemon already running") {
		t.Fatalf("second daemon: %d %q", code, errs)
	}
	// A keep-alive connection open before the shutdown, as clients keep.
	resp, err := http.Post(url+"/api/v0/version", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp, err = http.Post(url+"/api/v0/shutdown", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close { // Connection: close
		t.Fatalf("shutdown: %d, connection kept", resp.StatusCode)
	}
	// Once it is acknowledged, no new request is served, on a new
	// connection or a kept one (Kubo refuses them too).
	for _, c := range []*http.Client{{Transport: &http.Transport{DisableKeepAlives: true}}, http.DefaultClient} {
		if resp, err := c.Post(url+"/api/v0/swarm/peers", "", nil); err == nil {
			resp.Body.Close()
			t.Fatalf("request after shutdown answered %d", resp.StatusCode)
		}
	}
	done := make(chan error, 1)
	go func() { done <- d.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("daemon exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("daemon did not exit after shutdown")
	}
	if a, _ := node.ReadAPIFile(repo); a != "" {
		t.Fatalf("api file still there: %q", a)
	}
}

// Ensure SIGTERM stops the daemon cleanly.
func TestDaemon_SIGTERM(t *testing.T) {
	repo := initRepo(t)
	d, _ := daemon(t, repo)
	d.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit on SIGTERM")
	}
	if a, _ := node.ReadAPIFile(repo); a != "" {
		t.Fatal("api file left behind")
	}
}

func addHTTP(url string, data []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "f")
	w.Write(data)
	mw.Close()
	resp, err := http.Post(url+"/api/v0/add?quieter=true", mw.FormDataContentType(), &body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != 200 || resp.Trailer.Get("X-Stream-Error") != "" {
		return "", fmt.Errorf("add: %d %s %s", resp.StatusCode, b, resp.Trailer.Get("X-Stream-Error"))
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var last struct{ Hash string }
	if err := jsonUnmarshal(lines[len(lines)-1], &last); err != nil {
		return "", err
	}
	return last.Hash, nil
}

// Ensure every acknowledged add survives kill -9 of the daemon, even with
// another add in flight, and the store passes Check after restart.
func TestDaemon_Kill9_KeepsAcknowledgedAdds(t *testing.T) {
	repo := initRepo(t)
	d, url := daemon(t, repo)
	type added struct {
		cid  string
		data []byte
	}
	var acked []added
	for i := 0; i < 5; i++ {
		data := make([]byte, 300<<10+i)
		rand.Read(data)
		c, err := addHTTP(url, data)
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, added{c, data})
	}
	// Start a large add and kill the daemon while it is in flight.
	big := make([]byte, 32<<20)
	rand.Read(big)
	go addHTTP(url, big)
	time.Sleep(150 * time.Millisecond)
	if err := d.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.Wait()

	n, err := node.New(repo, nil)
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer n.Close()
	if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatalf("check after kill -9: %v", errs)
	}
	for _, a := range acked {
		res, err := n.Dag().Resolve(context.Background(), a.cid)
		if err != nil {
			t.Fatalf("acknowledged %s lost: %v", a.cid, err)
		}
		var buf bytes.Buffer
		if err := n.UnixFS().WriteFile(context.Background(), res.Cid, 0, -1, &buf); err != nil {
			t.Fatalf("read %s: %v", a.cid, err)
		}
		if !bytes.Equal(buf.Bytes(), a.data) {
			t.Fatalf("content of %s differs after kill -9", a.cid)
		}
		if ok, _ := n.Pins().IsRecursive(context.Background(), res.Cid); !ok {
			t.Fatalf("pin of %s lost", a.cid)
		}
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// Ensure kill -9 in the middle of a GC sweep leaves a store that passes
// Check, with every pinned DAG whole.
func TestDaemon_Kill9_DuringGC(t *testing.T) {
	repo := initRepo(t)
	ctx := context.Background()
	n, err := node.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	keep := make([]byte, 3<<20)
	rand.Read(keep)
	root := localAdd(t, n, keep, true)
	s := n.Storage().BeginWrite()
	for i := 0; i < 40000; i++ {
		b := make([]byte, 32)
		rand.Read(b)
		if err := s.PutAsync(ctx, rawBlock(b)); err != nil {
			t.Fatal(err)
		}
	}
	s.End()
	n.Close()

	d, url := daemon(t, repo)
	resp, err := http.Post(url+"/api/v0/repo/gc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the sweep to be under way, then kill.
	buf := make([]byte, 4096)
	if _, err := io.ReadAtLeast(resp.Body, buf, len(buf)); err != nil {
		t.Fatal(err)
	}
	d.Process.Signal(syscall.SIGKILL)
	d.Wait()
	resp.Body.Close()

	n, err = node.New(repo, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer n.Close()
	if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatalf("check after kill -9 during GC: %v", errs)
	}
	st, _ := n.Store.Stat()
	if st.NumBlocks >= 40000+13 {
		t.Fatalf("GC removed nothing before the kill (%d blocks)", st.NumBlocks)
	}
	var got bytes.Buffer
	if err := n.UnixFS().WriteFile(ctx, root, 0, -1, &got); err != nil || !bytes.Equal(got.Bytes(), keep) {
		t.Fatalf("pinned file after kill -9 during GC: %v", err)
	}
}

// Ensure kill -9 during pin update leaves exactly one of the two pins, and
// the pinned DAG whole.
func TestDaemon_Kill9_DuringPinUpdate(t *testing.T) {
	for round := 0; round < 4; round++ {
		repo := initRepo(t)
		ctx := context.Background()
		n, err := node.New(repo, nil)
		if err != nil {
			t.Fatal(err)
		}
		a := make([]byte, 2<<20)
		b := make([]byte, 8<<20)
		rand.Read(a)
		rand.Read(b)
		ca := localAdd(t, n, a, true)
		cb := localAdd(t, n, b, false)
		n.Close()

		d, url := daemon(t, repo)
		go http.Post(url+"/api/v0/pin/update?arg="+ca.String()+"&arg="+cb.String(), "", nil)
		time.Sleep(time.Duration(round*3) * time.Millisecond)
		d.Process.Signal(syscall.SIGKILL)
		d.Wait()

		n, err = node.New(repo, nil)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
			t.Fatal(errs)
		}
		pa, _ := n.Pins().IsRecursive(ctx, ca)
		pb, _ := n.Pins().IsRecursive(ctx, cb)
		if pa == pb {
			t.Fatalf("round %d: pinned a=%v b=%v, want exactly one", round, pa, pb)
		}
		want, c := a, ca
		if pb {
			want, c = b, cb
		}
		var got bytes.Buffer
		if err := n.UnixFS().WriteFile(ctx, c, 0, -1, &got); err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("round %d: pinned DAG damaged: %v", round, err)
		}
		n.Close()
	}
}

// Ensure a damaged store file stops the daemon with a clear error.
func TestDaemon_CorruptStore(t *testing.T) {
	repo := initRepo(t)
	if err := os.WriteFile(filepath.Join(repo, storage.FileName), []byte("garbage, not a bbolt file"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, code := cli(t, repo, nil, "daemon")
	if code == 0 || !strings.Contains(errs, "store file is damaged") {
		t.Fatalf("daemon on a damaged store: code %d, %q", code, errs)
	}
}

func localAdd(t *testing.T, n *node.Node, data []byte, pin bool) cid.Cid {
	t.Helper()
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{Pin: pin}, func(node.AddEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	roots, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile(data)}))
	if err != nil {
		t.Fatal(err)
	}
	return roots[0]
}

func rawBlock(b []byte) blocks.Block {
	h, _ := mh.Sum(b, mh.SHA2_256, -1)
	blk, _ := blocks.NewBlockWithCid(b, cid.NewCidV1(cid.Raw, h))
	return blk
}

// Ensure daemon --enable-gc collects garbage once usage passes the
// watermark, every GCPeriod.
func TestDaemon_EnableGC(t *testing.T) {
	repo := initRepo(t)
	for _, kv := range [][2]string{{"Datastore.GCPeriod", "100ms"}, {"Datastore.StorageMax", "2MB"}} {
		if _, errs, code := cli(t, repo, nil, "config", kv[0], kv[1]); code != 0 {
			t.Fatalf("config %s: %s", kv[0], errs)
		}
	}
	if _, errs, code := cli(t, repo, nil, "config", "--json", "Datastore.StorageGCWatermark", "50"); code != 0 {
		t.Fatalf("config watermark: %s", errs)
	}
	cmd := exec.Command(os.Args[0], "daemon", "--enable-gc")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1", "CAIRN_PATH="+repo)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var url string
	for i := 0; i < 500 && url == ""; i++ {
		if a, _ := node.ReadAPIFile(repo); a != "" {
			url = "http://127.0.0.1:" + a[strings.LastIndex(a, "/")+1:]
		}
		time.Sleep(10 * time.Millisecond)
	}
	garbage := make([]byte, 1500<<10)
	rand.Read(garbage)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "g")
	w.Write(garbage)
	mw.Close()
	resp, err := http.Post(url+"/api/v0/add?pin=false", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Post(url+"/api/v0/repo/stat", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ NumObjects int }
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if st.NumObjects == 1 { // init's empty directory, pinned
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("garbage over the watermark was not collected")
}

// Ensure the CLI sends list options to the daemon (every --cid and
// --status of pin remote ls reach the pinning service, as in-process), and
// that neither stdout nor stderr of the remote commands shows the key.
func TestDaemon_RemoteCLI_ListOptions_PinRemote(t *testing.T) {
	var mu sync.Mutex
	var queries []url.Values
	const key = "cli-secret-key"
	psa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.Query())
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(401)
			fmt.Fprint(w, "no entry for "+r.Header.Get("Authorization"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"count":0,"results":[]}`)
	}))
	defer psa.Close()
	repo := initRepo(t)
	daemon(t, repo)
	var outs []string
	run := func(wantCode int, args ...string) {
		t.Helper()
		out, errs, code := cli(t, repo, nil, args...)
		if code != wantCode {
			t.Fatalf("%v: code %d, want %d: %s %s", args, code, wantCode, out, errs)
		}
		outs = append(outs, out, errs)
	}
	run(0, "pin", "remote", "service", "add", "s", psa.URL, key)
	run(0, "pin", "remote", "service", "add", "bad", psa.URL, "wrong-"+key)
	run(0, "pin", "remote", "ls", "--service=s", "--cid=bafkqaaa", "--cid", "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", "--status=queued,pinned", "--status", "failed")
	mu.Lock()
	q := queries[len(queries)-1]
	mu.Unlock()
	if q.Get("cid") != "bafkqaaa,QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" || q.Get("status") != "queued,pinned,failed" {
		t.Fatalf("the service got %v", q)
	}
	run(1, "pin", "remote", "ls", "--service=bad")
	run(0, "pin", "remote", "service", "ls", "--stat")
	run(0, "config", "show")
	for _, o := range outs {
		if strings.Contains(o, key) {
			t.Fatalf("the CLI showed the key: %s", o)
		}
	}
}
