package commands_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/node/p2p"

	mbase "github.com/multiformats/go-multibase"
)

func pubsubNode(t *testing.T, edit func(doc map[string]any)) (*node.Node, *testutil.Server) {
	t.Helper()
	n := testutil.MustOnlineNode(t, "auto", func(doc map[string]any) {
		config.SetKey(doc, "Pubsub.Enabled", true)
		if edit != nil {
			edit(doc)
		}
	})
	return n, testutil.StartServer(t, n)
}

func u64(s string) string {
	enc, _ := mbase.EncoderByName("base64url")
	return enc.Encode([]byte(s))
}

func unmb(t *testing.T, s string) string {
	t.Helper()
	_, b, err := mbase.Decode(s)
	if err != nil {
		t.Fatalf("multibase %q: %v", s, err)
	}
	return string(b)
}

// subscribe opens pubsub/sub over HTTP (as kubo-rpc-client does) and
// returns the response: its headers have arrived, no message yet.
func subscribe(t *testing.T, srv *testutil.Server, topic string) *http.Response {
	t.Helper()
	done := make(chan *http.Response, 1)
	go func() {
		done <- rpcPost(t, srv, "pubsub/sub", url.Values{"arg": {u64(topic)}}, nil, "")
	}()
	select {
	case resp := <-done:
		if resp.StatusCode != 200 || resp.Header.Get("X-Chunked-Output") != "1" || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("pubsub/sub answered %d %v", resp.StatusCode, resp.Header)
		}
		return resp
	case <-time.After(5 * time.Second):
		t.Fatal("pubsub/sub: no headers before the first message")
	}
	return nil
}

// pubsubPublish sends one message as Kubo 0.42's clients do (topic multibase,
// payload the first multipart part) and returns the answer, read.
func pubsubPublish(t *testing.T, srv *testutil.Server, topic string, data []byte) (int, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "")
	w.Write(data)
	mw.Close()
	resp := rpcPost(t, srv, "pubsub/pub", url.Values{"arg": {u64(topic)}}, &body, mw.FormDataContentType())
	b := readAll(t, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b
}

var goroutineFrame = regexp.MustCompile(`\(0x[^)]*\)|\([^)]*\.\.\.\)| in goroutine \d+|\{[^}]*\}`)

// pooledGoroutine matches goroutines that outlive a request by design:
// fasthttp's idle workers (they expire after 10 s) and date updater, and
// the process-wide bandwidth meter sweeper.
var pooledGoroutine = regexp.MustCompile(`fasthttp\.\(\*workerPool\)\.getCh|fasthttp\.updateServerDate|go-flow-metrics\.\(\*sweeper\)\.start`)

// goroutines counts the running goroutines by where they were created.
// runsCairnCode reports a goroutine's stack with a frame of cairn's own
// besides the work gate's stream wrapper (node/p2p/gate.go).
func runsCairnCode(stack string) bool {
	for _, l := range strings.Split(stack, "\n") {
		if strings.Contains(l, "cairn/") && !strings.Contains(l, "gatedHost") && !strings.Contains(l, "gatedStream") &&
			!strings.Contains(l, "gatedConn") && !strings.Contains(l, "node/p2p/gate.go") && !strings.Contains(l, "inboundHandler") &&
			!strings.Contains(l, "node/p2p/inbound.go") {
			return true
		}
	}
	return false
}

func goroutines() map[string]int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	out := map[string]int{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		if len(lines) < 3 {
			continue
		}
		// Only those running cairn's code (command handlers, emitters,
		// subscription pumps): the libp2p host dials, refreshes and
		// opens pubsub streams to new connections on its own schedule.
		// Keyed by creator, without arguments and goroutine numbers.
		// The work gate's wrappers around every stream handler and
		// inbound connection, and the handler of every inbound stream
		// (node/p2p/inbound.go), are cairn's code in libp2p goroutines:
		// they do not count.
		if !runsCairnCode(g) {
			continue
		}
		sig := goroutineFrame.ReplaceAllString(lines[len(lines)-2], "")
		if !pooledGoroutine.MatchString(sig) {
			out[sig]++
		}
	}
	return out
}

// waitGoroutines waits until no goroutine is left beyond those of base
// (taken with goroutines()), and lists the extra ones if some stay.
func waitGoroutines(t *testing.T, base map[string]int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		http.DefaultClient.CloseIdleConnections()
		var extra []string
		for sig, n := range goroutines() {
			if n > base[sig] && !strings.Contains(sig, "waitGoroutines") && !strings.Contains(sig, "runtime.Stack") {
				extra = append(extra, fmt.Sprintf("%d x %s", n-base[sig], sig))
			}
		}
		if len(extra) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left:\n%s", strings.Join(extra, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readMsgs(t *testing.T, sc *bufio.Scanner, n int, d time.Duration) []commands.PubsubMessage {
	t.Helper()
	got := make(chan []commands.PubsubMessage, 1)
	var count atomic.Int64
	go func() {
		var out []commands.PubsubMessage
		for len(out) < n && sc.Scan() {
			var m commands.PubsubMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				break
			}
			out = append(out, m)
			count.Add(1)
		}
		got <- out
	}()
	select {
	case out := <-got:
		if len(out) != n {
			t.Fatalf("read %d messages, want %d", len(out), n)
		}
		return out
	case <-time.After(d):
		t.Fatalf("timed out reading %d messages (%d read)", n, count.Load())
	}
	return nil
}

// Ensure three loopback nodes exchange pubsub messages: B and C subscribe
// over HTTP (headers at once), A publishes 200 messages, both receive all
// of them in A's order with Kubo 0.42's fields; pubsub/peers and ls
// answer; the 0.9 forms (plain topic, payload in arg#2) work; a
// subscriber that hangs up leaves no goroutine behind.
func TestPubsub_ThreeNodes_OrderPeersAndHangup(t *testing.T) {
	a, sa := pubsubNode(t, nil)
	b, sb := pubsubNode(t, nil)
	c, sc := pubsubNode(t, nil)
	mustCall(t, a, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	mustCall(t, a, "swarm/connect", []string{testutil.P2PAddr(t, c)}, nil, nil)
	mustCall(t, b, "swarm/connect", []string{testutil.P2PAddr(t, c)}, nil, nil)
	base := goroutines()

	const topic = "sensor\n feed/ü"
	rb, rc := subscribe(t, sb, topic), subscribe(t, sc, topic)
	waitFor(t, 15*time.Second, "A to see B and C on the topic", func() bool {
		got := mustCall(t, a, "pubsub/peers", []string{u64(topic)}, nil, nil).Values[0].(*commands.StringsOutput).Strings
		return slices.Contains(got, b.PeerID.String()) && slices.Contains(got, c.PeerID.String())
	})
	all := mustCall(t, a, "pubsub/peers", nil, nil, nil).Values[0].(*commands.StringsOutput).Strings
	if len(all) != 2 || !slices.IsSorted(all) {
		t.Fatalf("pubsub/peers without topic: %q", all)
	}
	ls := mustCall(t, b, "pubsub/ls", nil, nil, nil).Values[0].(*commands.StringsOutput).Strings
	if len(ls) != 1 || ls[0] != u64(topic) {
		t.Fatalf("pubsub/ls on B: %q", ls)
	}

	const n = 200
	for i := 0; i < n; i++ {
		if code, body := pubsubPublish(t, sa, topic, []byte(fmt.Sprintf("reading %d", i))); code != 200 {
			t.Fatalf("pub %d: %d %s", i, code, body)
		}
	}
	for name, resp := range map[string]*http.Response{"B": rb, "C": rc} {
		sc := bufio.NewScanner(resp.Body)
		msgs := readMsgs(t, sc, n, 30*time.Second)
		var last uint64
		for i, m := range msgs {
			if got := unmb(t, m.Data); got != fmt.Sprintf("reading %d", i) {
				t.Fatalf("%s message %d: %q (order per publisher lost)", name, i, got)
			}
			seq := binary.BigEndian.Uint64([]byte(unmb(t, m.Seqno)))
			if m.From != a.PeerID.String() || len(m.TopicIDs) != 1 || unmb(t, m.TopicIDs[0]) != topic || seq <= last {
				t.Fatalf("%s message %d: %+v", name, i, m)
			}
			last = seq
		}
	}

	// 0.9's form: plain topic, payloads in the arguments.
	mustCall(t, a, "pubsub/pub", []string{"sensor\n feed/ü", "one", "two"}, nil, nil)
	msgs := readMsgs(t, bufio.NewScanner(rc.Body), 2, 10*time.Second)
	if unmb(t, msgs[0].Data) != "one" || unmb(t, msgs[1].Data) != "two" {
		t.Fatalf("0.9 pub: %+v", msgs)
	}

	// B hangs up: its subscription ends, its goroutines go.
	rb.Body.Close()
	rc.Body.Close()
	waitFor(t, 5*time.Second, "subscriptions to end", func() bool {
		return len(mustCall(t, b, "pubsub/ls", nil, nil, nil).Values[0].(*commands.StringsOutput).Strings) == 0 &&
			len(mustCall(t, c, "pubsub/ls", nil, nil, nil).Values[0].(*commands.StringsOutput).Strings) == 0
	})
	waitGoroutines(t, base)
}

// Ensure bad input gets clear errors and leaves no goroutine: publish
// while pubsub is off (Kubo's error), an invalid multibase topic, a
// 0.9 plain topic, a message over 1 MiB, a 64 KiB topic (works), pub
// without data.
func TestPubsub_BadInput(t *testing.T) {
	off := testutil.MustOnlineNode(t, "auto", nil)
	srvOff := testutil.StartServer(t, off)
	a, sa := pubsubNode(t, nil)
	base := goroutines()

	code, body := pubsubPublish(t, srvOff, "t", []byte("x"))
	if msg := "experimental pubsub feature not enabled, run daemon with --enable-pubsub-experiment to use"; code != 500 || !strings.Contains(string(body), msg) {
		t.Fatalf("pub while disabled: %d %s", code, body)
	}
	for _, p := range []string{"pubsub/ls", "pubsub/peers", "pubsub/sub"} {
		args := []string{u64("t")}
		if p == "pubsub/ls" {
			args = nil
		}
		wantErr(t, callErr(t, off, p, args, nil, nil), p2p.ErrPubsubDisabled.Error())
	}
	wantErrPrefix(t, callErr(t, a, "pubsub/sub", []string{"u!!!"}, nil, nil), "URL arg must be multibase encoded: ")
	wantErrPrefix(t, callErr(t, a, "pubsub/peers", []string{"u!!!"}, nil, nil), "URL arg must be multibase encoded: ")
	// A topic not starting with "u" is 0.9's plain topic.
	pr := subscribe(t, sa, "ignored")
	pr.Body.Close()
	mustCall(t, a, "pubsub/pub", []string{"btopic", "x"}, nil, nil)
	big := bytes.Repeat([]byte("x"), 1<<20+1)
	code, body = pubsubPublish(t, sa, "t", big)
	if msg := fmt.Sprintf("message of %d bytes is over the pubsub limit of %d bytes", 1<<20+1, 1<<20); code != 500 || !strings.Contains(string(body), msg) {
		t.Fatalf("pub of 1 MiB + 1: %d %s", code, body)
	}
	if err := callErr(t, a, "pubsub/pub", []string{u64("t")}, nil, nil); err.Error() != "file argument 'data' is required" {
		t.Fatalf("pub without data: %v", err)
	}
	// A 64 KiB topic: Kubo takes it (net/http reads 1 MiB of headers).
	long := strings.Repeat("t", 64<<10)
	rl := subscribe(t, sa, long)
	if code, body := pubsubPublish(t, sa, long, []byte("long topic")); code != 200 {
		t.Fatalf("pub on a 64 KiB topic: %d %s", code, body)
	}
	lsc := bufio.NewScanner(rl.Body)
	lsc.Buffer(nil, 1<<20)
	m := readMsgs(t, lsc, 1, 10*time.Second)[0]
	if unmb(t, m.Data) != "long topic" || unmb(t, m.TopicIDs[0]) != long {
		t.Fatalf("64 KiB topic message: data %q", unmb(t, m.Data))
	}
	rl.Body.Close()
	waitGoroutines(t, base)
}

// Ensure a subscriber that stops reading is dropped once its queue (from
// the budget: 2 MiB at 128 MiB) is full: the node does not buffer the
// 10,000 messages of 1 KiB, the subscription ends (pubsub/ls forgets it),
// and the publisher and other subscribers go on.
func TestPubsub_StalledSubscriberDropped(t *testing.T) {
	a, sa := pubsubNode(t, func(doc map[string]any) { config.SetKey(doc, "Budget.MemoryMiB", 128) })
	if q := a.Net.PubSub.QueueBytes; q != 2<<20 {
		t.Fatalf("queue bound %d, want 2 MiB", q)
	}
	stalled := subscribe(t, sa, "flood")
	sub, err := a.Net.PubSub.Subscribe("flood")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	payload := bytes.Repeat([]byte("k"), 1024)
	ctx := t.Context()
	var readByUs int
	for i := 0; i < 10000; i++ {
		if err := a.Net.PubSub.Publish(ctx, "flood", payload); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		// The in-process subscriber keeps up.
		for sub.Queued() > 0 {
			if _, err := sub.Next(ctx); err != nil {
				t.Fatalf("reading subscriber dropped at %d: %v", i, err)
			}
			readByUs++
		}
	}
	waitFor(t, 10*time.Second, "the stalled subscription to be dropped", func() bool {
		return a.Net.PubSub.Active() == 1 // ours only
	})
	if readByUs < 9000 {
		t.Fatalf("the reading subscriber got %d of 10000", readByUs)
	}
	// The stalled client gets what was already on the wire, then the end
	// of the stream with the error.
	stalled.Body.Close()
}
