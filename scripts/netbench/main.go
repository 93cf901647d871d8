package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"

	proc "cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"
)

func main() {
	sizeMiB := flag.Int("size", 256, "file size in MiB")
	peers := flag.Int("peers", 50, "extra peers connected to the receiving daemon")
	budget := flag.Int("budget", 256, "Budget.MemoryMiB of the receiving daemon")
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	p2p := flag.Bool("p2p", false, "measure p2p forwarding (a TCP echo through p2p forward/listen) against direct loopback TCP instead")
	runs := flag.Int("runs", 3, "runs of the -p2p mode")
	flag.Parse()
	if *p2p {
		if err := runP2P(*bin, int64(*sizeMiB)<<20, *runs); err != nil {
			fmt.Fprintln(os.Stderr, "netbench:", err)
			os.Exit(1)
		}
		return
	}
	ok, err := run(*bin, int64(*sizeMiB)<<20, *peers, *budget)
	if err != nil {
		fmt.Fprintln(os.Stderr, "netbench:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

type daemon struct {
	repo string
	url  string
	cmd  *exec.Cmd
}

func cli(bin, repo string, args ...string) error {
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "CAIRN_PATH="+repo)
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("cairn %s: %v %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func startDaemon(bin, repo string, config map[string]string) (*daemon, error) {
	if err := cli(bin, repo, "init", "--profile=test"); err != nil {
		return nil, err
	}
	for k, v := range config {
		if err := cli(bin, repo, "config", "--json", k, v); err != nil {
			return nil, err
		}
	}
	c := exec.Command(bin, "daemon")
	c.Env = append(os.Environ(), "CAIRN_PATH="+repo)
	if err := c.Start(); err != nil {
		return nil, err
	}
	d := &daemon{repo: repo, cmd: c}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(repo, "api")); err == nil && len(b) > 0 {
			a := string(b)
			d.url = "http://127.0.0.1:" + a[strings.LastIndex(a, "/")+1:]
			if resp, err := http.Post(d.url+"/api/v0/version", "", nil); err == nil {
				resp.Body.Close()
				return d, nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.stop()
	return nil, fmt.Errorf("daemon not ready after 20s")
}

func (d *daemon) stop() {
	d.cmd.Process.Kill()
	d.cmd.Wait()
}

// addr is the daemon's first announced address (loopback, /p2p/ included).
func (d *daemon) addr() (string, error) {
	resp, err := http.Post(d.url+"/api/v0/id", "", nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ Addresses []string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	for _, a := range out.Addresses {
		if strings.HasPrefix(a, "/ip4/127.0.0.1/tcp/") {
			return a, nil
		}
	}
	return "", fmt.Errorf("no loopback address in %q", out.Addresses)
}

func run(bin string, size int64, npeers, budget int) (bool, error) {
	if _, err := os.Stat(bin); err != nil {
		return false, fmt.Errorf("%s: %w (run make build first)", bin, err)
	}
	work, err := os.MkdirTemp("", "cairn-netbench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(work)
	none := `"none"`
	a, err := startDaemon(bin, filepath.Join(work, "a"), map[string]string{"Routing.Type": none})
	if err != nil {
		return false, err
	}
	defer a.stop()
	hw := max(npeers+10, 20)
	b, err := startDaemon(bin, filepath.Join(work, "b"), map[string]string{
		"Routing.Type":     none,
		"Budget.MemoryMiB": strconv.Itoa(budget),
		"Swarm.ConnMgr":    fmt.Sprintf(`{"LowWater":%d,"HighWater":%d,"GracePeriod":"1m"}`, hw-5, hw),
	})
	if err != nil {
		return false, err
	}
	defer b.stop()
	idle := float64(proc.ProcStatus(b.cmd.Process.Pid, "RssAnon")) / 1024

	// The extra peers: bare libp2p hosts dialling B over loopback.
	bAddr, err := b.addr()
	if err != nil {
		return false, err
	}
	m, err := ma.NewMultiaddr(bAddr)
	if err != nil {
		return false, err
	}
	bInfo, err := peer.AddrInfoFromP2pAddr(m)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for i := 0; i < npeers; i++ {
		h, err := libp2p.New(libp2p.NoListenAddrs, libp2p.Transport(tcp.NewTCPTransport), libp2p.DisableRelay(),
			libp2p.DisableMetrics(), libp2p.ResourceManager(&network.NullResourceManager{}))
		if err != nil {
			return false, err
		}
		defer h.Close()
		if err := h.Connect(ctx, *bInfo); err != nil {
			return false, fmt.Errorf("extra peer %d: %w", i, err)
		}
	}

	c, err := benchutil.AddRandom(a.url, "pin=true", size)
	if err != nil {
		return false, err
	}
	t0 := time.Now()
	if n, err := benchutil.Cat(a.url, c, io.Discard); err != nil || n != size {
		return false, fmt.Errorf("local cat on A: %d bytes, %v", n, err)
	}
	local := time.Since(t0)

	aAddr, err := a.addr()
	if err != nil {
		return false, err
	}
	if err := benchutil.Post(b.url, "/api/v0/swarm/connect?arg="+aAddr); err != nil {
		return false, err
	}
	connected, err := peerCount(b.url)
	if err != nil {
		return false, err
	}
	sampler := benchutil.Sample(b.cmd.Process.Pid, 20*time.Millisecond, "RssAnon")
	t0 = time.Now()
	n, err := benchutil.Cat(b.url, c, io.Discard)
	netDur := time.Since(t0)
	peak := sampler.Done()[0]
	if err != nil || n != size {
		return false, fmt.Errorf("cat on B: %d bytes, %v", n, err)
	}
	mb := float64(size) / 1e6
	peakMiB := float64(peak) / 1024
	fmt.Printf("cairn network benchmark: %d MiB between two daemons on loopback\n", size>>20)
	fmt.Printf("  receiver: Budget.MemoryMiB %d, %d peers connected during the transfer\n", budget, connected)
	fmt.Printf("  cat from A's store: %7.1f MB/s\n", mb/local.Seconds())
	fmt.Printf("  cat on B via bitswap: %7.1f MB/s = %.3f x local cat\n", mb/netDur.Seconds(), local.Seconds()/netDur.Seconds())
	fmt.Printf("  receiver RssAnon: idle %.1f MiB, peak %.1f MiB during the transfer (budget %d MiB)\n", idle, peakMiB, budget)
	if peakMiB >= float64(budget) {
		fmt.Printf("  FAIL: peak RssAnon over the budget\n")
		return false, nil
	}
	fmt.Printf("  ok: peak RssAnon under the budget\n")
	return true, nil
}

func peerCount(url string) (int, error) {
	resp, err := http.Post(url+"/api/v0/swarm/peers", "", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct{ Peers []json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, err
	}
	return len(out.Peers), nil
}
