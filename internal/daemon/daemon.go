// daemon.go: starting cairn and Kubo daemons on loopback, in a network
// namespace of their own and optionally in a memory cgroup.

package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// KuboVersion is the Kubo the benchmarks and interop tests run against.
const KuboVersion = "v0.43.1"

// KuboDir is where scripts/bench-kubo.sh installs KuboVersion:
// $HOME/.cache/cairn-bench/kubo-<version>.
func KuboDir() string { return KuboDirOf(KuboVersion) }

// KuboDirOf is where scripts/bench-kubo.sh installs Kubo version v
// ("v0.43.1", its KUBO_VERSION).
func KuboDirOf(v string) string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "cairn-bench", "kubo-"+v)
}

// netnsEnv marks the child that EnterNetNS started.
const netnsEnv = "CAIRN_BENCH_NETNS"

// InNetNS reports whether this process is the child EnterNetNS started.
func InNetNS() bool { return os.Getenv(netnsEnv) == "1" }

// EnterNetNS re-runs the current command inside a new network namespace
// (`unshare --net`, or `unshare -rn` for a user without root) with only
// loopback up, so that no daemon started by it can reach anything but
// 127.0.0.1. It returns in the child; the parent exits with the child's
// status.
func EnterNetNS() {
	if InNetNS() {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "netns:", err)
		os.Exit(1)
	}
	flags := "--net"
	if os.Geteuid() != 0 {
		flags = "-rn"
	}
	args := append([]string{flags, "--", "sh", "-c", `ip link set lo up && exec "$0" "$@"`, exe}, os.Args[1:]...)
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "netns: unshare --net:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// LoopbackOnly refuses to run where any interface but loopback is up
// (after EnterNetNS only loopback is).
func LoopbackOnly() error {
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			return fmt.Errorf("interface %s is up: the tests run only where loopback is the only network", i.Name)
		}
	}
	return nil
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago,
// for a daemon whose port must be known before it starts. Ports come
// from 20000-32767, below Linux's ephemeral range (where tcp/0 listeners
// and outgoing connections get theirs), and none is handed out twice.
func FreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := 20000 + mrand.IntN(12768)
		if portsGiven[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		portsGiven[p] = true
		return p, nil
	}
	return 0, errors.New("no free port in 20000-32767")
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// Options says how to start a daemon. The zero value starts it online
// (swarm on 127.0.0.1 only, as the test profile sets it).
type Options struct {
	// Offline starts the daemon with --offline.
	Offline bool
	// Board is cairn's board profile given to init ("" for none).
	Board string
	// Budget is cairn's init --budget in MiB (0: the board's).
	Budget int
	// Profiles are Kubo profiles applied at init besides test
	// (comma-separated).
	Profiles string
	// Config is set with `config --json KEY VALUE` after init, before
	// the daemon starts (values are JSON).
	Config map[string]string
	// Args are extra daemon flags.
	Args []string
	// Env is extra environment of every command.
	Env []string
	// CgroupProcs is a cgroup.procs file the daemon joins before exec,
	// so that every page it touches is charged to that cgroup.
	CgroupProcs string
	// ReadyTimeout bounds the wait for the RPC to answer after a start
	// (0: 30 s); a daemon opening a large repo may need longer.
	ReadyTimeout time.Duration
}

// Daemon is one running cairn or Kubo daemon.
type Daemon struct {
	Name string // "cairn" or "kubo"
	Bin  string
	Repo string
	URL  string // http://127.0.0.1:port, the RPC
	env  []string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	log  bytes.Buffer
}

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Log is what the daemon printed so far.
func (d *Daemon) Log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

func (d *Daemon) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.Write(p)
}

func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") &&
			!strings.HasPrefix(kv, "GOMAXPROCS=") && !strings.HasPrefix(kv, "IPFS_PATH=") &&
			!strings.HasPrefix(kv, "CAIRN_PATH=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// StartCairn inits a fresh repo at repo with --profile=test (and o.Board)
// and starts `cairn daemon`.
func StartCairn(bin, repo string, o Options) (*Daemon, error) {
	d := &Daemon{Name: "cairn", Bin: bin, Repo: repo,
		env: cleanEnv(append([]string{"CAIRN_PATH=" + repo}, o.Env...)...)}
	args := []string{"init", "--profile=test"}
	if o.Board != "" {
		args = append(args, "--board="+o.Board)
	}
	if o.Budget != 0 {
		args = append(args, fmt.Sprintf("--budget=%d", o.Budget))
	}
	if out, err := d.CLI(args...); err != nil {
		return nil, fmt.Errorf("cairn init: %v %s", err, out)
	}
	return d, d.start(o)
}

// StartKubo inits a fresh Kubo repo at repo with the test profile (and
// o.Profiles) and starts `ipfs daemon`.
func StartKubo(bin, repo string, o Options) (*Daemon, error) {
	d := &Daemon{Name: "kubo", Bin: bin, Repo: repo,
		env: cleanEnv(append([]string{"IPFS_PATH=" + repo, "IPFS_TELEMETRY=off"}, o.Env...)...)}
	p := "test"
	if o.Profiles != "" {
		p += "," + o.Profiles
	}
	if out, err := d.CLI("init", "--profile="+p); err != nil {
		return nil, fmt.Errorf("kubo init: %v %s", err, out)
	}
	return d, d.start(o)
}

// Restart starts the daemon again on its repo (after Stop or Kill), with
// o's arguments; o.Config is applied first, as at the first start.
func (d *Daemon) Restart(o Options) error {
	select {
	case <-d.done:
	default:
		return fmt.Errorf("%s is still running", d.Name)
	}
	d.URL = ""
	return d.start(o)
}

// CLI runs the daemon's binary with its repo (the daemon need not run)
// and returns its standard output; the error carries standard error.
func (d *Daemon) CLI(args ...string) (string, error) {
	cmd := exec.Command(d.Bin, args...)
	cmd.Env = d.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v: %s", d.Name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func (d *Daemon) start(o Options) error {
	for k, v := range o.Config {
		if out, err := d.CLI("config", "--json", k, v); err != nil {
			return fmt.Errorf("%s config %s: %v %s", d.Name, k, err, out)
		}
	}
	argv := append([]string{d.Bin, "daemon"}, o.Args...)
	if o.Offline {
		argv = append(argv, "--offline")
	}
	if o.CgroupProcs != "" {
		argv = append([]string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, o.CgroupProcs}, argv...)
	}
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Env = d.env
	d.cmd.Stdout, d.cmd.Stderr = d, d
	if err := d.cmd.Start(); err != nil {
		return err
	}
	d.done = make(chan struct{})
	go func() { d.cmd.Wait(); close(d.done) }()
	url, err := d.waitReady(o.ReadyTimeout)
	if err != nil {
		d.Kill()
		return fmt.Errorf("%s: %w: %s", d.Name, err, d.Log())
	}
	d.URL = url
	return nil
}

// waitReady waits up to timeout (0: 30 s) for the daemon to answer
// /api/v0/version and returns its RPC base URL.
func (d *Daemon) waitReady(timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-d.done:
			return "", fmt.Errorf("daemon exited before it was ready")
		default:
		}
		if b, err := os.ReadFile(filepath.Join(d.Repo, "api")); err == nil && len(b) > 0 {
			a := strings.TrimSpace(string(b))
			url := "http://127.0.0.1:" + a[strings.LastIndex(a, "/")+1:]
			if resp, err := http.Post(url+"/api/v0/version", "", nil); err == nil {
				resp.Body.Close()
				return url, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return "", fmt.Errorf("daemon not ready after %v", timeout)
}

// Stop asks the daemon to shut down and kills it if it has not after 15 s.
func (d *Daemon) Stop() {
	if d.URL != "" {
		if resp, err := http.Post(d.URL+"/api/v0/shutdown", "", nil); err == nil {
			resp.Body.Close()
		}
	}
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		d.Kill()
	}
}

// Terminate sends the daemon SIGTERM, as a service manager stops it, and
// waits for it to exit; after wait it kills it and says so.
func (d *Daemon) Terminate(wait time.Duration) error {
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		<-d.done
		return nil // it had exited already
	}
	select {
	case <-d.done:
		return nil
	case <-time.After(wait):
		d.Kill()
		return fmt.Errorf("%s did not exit within %v of SIGTERM; killed", d.Name, wait)
	}
}

// Kill ends the daemon at once.
func (d *Daemon) Kill() {
	d.cmd.Process.Kill()
	<-d.done
}

// Post calls an RPC command (path without /api/v0/, e.g. "id") with the
// query args, and returns the body of a 200 answer; any other status is
// an error carrying the body.
func (d *Daemon) Post(cmd string, args url.Values, body io.Reader, contentType string) ([]byte, error) {
	u := d.URL + "/api/v0/" + cmd
	if len(args) > 0 {
		u += "?" + args.Encode()
	}
	resp, err := http.Post(u, contentType, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return b, fmt.Errorf("%s %s: %s: %s", d.Name, cmd, resp.Status, strings.TrimSpace(string(b)))
	}
	if e := resp.Trailer.Get("X-Stream-Error"); e != "" {
		return b, fmt.Errorf("%s %s: stream error: %s", d.Name, cmd, e)
	}
	return b, nil
}

// JSON calls an RPC command and decodes its (single-object) answer into v.
func (d *Daemon) JSON(cmd string, args url.Values, v any) error {
	b, err := d.Post(cmd, args, nil, "")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s %s: %v: %s", d.Name, cmd, err, b)
	}
	return nil
}

// ProcStatus reads one kB field (RssAnon, RssFile, VmHWM, ...) of
// /proc/<pid>/status; 0 if it cannot.
func ProcStatus(pid int, key string) int64 {
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

// EnvOr is the environment variable k, or def when it is unset or empty.
func EnvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
