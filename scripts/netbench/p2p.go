// p2p.go: the -p2p mode, throughput of a TCP connection carried by p2p
// forwarding between two daemons, against a direct loopback connection
// to the same echo server in the same run.

package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	proc "cairn/internal/daemon"
	"cairn/internal/tcpecho"
	"cairn/scripts/internal/benchutil"
)

// runP2P starts daemons A and B, a TCP echo server behind p2p/listen on
// B and a p2p/forward on A, then runs times: size bytes through the
// echo directly, then through A's forwarder; it prints each run, the
// medians and their ratio, and the daemons' peak RssAnon while the
// tunnel carried the bytes.
func runP2P(bin string, size int64, runs int) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: %w (run make build first)", bin, err)
	}
	work, err := os.MkdirTemp("", "cairn-netbench-p2p-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	o := proc.Options{Config: map[string]string{"Routing.Type": `"none"`, "Experimental.Libp2pStreamMounting": "true"}}
	var ds [2]*proc.Daemon
	for i, name := range []string{"a", "b"} {
		if ds[i], err = proc.StartCairn(bin, filepath.Join(work, name), o); err != nil {
			return err
		}
		defer ds[i].Stop()
	}
	a, b := ds[0], ds[1]
	echo, err := tcpecho.Listen()
	if err != nil {
		return err
	}
	defer echo.Close()
	var bid struct {
		ID        string
		Addresses []string
	}
	if err := b.JSON("id", nil, &bid); err != nil {
		return err
	}
	for _, ad := range bid.Addresses {
		if strings.HasPrefix(ad, "/ip4/127.0.0.1/tcp/") {
			if _, err := a.Post("swarm/connect", url.Values{"arg": {ad}}, nil, ""); err != nil {
				return err
			}
			break
		}
	}
	port := fmt.Sprint(echo.Port())
	if _, err := b.Post("p2p/listen", url.Values{"arg": {"/x/bench", "/ip4/127.0.0.1/tcp/" + port}}, nil, ""); err != nil {
		return err
	}
	fwd, err := proc.FreePort()
	if err != nil {
		return err
	}
	if _, err := a.Post("p2p/forward", url.Values{"arg": {"/x/bench", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", fwd), "/p2p/" + bid.ID}}, nil, ""); err != nil {
		return err
	}

	var direct, tunnel []float64
	var peakA, peakB int64
	for i := range runs {
		mbs, err := echoRun(echo.Addr(), size, uint64(i))
		if err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		direct = append(direct, mbs)
		sa := benchutil.Sample(a.Pid(), 20*time.Millisecond, "RssAnon")
		sb := benchutil.Sample(b.Pid(), 20*time.Millisecond, "RssAnon")
		mbs, err = echoRun(fmt.Sprintf("127.0.0.1:%d", fwd), size, uint64(i))
		peakA, peakB = max(peakA, sa.Done()[0]), max(peakB, sb.Done()[0])
		if err != nil {
			return fmt.Errorf("through p2p: %w", err)
		}
		tunnel = append(tunnel, mbs)
		fmt.Printf("  run %d: direct %7.1f MiB/s, through p2p %7.1f MiB/s\n", i+1, direct[i], tunnel[i])
	}
	md, mt := benchutil.Median(direct), benchutil.Median(tunnel)
	fmt.Printf("cairn p2p benchmark: %d MiB each way through a TCP echo, %d runs (medians)\n", size>>20, runs)
	fmt.Printf("  direct loopback TCP:               %7.1f MiB/s\n", md)
	fmt.Printf("  through p2p forward/listen (A->B): %7.1f MiB/s = %.3f x direct\n", mt, mt/md)
	fmt.Printf("  peak RssAnon during the tunnel runs: A %.1f MiB, B %.1f MiB\n", float64(peakA)/1024, float64(peakB)/1024)
	return nil
}

// echoRun pushes size bytes through the echo at addr and returns the
// payload rate in MiB/s (each way, both at once).
func echoRun(addr string, size int64, seed uint64) (float64, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	res, err := tcpecho.RoundTrip(c, size, seed)
	if err != nil {
		return 0, err
	}
	if res.Sent != res.Got {
		return 0, fmt.Errorf("%d bytes came back different", size)
	}
	return benchutil.MiBs(size, res.Elapsed), nil
}
