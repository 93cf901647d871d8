// Command slowloris measures how long a legitimate RPC request takes while
// 500 slowloris connections are open against the daemon, against the same
// daemon unloaded (the goal is within 2x).
//
// It runs inside a network namespace of its own (daemon.EnterNetNS, root
// or an unprivileged user namespace) where the attackers' addresses
// 10.77.0.2-11 are added to lo: they reach the daemon on 127.0.0.1 but
// are not loopback clients, as hosts of a LAN would be. The daemon is
// cairn offline with the test profile (or -board's budget). Each attacker
// connection sends a partial request head, then one more header line
// every 5 s, and is opened again 1 s after the daemon closes it. The
// legitimate client calls POST /api/v0/version from 127.0.0.1 on a new
// connection each time, -n times one -every apart (300 x 50 ms: 15 s, so
// the loaded phase spans the daemon's 10 s deadlines and the attackers'
// reconnections), unloaded and then with the attack under way.
//
//	make bench-slowloris [BENCH_ARGS='-n 300 -conns 500 -board pi-zero-2w']
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cairn/internal/daemon"
)

func main() {
	daemon.EnterNetNS()
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	n := flag.Int("n", 300, "legitimate requests per phase")
	conns := flag.Int("conns", 500, "slowloris connections")
	hosts := flag.Int("hosts", 10, "attacking addresses (10.77.0.2 on)")
	board := flag.String("board", "", "cairn board profile (its connection limit)")
	flag.DurationVar(&every, "every", 50*time.Millisecond, "time between two legitimate requests (the loaded phase spans the daemon's deadlines)")
	flag.Parse()
	if err := run(*bin, *board, *n, *conns, *hosts); err != nil {
		fmt.Fprintln(os.Stderr, "slowloris:", err)
		os.Exit(1)
	}
}

// every paces the legitimate requests.
var every time.Duration

func run(bin, board string, n, conns, hosts int) error {
	var srcs []string
	for i := 0; i < hosts; i++ {
		a := fmt.Sprintf("10.77.0.%d", i+2)
		if out, err := exec.Command("ip", "addr", "add", a+"/32", "dev", "lo").CombinedOutput(); err != nil {
			return fmt.Errorf("ip addr add %s: %v %s", a, err, out)
		}
		srcs = append(srcs, a)
	}
	work, err := os.MkdirTemp("", "cairn-slowloris-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	d, err := daemon.StartCairn(bin, filepath.Join(work, "repo"), daemon.Options{Offline: true, Board: board})
	if err != nil {
		return err
	}
	defer d.Stop()
	addr := strings.TrimPrefix(d.URL, "http://")

	time.Sleep(500 * time.Millisecond)
	idle, idleFail := measure(addr, n)

	var open, refused, opened atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(src string) {
			defer wg.Done()
			attack(addr, src, stop, &open, &refused, &opened)
		}(srcs[i%len(srcs)])
	}
	time.Sleep(3 * time.Second) // all connected, the refused ones retrying
	heldBefore := open.Load()
	loaded, loadedFail := measure(addr, n)
	heldAfter := open.Load()
	close(stop)
	wg.Wait()

	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("POST /api/v0/version from 127.0.0.1, a new connection each, %d, one every %v (cairn%s; load average %s)\n",
		n, every, boardNote(board), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("%-44s %10s %10s %10s %8s\n", "", "median", "p95", "max", "failed")
	row := func(name string, ds []time.Duration, fail int) {
		fmt.Printf("%-44s %10s %10s %10s %8d\n", name, ms(pct(ds, 50)), ms(pct(ds, 95)), ms(pct(ds, 100)), fail)
	}
	row("unloaded", idle, idleFail)
	row(fmt.Sprintf("%d slowloris connections from %d addresses", conns, len(srcs)), loaded, loadedFail)
	fmt.Printf("ratio of medians %.2fx, of p95 %.2fx (goal: within 2x)\n",
		float64(pct(loaded, 50))/float64(pct(idle, 50)), float64(pct(loaded, 95))/float64(pct(idle, 95)))
	fmt.Printf("attack: %d connections held open by the daemon at the start of the loaded phase, %d at its end; "+
		"%d connections opened, %d refused at once (429/503)\n", heldBefore, heldAfter, opened.Load(), refused.Load())
	return nil
}

func boardNote(b string) string {
	if b == "" {
		return ", no board profile: 256 connections"
	}
	return ", --board=" + b
}

// measure makes n version calls from 127.0.0.1, each on a new connection,
// and returns the times of the answered ones and the count of failures.
func measure(addr string, n int) ([]time.Duration, int) {
	var ds []time.Duration
	fail := 0
	for i := 0; i < n; i++ {
		start := time.Now()
		if call(addr) {
			ds = append(ds, time.Since(start))
		} else {
			fail++
		}
		time.Sleep(every - time.Since(start))
	}
	return ds, fail
}

func call(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "POST /api/v0/version HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == 200
}

// attack keeps one slowloris connection from src open until stop.
func attack(addr, src string, stop chan struct{}, open, refused, opened *atomic.Int64) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	for {
		select {
		case <-stop:
			return
		default:
		}
		c, err := d.Dial("tcp", addr)
		if err == nil {
			opened.Add(1)
			held := slow(c, stop, open)
			if !held {
				refused.Add(1)
			}
			c.Close()
		}
		select {
		case <-stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// slow sends a request head a line every 5 s until the daemon closes the
// connection or stop; it reports whether the daemon took the connection
// (it was not answered at once).
func slow(c net.Conn, stop chan struct{}, open *atomic.Int64) bool {
	closed := make(chan bool, 1)
	go func() {
		// An answer within 200 ms is a refusal; a later close is the
		// daemon's deadline.
		start := time.Now()
		b := make([]byte, 512)
		c.Read(b)
		closed <- time.Since(start) > 200*time.Millisecond
	}()
	open.Add(1)
	defer open.Add(-1)
	fmt.Fprintf(c, "POST /api/v0/version HTTP/1.1\r\nHost: x\r\n")
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case held := <-closed:
			return held
		case <-stop:
			return true
		case <-t.C:
			fmt.Fprintf(c, "X-a: b\r\n")
		}
	}
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
