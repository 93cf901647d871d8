// Command pubsubbench measures a stalled pubsub subscriber: node
// A publishes -n messages of -size bytes to a topic over the RPC, one
// pub call after the other; node B has two RPC subscribers (pubsub/sub
// over HTTP) to it, one that reads every message and one that stops
// reading after the first (its socket's receive buffer is 4 KiB, so the
// kernel does not hide the stall). RssAnon of both daemons is sampled
// every 50 ms. Afterwards the stalled subscriber reads again: cairn must
// have dropped it (its stream ends with the "subscriber too slow" trailer)
// while its queue stayed within its bound, and A's memory must not have
// grown with the messages. The same scenario runs with two Kubo 0.43.1
// daemons in the same run as the reference; the table shows medians of
// -runs runs and the cairn/Kubo ratios.
//
// cairn runs with a board profile (-board, default pi-zero-2w: the
// subscription queue is sized from its budget), Kubo with the test
// profile; both online on 127.0.0.1 in a network namespace of their own
// (the command re-runs itself in `unshare --net`).
//
//	make bench-pubsub [BENCH_ARGS='-runs 3 -n 10000 -size 1024']
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"

	mbase "github.com/multiformats/go-multibase"
)

var verbose = flag.Bool("v", false, "print when each phase ends")

func main() {
	daemon.EnterNetNS()
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	kubo := flag.String("kubo", filepath.Join(daemon.KuboDir(), "ipfs"), "Kubo binary (scripts/bench-kubo.sh)")
	board := flag.String("board", "pi-zero-2w", "cairn's board profile (its budget sizes the subscription queue)")
	n := flag.Int("n", 10000, "messages published")
	size := flag.Int("size", 1024, "bytes of each message")
	runs := flag.Int("runs", 3, "runs (the table shows medians)")
	flag.Parse()
	if err := daemon.LoopbackOnly(); err != nil {
		fmt.Fprintln(os.Stderr, "pubsubbench:", err)
		os.Exit(1)
	}
	ok, err := run(*bin, *kubo, *board, *n, *size, *runs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pubsubbench:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// result is one run of the scenario on one implementation.
type result struct {
	publish            time.Duration
	aIdle, aPeak, aEnd float64 // MiB
	aTenth             float64 // MiB, after a tenth of the messages
	bIdle, bPeak, bEnd float64 // MiB
	received           int     // by B's reading subscriber
	stalledMsgs        int     // what the stalled subscriber read, the first included
	stalledBytes       int64   // the bytes of its stream
	stalledErr         string  // its stream's end: the trailer error, or "" if it went on
}

func run(bin, kubo, board string, n, size, runs int) (bool, error) {
	for _, b := range []string{bin, kubo} {
		if _, err := os.Stat(b); err != nil {
			return false, fmt.Errorf("%w (make bench-pubsub builds both)", err)
		}
	}
	work, err := os.MkdirTemp("", "cairn-pubsubbench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(work)
	figs := []*benchutil.Figure{
		{Name: fmt.Sprintf("publish %d x %d B on A", n, size), Unit: "msg/s"},
		{Name: "A RssAnon idle (before publishing)", Unit: "MiB", Lower: true},
		{Name: "A RssAnon after a tenth of the messages", Unit: "MiB", Lower: true},
		{Name: "A peak RssAnon while publishing", Unit: "MiB", Lower: true},
		{Name: "A RssAnon at the end", Unit: "MiB", Lower: true},
		{Name: "B RssAnon idle (subscribers open)", Unit: "MiB", Lower: true},
		{Name: "B peak RssAnon", Unit: "MiB", Lower: true},
		{Name: "B RssAnon at the end", Unit: "MiB", Lower: true},
		{Name: "messages at B's reading subscriber", Unit: "msg"},
		{Name: "control, both read: A peak RssAnon", Unit: "MiB", Lower: true},
		{Name: "control, both read: B peak RssAnon", Unit: "MiB", Lower: true},
	}
	ok := true
	for r := 0; r < runs; r++ {
		t0 := time.Now()
		for _, impl := range []string{"cairn", "kubo"} {
			res, err := measure(impl, bin, kubo, board, filepath.Join(work, fmt.Sprintf("%s-%d", impl, r)), n, size, true)
			if err != nil {
				return false, fmt.Errorf("run %d, %s: %w", r+1, impl, err)
			}
			ctl, err := measure(impl, bin, kubo, board, filepath.Join(work, fmt.Sprintf("%s-%d-control", impl, r)), n, size, false)
			if err != nil {
				return false, fmt.Errorf("run %d, %s, control: %w", r+1, impl, err)
			}
			fmt.Printf("run %d %-5s: publish %.1fs, A idle/tenth/peak/end %.1f/%.1f/%.1f/%.1f MiB, B idle/peak/end %.1f/%.1f/%.1f MiB, reader got %d, stalled read %d msgs (%d bytes), ended: %q; control: A peak %.1f MiB, B peak %.1f MiB, readers got %d and %d\n",
				r+1, impl, res.publish.Seconds(), res.aIdle, res.aTenth, res.aPeak, res.aEnd, res.bIdle, res.bPeak, res.bEnd,
				res.received, res.stalledMsgs, res.stalledBytes, res.stalledErr, ctl.aPeak, ctl.bPeak, ctl.received, ctl.stalledMsgs)
			vals := []float64{float64(n) / res.publish.Seconds(), res.aIdle, res.aTenth, res.aPeak, res.aEnd, res.bIdle, res.bPeak, res.bEnd,
				float64(res.received), ctl.aPeak, ctl.bPeak}
			for i, v := range vals {
				if impl == "cairn" {
					figs[i].Cairn = append(figs[i].Cairn, v)
				} else {
					figs[i].Kubo = append(figs[i].Kubo, v)
				}
			}
			if impl == "cairn" {
				ok = check(res, ctl, n, size) && ok
			}
		}
		fmt.Printf("run %d took %.0fs\n", r+1, time.Since(t0).Seconds())
	}
	load, _ := os.ReadFile("/proc/loadavg")
	benchutil.PrintTable(os.Stdout, fmt.Sprintf("pubsub, a stalled subscriber: A publishes %d messages of %d B to B (one reading and one stalled RPC subscriber); cairn --board=%s, Kubo 0.43.1 test profile; medians of %d runs (load average %s)",
		n, size, board, runs, strings.Join(strings.Fields(string(load))[:3], " ")), figs)
	return ok, nil
}

// check prints whether cairn's run shows what the issue asks: the slow
// subscriber dropped, the reader not slowed to losses, and A's memory not
// grown by the stall (against the control, where both subscribers read).
func check(res, ctl *result, n, size int) bool {
	ok := true
	fail := func(f string, a ...any) { fmt.Printf("  FAIL: "+f+"\n", a...); ok = false }
	if !strings.Contains(res.stalledErr, "subscriber too slow") {
		fail("cairn did not drop the stalled subscriber (its stream ended with %q)", res.stalledErr)
	}
	// When it reads again it gets what sat in the socket buffers (the
	// kernel's) when it was dropped: its queue was freed with it.
	if res.stalledMsgs >= n {
		fail("the stalled subscriber got all %d messages: nothing was dropped", n)
	}
	if res.received != n || ctl.received != n || ctl.stalledMsgs != n {
		fail("B's reading subscribers got %d (stall), %d and %d (control) of %d messages", res.received, ctl.received, ctl.stalledMsgs, n)
	}
	// Had A kept what the stalled subscriber did not take, it would hold
	// the data published (n*size) beyond the control's peak.
	data := float64(n*size) / (1 << 20)
	if res.aPeak-ctl.aPeak > data {
		fail("A's peak RssAnon %.1f MiB is over the control's %.1f MiB by more than the %.1f MiB published", res.aPeak, ctl.aPeak, data)
	}
	if res.bPeak-ctl.bPeak > data {
		fail("B's peak RssAnon %.1f MiB is over the control's %.1f MiB by more than the %.1f MiB published", res.bPeak, ctl.bPeak, data)
	}
	return ok
}

func start(impl, bin, kubo, board, repo string) (*daemon.Daemon, error) {
	if impl == "cairn" {
		return daemon.StartCairn(bin, repo, daemon.Options{Board: board, Args: []string{"--enable-pubsub-experiment"}})
	}
	return daemon.StartKubo(kubo, repo, daemon.Options{Config: map[string]string{"Pubsub.Enabled": "true"}})
}

// measure runs the scenario on impl; with stall false it is the control:
// B's second subscriber reads every message too.
func measure(impl, bin, kubo, board, dir string, n, size int, stall bool) (*result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tStart := time.Now()
	phase := func(what string) {
		if *verbose {
			fmt.Fprintf(os.Stderr, "  %s stall=%v: %s at %.1fs\n", impl, stall, what, time.Since(tStart).Seconds())
		}
	}
	defer phase("stopped")
	a, err := start(impl, bin, kubo, board, filepath.Join(dir, "a"))
	if err != nil {
		return nil, err
	}
	defer a.Kill() // the repos are thrown away
	b, err := start(impl, bin, kubo, board, filepath.Join(dir, "b"))
	if err != nil {
		return nil, err
	}
	defer b.Kill()
	res := &result{}
	phase("started")
	bID, bAddr, err := identity(b)
	if err != nil {
		return nil, err
	}
	if _, err := a.Post("swarm/connect", url.Values{"arg": {bAddr}}, nil, ""); err != nil {
		return nil, err
	}

	topic := "pubsubbench"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reader, _, err := subscribe(ctx, b, topic, 0)
	if err != nil {
		return nil, err
	}
	rcvbuf := 0
	if stall {
		rcvbuf = 4096
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	stalled, stalledConn, err := subscribe(sctx, b, topic, rcvbuf)
	if err != nil {
		return nil, err
	}
	// Cancelling the requests ends the streams (closing a body that is
	// being read was seen to block with Kubo).
	defer cancel()
	if err := waitPeer(a, topic, bID); err != nil {
		return nil, err
	}
	phase("subscribed")

	var lastAt atomic.Int64 // unix nanoseconds of the last message read
	received := readAll(reader.Body, &lastAt)
	var other *atomic.Int64 // the second subscriber's count, when it reads
	stalledR := bufio.NewReaderSize(stalled.Body, 512)
	first := make(chan error, 1)
	if stall {
		// It reads one message, then nothing.
		go func() {
			line, err := stalledR.ReadBytes('\n')
			res.stalledBytes += int64(len(line))
			first <- err
		}()
	} else {
		other = readAll(stalled.Body, &lastAt)
		close(first)
	}

	time.Sleep(500 * time.Millisecond) // settle after the starts
	res.aIdle, res.bIdle = rssMiB(a), rssMiB(b)
	sa := benchutil.Sample(a.Pid(), 50*time.Millisecond, "RssAnon")
	sb := benchutil.Sample(b.Pid(), 50*time.Millisecond, "RssAnon")
	defer sa.Done()
	defer sb.Done()

	payload := make([]byte, size)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		copy(payload, fmt.Sprintf("%08d", i))
		if err := publish(a, topic, payload); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		if i == n/10 {
			res.aTenth = rssMiB(a)
		}
		if i == 0 {
			select {
			case err := <-first:
				if err != nil {
					return nil, fmt.Errorf("stalled subscriber's first message: %w", err)
				}
			case <-time.After(30 * time.Second):
				return nil, errors.New("the first message did not reach the stalled subscriber within 30s")
			}
			if stall {
				res.stalledMsgs = 1
			}
		}
	}
	res.publish = time.Since(t0)
	phase("published")
	// B's readers: until they have all, or nothing came for 2 s.
	all := func() bool { return received.Load() >= int64(n) && (other == nil || other.Load() >= int64(n)) }
	for !all() && time.Since(time.Unix(0, lastAt.Load())) < 2*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	res.received = int(received.Load())
	phase("received")
	res.aEnd, res.bEnd = rssMiB(a), rssMiB(b)
	res.aPeak, res.bPeak = float64(sa.Done()[0])/1024, float64(sb.Done()[0])/1024
	if !stall {
		res.stalledMsgs = int(other.Load())
		return res, nil
	}

	// The stalled subscriber reads again: to the end of its stream, or
	// until nothing has come for 2 s (Kubo keeps it, dropping messages).
	// A usual receive buffer again, so that what waits is read quickly.
	if err := stalledConn.SetReadBuffer(4 << 20); err != nil {
		return nil, err
	}
	var msgs, nbytes atomic.Int64
	var endErr string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			line, err := stalledR.ReadBytes('\n')
			nbytes.Add(int64(len(line)))
			if len(line) > 0 && line[len(line)-1] == '\n' {
				msgs.Add(1)
			}
			if err != nil {
				endErr = stalled.Trailer.Get("X-Stream-Error")
				if endErr == "" && err != io.EOF {
					endErr = err.Error()
				}
				return
			}
		}
	}()
	for seen := int64(-1); ; {
		select {
		case <-done:
			res.stalledErr = endErr
		case <-time.After(2 * time.Second):
			if cur := msgs.Load(); cur != seen {
				seen = cur
				continue
			}
			stop() // still open: not dropped
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				return nil, errors.New("the stalled subscriber's read did not end after its request was cancelled")
			}
		}
		res.stalledMsgs += int(msgs.Load())
		res.stalledBytes += nbytes.Load()
		return res, nil
	}
}

// readAll counts the messages of a pubsub/sub stream as it reads them,
// noting when the last came in lastAt.
func readAll(body io.Reader, lastAt *atomic.Int64) *atomic.Int64 {
	var count atomic.Int64
	go func() {
		dec := json.NewDecoder(bufio.NewReader(body))
		for {
			var m struct{ Data string }
			if dec.Decode(&m) != nil {
				return
			}
			count.Add(1)
			lastAt.Store(time.Now().UnixNano())
		}
	}()
	return &count
}

func rssMiB(d *daemon.Daemon) float64 { return float64(daemon.ProcStatus(d.Pid(), "RssAnon")) / 1024 }

// identity is d's peer ID and its loopback TCP address with /p2p/.
func identity(d *daemon.Daemon) (string, string, error) {
	var out struct {
		ID        string
		Addresses []string
	}
	if err := d.JSON("id", nil, &out); err != nil {
		return "", "", err
	}
	for _, a := range out.Addresses {
		if strings.HasPrefix(a, "/ip4/127.0.0.1/tcp/") && !strings.Contains(a, "/ws") {
			if !strings.Contains(a, "/p2p/") {
				a += "/p2p/" + out.ID
			}
			return out.ID, a, nil
		}
	}
	return "", "", fmt.Errorf("%s has no loopback TCP address: %v", d.Name, out.Addresses)
}

func mb64(s string) string {
	enc, _ := mbase.EncoderByName("base64url")
	return enc.Encode([]byte(s))
}

// subscribe opens pubsub/sub on d and returns the answer and its
// connection; rcvbuf > 0 sets the socket's receive buffer.
func subscribe(ctx context.Context, d *daemon.Daemon, topic string, rcvbuf int) (*http.Response, *net.TCPConn, error) {
	dialer := &net.Dialer{}
	var conn *net.TCPConn
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				conn = c.(*net.TCPConn)
				if rcvbuf > 0 {
					err = conn.SetReadBuffer(rcvbuf)
				}
			}
			return c, err
		},
		DisableCompression: true,
	}}
	req, err := http.NewRequestWithContext(ctx, "POST", d.URL+"/api/v0/pubsub/sub?arg="+url.QueryEscape(mb64(topic)), nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, nil, fmt.Errorf("%s pubsub/sub: %s", d.Name, resp.Status)
	}
	return resp, conn, nil
}

// waitPeer waits until a's pubsub/peers of topic lists pid.
func waitPeer(a *daemon.Daemon, topic, pid string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var out struct{ Strings []string }
		if err := a.JSON("pubsub/peers", url.Values{"arg": {mb64(topic)}}, &out); err != nil {
			return err
		}
		if slices.Contains(out.Strings, pid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s never saw %s subscribe", a.Name, pid)
}

// publish sends one message as Kubo 0.42's clients do.
func publish(d *daemon.Daemon, topic string, data []byte) error {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "")
	w.Write(data)
	mw.Close()
	_, err := d.Post("pubsub/pub", url.Values{"arg": {mb64(topic)}}, &body, mw.FormDataContentType())
	return err
}
