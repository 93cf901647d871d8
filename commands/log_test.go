package commands_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"

	logging "github.com/ipfs/go-log/v2"
)

// postJSON posts to the RPC and decodes a 200 answer into v; it returns
// the status and the body of any other answer.
func postJSON(t *testing.T, url string, v any) (int, string) {
	t.Helper()
	resp, body := testutil.PostURL(t, url, nil)
	if resp.StatusCode == 200 && v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v in %q", url, err, body)
		}
	}
	return resp.StatusCode, string(body)
}

// Ensure log/level gets and sets levels as Kubo 0.42: the default alone,
// every subsystem with "(default)", one subsystem, and the change message.
func TestLogLevel_GetSet_KuboShapes(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	logging.Logger("cairn-test-level")
	t.Cleanup(func() { logging.SetLogLevel("cairn-test-level", logging.DefaultLevel().String()) })
	api := srv.URL + "/api/v0/log/level"

	type levelOut struct {
		Levels  map[string]string
		Message string
	}
	var got levelOut
	if code, body := postJSON(t, api, &got); code != 200 || len(got.Levels) != 1 || got.Levels[""] != logging.DefaultLevel().String() {
		t.Fatalf("no argument: %d %s", code, body)
	}
	got = levelOut{}
	if code, body := postJSON(t, api+"?arg=cairn-test-level&arg=debug", &got); code != 200 ||
		got.Message != "Changed log level of 'cairn-test-level' to 'debug'\n" || got.Levels != nil {
		t.Fatalf("set: %d %s", code, body)
	}
	got = levelOut{}
	if code, body := postJSON(t, api+"?arg=cairn-test-level", &got); code != 200 || got.Levels["cairn-test-level"] != "debug" {
		t.Fatalf("get one: %d %s", code, body)
	}
	got = levelOut{}
	if code, body := postJSON(t, api+"?arg=all", &got); code != 200 || got.Levels["cairn-test-level"] != "debug" ||
		got.Levels["(default)"] != logging.DefaultLevel().String() || got.Levels["core"] == "" {
		t.Fatalf("get all: %d %s", code, body)
	}
	if _, ok := got.Levels[""]; ok {
		t.Fatalf("all: the default is listed under \"\": %v", got.Levels)
	}
	got = levelOut{}
	if code, body := postJSON(t, api+"?arg=cairn-test-level&arg=default", &got); code != 200 ||
		got.Message != "Changed log level of 'cairn-test-level' to '"+logging.DefaultLevel().String()+"'\n" {
		t.Fatalf("set default: %d %s", code, body)
	}
}

// Ensure bad input answers Kubo's errors: an unknown subsystem, a bad level
// (log/level and log/tail --log-level).
func TestLogLevel_BadInput_KuboErrors(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for _, tc := range []struct{ path, want string }{
		{"log/level?arg=no-such-subsystem", `{"Message":"error: No such logger","Code":0,"Type":"error"}`},
		{"log/level?arg=core&arg=loud", `{"Message":"unrecognized level: \"loud\"","Code":0,"Type":"error"}`},
		{"log/level?arg=all&arg=loud", `{"Message":"unrecognized level: \"loud\"","Code":0,"Type":"error"}`},
		{"log/tail?log-level=loud", `{"Message":"setting log level loud: unrecognized level: \"loud\"","Code":0,"Type":"error"}`},
	} {
		code, body := postJSON(t, srv.URL+"/api/v0/"+tc.path, nil)
		if code != 500 || strings.TrimSpace(body) != tc.want {
			t.Errorf("%s: got %d %s, want 500 %s", tc.path, code, body, tc.want)
		}
	}
}

// Ensure log/ls lists the subsystems cairn logs under, Kubo's names where
// they match, sorted.
func TestLogLs_Subsystems(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	var got struct{ Strings []string }
	if code, body := postJSON(t, srv.URL+"/api/v0/log/ls", &got); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	have := map[string]bool{}
	for i, s := range got.Strings {
		have[s] = true
		if i > 0 && got.Strings[i-1] > s {
			t.Fatalf("not sorted: %v", got.Strings)
		}
	}
	for _, want := range []string{"core", "core/commands", "cmds/http", "bitswap", "dht"} {
		if !have[want] {
			t.Errorf("log/ls lacks %q: %v", want, got.Strings)
		}
	}
}

// tailClient starts log/tail and returns its lines as they arrive.
func tailClient(t *testing.T, url string) (<-chan string, *http.Response) {
	t.Helper()
	resp, err := http.Post(url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("X-Stream-Output") != "1" {
		t.Fatalf("log/tail: %d %v", resp.StatusCode, resp.Header)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines, resp
}

// Ensure log/tail streams one JSON event a line, each within 1 s of the
// event that caused it (here a level change, which Kubo logs at info
// under core/commands).
func TestLogTail_LineWithinOneSecond(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	logging.SetLogLevel("core/commands", "info")
	t.Cleanup(func() { logging.SetLogLevel("core/commands", logging.DefaultLevel().String()) })
	lines, _ := tailClient(t, srv.URL+"/api/v0/log/tail")
	for i := range 3 {
		sub := fmt.Sprintf("cairn-tail-%d", i)
		at := time.Now()
		if code, body := postJSON(t, srv.URL+"/api/v0/log/level?arg="+sub+"&arg=warn", nil); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("log/tail ended")
				}
				var ev struct {
					Level, Logger, Msg, Ts string
				}
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatalf("not one JSON object a line: %q: %v", l, err)
				}
				if !strings.Contains(ev.Msg, sub) {
					continue
				}
				if d := time.Since(at); d > time.Second {
					t.Fatalf("line after %v", d)
				}
				if ev.Level != "info" || ev.Logger != "core/commands" || ev.Ts == "" {
					t.Fatalf("event %+v", ev)
				}
			case <-time.After(time.Second):
				t.Fatalf("no line within 1 s of the event %d", i)
			}
			break
		}
	}
}

// activeTails counts the log/tail requests diag/cmds reports active.
func activeTails(t *testing.T, url string) int {
	t.Helper()
	var got []struct {
		Command string
		Active  bool
	}
	if code, body := postJSON(t, url+"/api/v0/diag/cmds", &got); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	n := 0
	for _, c := range got {
		if c.Command == "log/tail" && c.Active {
			n++
		}
	}
	return n
}

func waitActiveTails(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for activeTails(t, url) != want {
		if time.Now().After(deadline) {
			t.Fatalf("active log/tail requests: want %d", want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Ensure log/tail ends when its client goes.
func TestLogTail_EndsWhenClientGoes(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	_, resp := tailClient(t, srv.URL+"/api/v0/log/tail")
	waitActiveTails(t, srv.URL, 1)
	resp.Body.Close()
	waitActiveTails(t, srv.URL, 0)
}

// Ensure a reader that does not read is dropped, not buffered for: while
// its client reads nothing, logging goes on; once it reads, it gets what
// was queued and the trailer saying why the stream ended.
func TestLogTail_SlowReaderDropped(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	quietStderr(t)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/v0/log/tail HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n", srv.Addr)
	waitActiveTails(t, srv.URL, 1)
	l := logging.Logger("cairn-test-flood")
	logging.SetLogLevel("cairn-test-flood", "info")
	t.Cleanup(func() { logging.SetLogLevel("cairn-test-flood", logging.DefaultLevel().String()) })
	msg := strings.Repeat("x", 1000)
	const sent = 20000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range sent {
			l.Info(msg)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("logging blocked by a reader that does not read")
	}
	const trailer = "X-Stream-Error: log tail: the reader fell behind (1024 messages or 1024 KiB queued) and was dropped"
	var got []byte
	buf := make([]byte, 64<<10)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for !strings.Contains(string(got[max(0, len(got)-1000):]), trailer) {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("no trailer after %d bytes (%v): %q", len(got), err, got[max(0, len(got)-150):])
		}
	}
	if lines := strings.Count(string(got), msg); lines == 0 || lines >= sent {
		t.Fatalf("%d of %d lines reached the reader", lines, sent)
	}
	waitActiveTails(t, srv.URL, 0)
}

// quietStderr stops go-log writing to stderr for the test (pipes, as
// log/tail's, still get every line).
func quietStderr(t *testing.T) {
	cfg := logging.GetConfig()
	quiet := cfg
	quiet.Stderr, quiet.Stdout = false, false
	logging.SetupLogging(quiet)
	t.Cleanup(func() { logging.SetupLogging(cfg) })
}
