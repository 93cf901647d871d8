// daemon.go: starting cairn and Kubo side by side, offline on loopback, in
// a network namespace of their own and optionally in a memory cgroup.

package benchutil

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// KuboVersion is the Kubo the benchmarks compare against.
const KuboVersion = "v0.42.0"

// KuboDir is where scripts/bench-kubo.sh installs Kubo:
// $HOME/.cache/cairn-bench/kubo-<version>.
func KuboDir() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "cairn-bench", "kubo-"+KuboVersion)
}

// EnterNetNS re-runs the current command inside a new network namespace
// (`unshare --net`) with only loopback up, so that no daemon started by
// the benchmark can reach anything but 127.0.0.1. It returns in the child;
// the parent exits with the child's status.
func EnterNetNS() {
	if os.Getenv("CAIRN_BENCH_NETNS") == "1" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	args := append([]string{"--net", "--", "sh", "-c", `ip link set lo up && exec "$0" "$@"`, exe}, os.Args[1:]...)
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(), "CAIRN_BENCH_NETNS=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "bench: unshare --net (needs root):", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Daemon is one running cairn or Kubo daemon.
type Daemon struct {
	Name string // "cairn" or "kubo"
	Repo string
	URL  string
	cmd  *exec.Cmd
	log  bytes.Buffer
}

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Log is what the daemon printed so far.
func (d *Daemon) Log() string { return d.log.String() }

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

// StartCairn inits a fresh repo with --profile=test and the given board
// profile ("" for none) and starts `cairn daemon --offline`, inside cg when
// it is not nil.
func StartCairn(bin, repo, board string, cg *Cgroup, env ...string) (*Daemon, error) {
	env = cleanEnv(append([]string{"CAIRN_PATH=" + repo}, env...)...)
	args := []string{"init", "--profile=test"}
	if board != "" {
		args = append(args, "--board="+board)
	}
	init := exec.Command(bin, args...)
	init.Env = env
	if out, err := init.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cairn init: %v %s", err, out)
	}
	return start("cairn", repo, cg, env, bin, "daemon", "--offline")
}

// StartKubo inits a fresh Kubo repo with the given profiles (always
// including test: loopback API on a random port, no bootstrap, no mDNS)
// and starts `ipfs daemon --offline`, inside cg when it is not nil.
func StartKubo(bin, repo, profiles string, cg *Cgroup) (*Daemon, error) {
	env := cleanEnv("IPFS_PATH="+repo, "IPFS_TELEMETRY=off")
	p := "test"
	if profiles != "" {
		p += "," + profiles
	}
	init := exec.Command(bin, "init", "--profile="+p)
	init.Env = env
	if out, err := init.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubo init: %v %s", err, out)
	}
	return start("kubo", repo, cg, env, bin, "daemon", "--offline")
}

func start(name, repo string, cg *Cgroup, env []string, argv ...string) (*Daemon, error) {
	d := &Daemon{Name: name, Repo: repo}
	if cg != nil {
		// Join the cgroup before exec, so that every page the daemon
		// touches is charged to it.
		argv = append([]string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, cg.ProcsFile()}, argv...)
	}
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Env = env
	d.cmd.Stdout, d.cmd.Stderr = &d.log, &d.log
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	url, err := WaitReady(repo)
	if err != nil {
		d.Kill()
		return nil, fmt.Errorf("%s: %w: %s", name, err, d.log.String())
	}
	d.URL = url
	return d, nil
}

// Stop asks the daemon to shut down and kills it if it has not after 15 s.
func (d *Daemon) Stop() {
	if resp, err := http.Post(d.URL+"/api/v0/shutdown", "", nil); err == nil {
		resp.Body.Close()
	}
	done := make(chan struct{})
	go func() { d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		d.cmd.Process.Kill()
		<-done
	}
}

// Kill ends the daemon at once.
func (d *Daemon) Kill() {
	d.cmd.Process.Kill()
	d.cmd.Wait()
}

// MajorFaults is majflt of /proc/<pid>/stat: page faults that read from
// disk.
func MajorFaults(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	// Fields after the command name, which is in parentheses.
	fs := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fs) < 10 {
		return 0
	}
	v, _ := strconv.ParseInt(fs[9], 10, 64) // field 12 majflt
	return v
}
