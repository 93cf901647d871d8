//go:build fleet

// harness_test.go: the fleet (three cairn daemons, three IPFS Cluster
// peers beside them), the ipfs-cluster-ctl calls the tests share, and
// the memory sampler.

package fleet

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cairn/internal/daemon"
)

// ClusterVersion is the IPFS Cluster the fleet test runs.
const ClusterVersion = "v1.1.6"

var cairnBin, clusterDir string

func TestMain(m *testing.M) {
	// Everything below runs in a network namespace with only loopback.
	daemon.EnterNetNS()
	if err := daemon.LoopbackOnly(); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
	home, _ := os.UserHomeDir()
	cairnBin = daemon.EnvOr("CAIRN_BIN", "../../bin/cairn")
	clusterDir = daemon.EnvOr("CLUSTER_DIR", filepath.Join(home, ".cache", "cairn-fleet", "ipfs-cluster-"+ClusterVersion))
	for _, b := range []string{cairnBin, filepath.Join(clusterDir, "ipfs-cluster-service"), filepath.Join(clusterDir, "ipfs-cluster-ctl")} {
		if _, err := os.Stat(b); err != nil {
			fmt.Fprintf(os.Stderr, "fleet: %v (make test-fleet builds and installs them)\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// board is what one of the three boards runs: cairn's board profile and
// budget, and the cluster peer's Go memory limit (docs/fleet.md).
type board struct {
	Profile    string // cairn init --board
	Budget     int    // cairn init --budget (MiB; 0: the profile's)
	ClusterGML string // GOMEMLIMIT of the cluster peer
}

// boards of the fleet: two Pi Zero 2 W and one Pi 4 (2 GB), with the
// budgets docs/fleet.md gives for a board that runs a cluster peer too.
var boards = []board{
	{"pi-zero-2w", 192, "96MiB"},
	{"pi4-2g", 768, "256MiB"},
	{"pi-zero-2w", 192, "96MiB"},
}

// fleet is the running fleet.
type fleet struct {
	cairns []*daemon.Daemon
	opts   []daemon.Options
	peers  []*clusterPeer
	mem    *memSampler
}

// clusterPeer is one ipfs-cluster-service daemon.
type clusterPeer struct {
	Name   string
	Dir    string
	ID     string
	Swarm  int // cluster libp2p port
	REST   int // REST API (ipfs-cluster-ctl)
	Proxy  int // IPFS proxy
	PSA    int // Pinning Service API
	env    []string
	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	logBuf bytes.Buffer
}

func (p *clusterPeer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logBuf.Write(b)
}

func (p *clusterPeer) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logBuf.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := daemon.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func tcp(port int) string { return "/ip4/127.0.0.1/tcp/" + strconv.Itoa(port) }

// startFleet starts three cairn daemons that know each other (each one's
// Bootstrap lists the other two, so that a restarted one reconnects) and
// three cluster peers, one beside each, and waits until every peer sees
// the other two.
func startFleet(t *testing.T) *fleet {
	f := &fleet{mem: newMemSampler()}
	t.Cleanup(f.mem.stop)
	n := len(boards)
	api, swarm := make([]int, n), make([]int, n)
	for i := range n {
		api[i], swarm[i] = freePort(t), freePort(t)
	}
	// The peer IDs come from init: init all three, then wire them up.
	var ids []string
	for i := range n {
		o := daemon.Options{Board: boards[i].Profile, Budget: boards[i].Budget, Config: map[string]string{
			"Addresses.API":   strconv.Quote(tcp(api[i])),
			"Addresses.Swarm": `["` + tcp(swarm[i]) + `"]`,
		}}
		f.opts = append(f.opts, o)
	}
	for i := range n {
		c, err := daemon.StartCairn(cairnBin, filepath.Join(t.TempDir(), "cairn"), f.opts[i])
		if err != nil {
			t.Fatal(err)
		}
		f.cairns = append(f.cairns, c)
		t.Cleanup(func() { stopCairn(t, c) })
		var id struct{ ID string }
		if err := c.JSON("id", nil, &id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id.ID)
		f.mem.add(cairnMemName(i), c.Pid())
	}
	// Bootstrap: the other two, for restarts (the daemons running now
	// are connected below).
	for i, c := range f.cairns {
		var bs []string
		for j := range n {
			if j != i {
				bs = append(bs, tcp(swarm[j])+"/p2p/"+ids[j])
			}
		}
		b, _ := json.Marshal(bs)
		f.opts[i].Config["Bootstrap"] = string(b)
		if _, err := c.Post("config", urlValues("arg", "Bootstrap", "arg", string(b), "json", "true"), nil, ""); err != nil {
			t.Fatal(err)
		}
		for _, a := range bs {
			if _, err := c.Post("swarm/connect", urlValues("arg", a), nil, ""); err != nil {
				t.Fatal(err)
			}
		}
	}

	secret := make([]byte, 32)
	rand.Read(secret)
	for i := range n {
		p := &clusterPeer{Name: fmt.Sprintf("peer%d", i), Dir: filepath.Join(t.TempDir(), "cluster"),
			Swarm: freePort(t), REST: freePort(t), Proxy: freePort(t), PSA: freePort(t)}
		p.env = append(os.Environ(), "CLUSTER_SECRET="+hex.EncodeToString(secret), "GOMEMLIMIT="+boards[i].ClusterGML)
		out, err := p.service("init", "--consensus", "crdt")
		if err != nil {
			t.Fatalf("ipfs-cluster-service init: %v: %s", err, out)
		}
		var ident struct{ ID string }
		readJSON(t, filepath.Join(p.Dir, "identity.json"), &ident)
		p.ID = ident.ID
		f.peers = append(f.peers, p)
	}
	for i, p := range f.peers {
		p.configure(t, f.peers, tcp(api[i]))
		p.start(t)
		f.mem.add(fmt.Sprintf("cluster %s (GOMEMLIMIT %s)", p.Name, boards[i].ClusterGML), p.cmd.Process.Pid)
	}
	for _, p := range f.peers {
		waitFor(t, 60*time.Second, p.Name+" to see the other peers", func() bool {
			var peers []struct {
				ID    string `json:"id"`
				Error string `json:"error"`
			}
			if err := p.ctlJSONLines(&peers, "peers", "ls"); err != nil {
				return false
			}
			ok := 0
			for _, q := range peers {
				if q.Error == "" {
					ok++
				}
			}
			return ok == n
		})
	}
	// Allocations need every peer's informer metrics.
	for _, m := range []string{"freespace", "tag:group", "pinqueue"} {
		var last string
		waitFor(t, 60*time.Second, "every peer's "+m+" metric", func() bool {
			var ms []struct {
				Peer  string `json:"peer"`
				Value string `json:"value"`
				Valid bool   `json:"valid"`
			}
			if err := p0ctl(f).ctlJSONLines(&ms, "health", "metrics", m); err != nil {
				last = err.Error()
				return false
			}
			b, _ := json.Marshal(ms)
			last = string(b)
			valid := 0
			for _, x := range ms {
				if x.Valid {
					valid++
				}
			}
			return valid == n
		})
		t.Logf("metric %s: %s", m, last)
	}
	return f
}

func p0ctl(f *fleet) *clusterPeer { return f.peers[0] }

func cairnMemName(i int) string {
	return fmt.Sprintf("cairn%d (%s, budget %d MiB)", i, boards[i].Profile, boards[i].Budget)
}

func stopCairn(t *testing.T, d *daemon.Daemon) {
	d.Stop()
	if t.Failed() {
		t.Logf("%s log:\n%s", d.Repo, tail(d.Log(), 60))
	}
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// service runs ipfs-cluster-service on the peer's config folder.
func (p *clusterPeer) service(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(clusterDir, "ipfs-cluster-service"), append([]string{"--config", p.Dir}, args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// configure writes the peer's service.json for the fleet: everything on
// 127.0.0.1, mDNS and relay service off, crdt with the three peers
// trusted, short intervals (the test waits on them), small pebble caches
// (a board's), the Pinning Service API with a login.
func (p *clusterPeer) configure(t *testing.T, all []*clusterPeer, ipfsAPI string) {
	t.Helper()
	path := filepath.Join(p.Dir, "service.json")
	var cfg map[string]any
	readJSON(t, path, &cfg)
	var others, trusted []string
	for _, q := range all {
		trusted = append(trusted, q.ID)
		if q != p {
			others = append(others, tcp(q.Swarm)+"/p2p/"+q.ID)
		}
	}
	set := func(path string, v any) {
		m := cfg
		parts := strings.Split(path, ".")
		for _, k := range parts[:len(parts)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				t.Fatalf("service.json has no %s", path)
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
	set("cluster.peername", p.Name)
	set("cluster.listen_multiaddress", []string{tcp(p.Swarm)})
	set("cluster.enable_relay_hop", false)
	set("cluster.mdns_interval", "0s")
	set("cluster.peer_addresses", others)
	set("cluster.monitor_ping_interval", "2s")
	set("cluster.peer_watch_interval", "2s")
	set("cluster.state_sync_interval", "10s")
	set("cluster.pin_recover_interval", "1h") // recover is run by the test
	set("cluster.connection_manager.low_water", 10)
	set("cluster.connection_manager.high_water", 20)
	set("consensus.crdt.trusted_peers", trusted)
	set("api.restapi.http_listen_multiaddress", tcp(p.REST))
	set("api.ipfsproxy.listen_multiaddress", tcp(p.Proxy))
	set("api.ipfsproxy.node_multiaddress", ipfsAPI)
	set("api.pinsvcapi.http_listen_multiaddress", tcp(p.PSA))
	set("api.pinsvcapi.basic_auth_credentials", map[string]string{"fleet": "fleet-password"})
	set("ipfs_connector.ipfshttp.node_multiaddress", ipfsAPI)
	set("ipfs_connector.ipfshttp.connect_swarms_delay", "1s")
	set("monitor.pubsubmon.check_interval", "2s")
	set("informer.disk.metric_ttl", "10s")
	set("informer.pinqueue.metric_ttl", "10s")
	set("informer.tags.metric_ttl", "10s")
	set("datastore.pebble.pebble_options.cache_size_bytes", 8<<20)
	set("datastore.pebble.pebble_options.mem_table_size", 4<<20)
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// start runs `ipfs-cluster-service daemon`, stopped at cleanup (SIGINT,
// then SIGKILL after 20 s), by PID.
func (p *clusterPeer) start(t *testing.T) {
	t.Helper()
	p.cmd = exec.Command(filepath.Join(clusterDir, "ipfs-cluster-service"), "--config", p.Dir, "daemon")
	p.cmd.Env = p.env
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", p.Name, tail(p.log(), 60))
		}
	})
	var lastErr error
	defer func() {
		if t.Failed() {
			t.Logf("%s: last ipfs-cluster-ctl error: %v", p.Name, lastErr)
		}
	}()
	waitFor(t, 60*time.Second, p.Name+" to answer", func() bool {
		select {
		case <-p.done:
			t.Fatalf("%s exited: %s", p.Name, p.log())
		default:
		}
		_, err := p.ctl("id")
		lastErr = err
		return err == nil
	})
}

// ctl runs ipfs-cluster-ctl against the peer's REST API, JSON output.
func (p *clusterPeer) ctl(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(clusterDir, "ipfs-cluster-ctl"),
		append([]string{"--host", tcp(p.REST), "--enc", "json", "--timeout", "120"}, args...)...)
	cmd.Env = p.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("ipfs-cluster-ctl %s: %v: %s %s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out), nil
}

// ctlJSONLines runs ctl and decodes its output: one JSON value, or a
// stream of them, into the slice v points to.
func (p *clusterPeer) ctlJSONLines(v any, args ...string) error {
	out, err := p.ctl(args...)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var vals []json.RawMessage
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("ipfs-cluster-ctl %s: %v: %s", strings.Join(args, " "), err, out)
		}
		if len(raw) > 0 && raw[0] == '[' {
			var many []json.RawMessage
			if err := json.Unmarshal(raw, &many); err != nil {
				return err
			}
			vals = append(vals, many...)
			continue
		}
		vals = append(vals, raw)
	}
	b, _ := json.Marshal(vals)
	return json.Unmarshal(b, v)
}

// pinStatus is the part of `ipfs-cluster-ctl status CID` the tests use:
// peer name -> status.
func (p *clusterPeer) pinStatus(c string) (map[string]string, error) {
	var infos []struct {
		PeerMap map[string]struct {
			PeerName string `json:"peername"`
			Status   string `json:"status"`
			Error    string `json:"error"`
		} `json:"peer_map"`
	}
	if err := p.ctlJSONLines(&infos, "status", c); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, gi := range infos {
		for _, s := range gi.PeerMap {
			out[s.PeerName] = s.Status
		}
	}
	return out, nil
}

// waitStatus waits until the status of c, asked of p, satisfies ok.
func waitStatus(t *testing.T, p *clusterPeer, c, what string, ok func(map[string]string) bool) map[string]string {
	t.Helper()
	var last map[string]string
	var lastErr error
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		last, lastErr = p.pinStatus(c)
		if lastErr == nil && ok(last) {
			return last
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("status of %s: waited for %s; last %v %v", c, what, last, lastErr)
	return nil
}

// count says how many peers have status s.
func count(st map[string]string, s string) int {
	n := 0
	for _, v := range st {
		if v == s {
			n++
		}
	}
	return n
}

func allPinned(st map[string]string) bool {
	return len(st) == len(boards) && count(st, "pinned") == len(boards)
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// memSampler reads the anonymous resident memory (RssAnon of
// /proc/PID/status) of processes every 250 ms and keeps each one's peak.
type memSampler struct {
	mu    sync.Mutex
	procs map[string]int
	peak  map[string]int // kB
	last  map[string]int
	quit  chan struct{}
	done  chan struct{}
}

func newMemSampler() *memSampler {
	m := &memSampler{procs: map[string]int{}, peak: map[string]int{}, last: map[string]int{},
		quit: make(chan struct{}), done: make(chan struct{})}
	go m.loop()
	return m
}

func (m *memSampler) add(name string, pid int) {
	m.mu.Lock()
	m.procs[name] = pid
	m.mu.Unlock()
}

func (m *memSampler) loop() {
	defer close(m.done)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-m.quit:
			return
		case <-tick.C:
		}
		m.mu.Lock()
		for name, pid := range m.procs {
			if kb := int(daemon.ProcStatus(pid, "RssAnon")); kb > 0 {
				m.peak[name] = max(m.peak[name], kb)
				m.last[name] = kb
			}
		}
		m.mu.Unlock()
	}
}

func (m *memSampler) stop() {
	select {
	case <-m.quit:
		return
	default:
	}
	close(m.quit)
	<-m.done
}

// report is one line per process: peak and last RssAnon.
func (m *memSampler) report() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for n := range m.peak {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "RssAnon %-40s peak %6.1f MiB, last %6.1f MiB\n", n, float64(m.peak[n])/1024, float64(m.last[n])/1024)
	}
	return b.String()
}
