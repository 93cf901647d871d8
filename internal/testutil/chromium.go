// chromium.go: a headless Chromium driven over the DevTools protocol, for
// the browser tests of web pages the node serves.

package testutil

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// FindChromium returns Debian's chromium (or $CAIRN_CHROMIUM).
func FindChromium() string {
	if p := os.Getenv("CAIRN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// CDP is a minimal Chrome DevTools Protocol client over one page target.
type CDP struct {
	t      *testing.T
	ws     *websocket.Conn
	id     int
	events []map[string]any
}

// Call sends one command and returns its result; events that arrive
// meanwhile are kept for WaitEvent.
func (c *CDP) Call(method string, params map[string]any) map[string]any {
	c.t.Helper()
	c.id++
	if params == nil {
		params = map[string]any{}
	}
	if err := c.ws.WriteJSON(map[string]any{"id": c.id, "method": method, "params": params}); err != nil {
		c.t.Fatalf("cdp %s: %v", method, err)
	}
	for {
		var msg map[string]any
		if err := c.ws.ReadJSON(&msg); err != nil {
			c.t.Fatalf("cdp %s: %v", method, err)
		}
		if id, ok := msg["id"].(float64); ok && int(id) == c.id {
			if e, ok := msg["error"]; ok {
				c.t.Fatalf("cdp %s: %v", method, e)
			}
			r, _ := msg["result"].(map[string]any)
			return r
		}
		c.events = append(c.events, msg)
	}
}

// WaitEvent waits for an event, including ones already received.
func (c *CDP) WaitEvent(method string) {
	c.t.Helper()
	for i, e := range c.events {
		if e["method"] == method {
			c.events = append(c.events[:i:i], c.events[i+1:]...)
			return
		}
	}
	for {
		var msg map[string]any
		if err := c.ws.ReadJSON(&msg); err != nil {
			c.t.Fatalf("waiting for %s: %v", method, err)
		}
		if msg["method"] == method {
			return
		}
	}
}

// Eval evaluates a JavaScript expression on the page and returns its
// value.
func (c *CDP) Eval(expr string) any {
	c.t.Helper()
	r := c.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	res, _ := r["result"].(map[string]any)
	return res["value"]
}

// LaunchChromium starts a headless Chromium with a fresh profile and
// returns a DevTools client on its page; both end with the test.
func LaunchChromium(t *testing.T, bin string) *CDP {
	t.Helper()
	profile := t.TempDir()
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	var port string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil {
			if line, _, _ := strings.Cut(string(b), "\n"); line != "" {
				port = line
				break
			}
		}
	}
	if port == "" {
		t.Fatalf("chromium did not open its DevTools port; stderr:\n%s", stderr.String())
	}
	resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	var targets []struct{ Type, WebSocketDebuggerURL string }
	json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	wsURL := ""
	for _, tg := range targets {
		if tg.Type == "page" {
			wsURL = tg.WebSocketDebuggerURL
		}
	}
	if wsURL == "" {
		t.Fatalf("no page target in %+v", targets)
	}
	ws, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	c := &CDP{t: t, ws: ws}

	return c
}

// ArtifactDir is the folder where browser tests keep their screenshots:
// name under $CAIRN_TEST_OUTPUT, or under test-output/ at the top of the
// checkout (the folder holding go.mod above the test's own).
func ArtifactDir(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("CAIRN_TEST_OUTPUT")
	if dir == "" {
		top, err := filepath.Abs(".")
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(top, "go.mod")); err == nil {
				break
			}
			up := filepath.Dir(top)
			if up == top {
				t.Fatal("no go.mod above the test's folder")
			}
			top = up
		}
		dir = filepath.Join(top, "test-output")
	}
	dir = filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
