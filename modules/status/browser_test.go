package status_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/modules/modapi"
	"cairn/node"
	"cairn/node/config"

	bfiles "github.com/ipfs/boxo/files"
)

func TestStatus_Browser_UploadShowsCID(t *testing.T) { browserUpload(t, false) }

// Ensure a browser user can still upload when Modules.Authorizations
// protects the apps: the login given in the URL answers the Basic
// challenge, and the browser sends it again with the form.
func TestStatus_Browser_UploadWithLogin(t *testing.T) { browserUpload(t, true) }

func browserUpload(t *testing.T, login bool) {
	bin := testutil.FindChromium()
	if bin == "" {
		t.Skip("chromium not found (install it with scripts/install-test-deps.sh, or set CAIRN_CHROMIUM)")
	}
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_status", "http_ipfs"}
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	pageURL, getAuth := "", ""
	if login {
		cfg.Authorizations = map[string]*config.RPCAuthScope{"me": {AuthSecret: "basic:me:pw", AllowedPaths: []string{"/"}}}
		getAuth = "Basic bWU6cHc="
	}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Version: "test", Log: slog.New(slog.DiscardHandler), Gateway: testutil.Gateway(t, n)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	base := h.Listeners()[0].URL()
	pageURL = base + "/status/"
	if login {
		pageURL = strings.Replace(pageURL, "http://", "http://me:pw@", 1)
	}

	content := []byte("hello from a headless browser\n")
	upload := filepath.Join(t.TempDir(), "greeting.txt")
	if err := os.WriteFile(upload, content, 0o644); err != nil {
		t.Fatal(err)
	}
	want := onlyHash(t, n, content)

	c := testutil.LaunchChromium(t, bin)
	c.Call("Page.enable", nil)
	c.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 820, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	start := time.Now()
	c.Call("Page.navigate", map[string]any{"url": pageURL})
	c.WaitEvent("Page.loadEventFired")
	t.Logf("status page loaded in %v", time.Since(start).Round(time.Millisecond))
	if title := c.Eval("document.title"); title != "cairn status" {
		t.Fatalf("title: %v", title)
	}
	if peers := c.Eval("document.getElementById('peers').textContent"); peers != "0" {
		t.Errorf("peers: %v", peers)
	}
	if svg := c.Eval("document.querySelectorAll('svg.chart polyline').length"); svg != float64(2) {
		t.Errorf("chart lines: %v", svg)
	}

	doc := c.Call("DOM.getDocument", nil)
	root := doc["root"].(map[string]any)["nodeId"]
	input := c.Call("DOM.querySelector", map[string]any{"nodeId": root, "selector": "#file"})
	c.Call("DOM.setFileInputFiles", map[string]any{"nodeId": input["nodeId"], "files": []string{upload}})
	start = time.Now()
	c.Eval("document.getElementById('add').click()")
	c.WaitEvent("Page.loadEventFired")
	t.Logf("upload answered in %v", time.Since(start).Round(time.Millisecond))

	if loc := c.Eval("location.pathname + location.search"); !strings.HasPrefix(fmt.Sprint(loc), "/status/?added="+want) {
		t.Errorf("after the upload the browser is at %v, want the result page of the redirect after POST", loc)
	}
	got := c.Eval("(document.getElementById('cid') || {}).textContent")
	if got != want {
		t.Fatalf("CID on the page: %v, want %s (page: %v)", got, want, c.Eval("document.body.innerText"))
	}
	if pins := c.Eval("document.getElementById('pins').textContent"); pins != "1" {
		t.Errorf("pins after the upload: %v", pins)
	}
	shot := c.Call("Page.captureScreenshot", map[string]any{"format": "png"})
	png, err := base64.StdEncoding.DecodeString(shot["data"].(string))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) < 10000 {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
	out := filepath.Join(t.TempDir(), "status-upload.png")
	if p := os.Getenv("CAIRN_SCREENSHOT"); p != "" {
		out = p
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot with CID %s: %s (%d bytes)", want, out, len(png))

	// The file is in the node: the gateway app serves it back.
	greq, _ := http.NewRequest("GET", base+"/ipfs/"+want, nil)
	if getAuth != "" {
		greq.Header.Set("Authorization", getAuth)
	}
	r, err := http.DefaultClient.Do(greq)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || body.String() != string(content) {
		t.Errorf("gateway: %d %q", r.StatusCode, body.String())
	}
}

// busyView reports a networked node with three peers and a busy hour,
// so that the chart has long labels.
type busyView struct{ modapi.NodeView }

func (busyView) Peers() int       { return 3 }
func (busyView) Networking() bool { return true }
func (busyView) Bandwidth() []modapi.BandwidthSample {
	now := time.Now()
	var out []modapi.BandwidthSample
	for i := 0; i < 60; i++ {
		out = append(out, modapi.BandwidthSample{Time: now.Add(-time.Duration(i) * time.Minute),
			BytesIn: int64(60 * 50000 * (1 + i%5) / 5), BytesOut: int64(60 * 9000 * (1 + i%3) / 3)})
	}
	return out
}

// Ensure the page works on a phone (390x844: nothing wider than the
// screen) and on a desktop (1280x900), with every chart label inside the
// chart's box; screenshots of both are kept in artifactDir.
func TestStatus_Browser_PhoneLayoutAndChart(t *testing.T) {
	bin := testutil.FindChromium()
	if bin == "" {
		t.Skip("chromium not found (install it with scripts/install-test-deps.sh, or set CAIRN_CHROMIUM)")
	}
	n := testutil.MustOpenNode(t)
	// A memory budget and some stored data, so that the wear and memory
	// figures are not zero.
	if err := n.ConfigFile().Update(func(doc map[string]any) error { return config.SetKeyExact(doc, "Budget.MemoryMiB", 512) }); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 4<<20) // random: no two chunks alike, 4 MiB written
	rand.NewChaCha8([32]byte{1}).Read(data)
	if _, err := modules.ViewOf(n).Add(context.Background(), "photo.jpg", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultModules()
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	h, err := modules.Start(context.Background(), busyView{modules.ViewOf(n)}, cfg, modules.Options{Repo: n.Repo, Version: "test", Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	c := testutil.LaunchChromium(t, bin)
	c.Call("Page.enable", nil)
	dir := testutil.ArtifactDir(t, "status")
	// Each label's box against the chart's box, in CSS pixels.
	const labelsOutside = `(() => {
		const box = document.querySelector('svg.chart').getBoundingClientRect();
		return [...document.querySelectorAll('svg.chart text')].filter(e => {
			const r = e.getBoundingClientRect();
			return r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5;
		}).map(e => e.textContent);
	})()`
	for _, vp := range []struct {
		w, h   int
		mobile bool
	}{{390, 844, true}, {1280, 900, false}} {
		c.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": vp.w, "height": vp.h, "deviceScaleFactor": 1, "mobile": vp.mobile})
		c.Call("Page.navigate", map[string]any{"url": h.Listeners()[0].URL() + "/status/"})
		c.WaitEvent("Page.loadEventFired")
		if out := c.Eval(labelsOutside); fmt.Sprint(out) != "[]" {
			t.Errorf("%dx%d: chart labels cut at the box: %v", vp.w, vp.h, out)
		}
		if labels := fmt.Sprint(c.Eval(`[...document.querySelectorAll('svg.chart text')].map(e => e.textContent).join('|')`)); !strings.Contains(labels, "48.8 KiB/s") {
			t.Errorf("%dx%d: peak label missing: %s", vp.w, vp.h, labels)
		}
		if wide := c.Eval(`document.documentElement.scrollWidth`); wide.(float64) > float64(vp.w) {
			t.Errorf("%dx%d: the page is %v px wide: it overflows the screen", vp.w, vp.h, wide)
		}
		if over := c.Eval(`[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5).map(e => e.tagName + '#' + e.id).slice(0, 5)`); fmt.Sprint(over) != "[]" {
			t.Errorf("%dx%d: elements past the right edge: %v", vp.w, vp.h, over)
		}
		if peers := c.Eval(`document.getElementById('peers-word').textContent`); peers != "peers" {
			t.Errorf("3 peers worded %v", peers)
		}
		if mem := fmt.Sprint(c.Eval(`document.getElementById('memory').textContent`)); !strings.Contains(mem, "of the 512.0 MiB memory budget") {
			t.Errorf("%dx%d: memory line %q", vp.w, vp.h, mem)
		}
		if w := fmt.Sprint(c.Eval(`document.getElementById('written').textContent`)); !strings.HasPrefix(w, "4.") || !strings.HasSuffix(w, " MiB") {
			t.Errorf("%dx%d: written since start %q after adding 4 MiB", vp.w, vp.h, w)
		}
		shot := c.Call("Page.captureScreenshot", map[string]any{"format": "png"})
		png, err := base64.StdEncoding.DecodeString(shot["data"].(string))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("screenshot: %v", err)
		}
		out := filepath.Join(dir, fmt.Sprintf("status-%dx%d.png", vp.w, vp.h))
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %dx%d: %s", vp.w, vp.h, out)
	}
}

// onlyHash computes the CID the upload must get.
func onlyHash(t *testing.T, n *node.Node, b []byte) string {
	t.Helper()
	a, err := n.UnixFS().NewAdder(context.Background(), node.AddOptions{OnlyHash: true}, func(node.AddEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	roots, err := a.AddAll(bfiles.NewMapDirectory(map[string]bfiles.Node{"f": bfiles.NewBytesFile(b)}))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(roots[0])
}

// The error pages a person meets: the built-in 404, one customised
// through the http-error event, and the root page, on a phone (laid out
// at the screen's width, nothing wider) with screenshots kept in
// artifactDir.
func TestStatus_Browser_ErrorPages(t *testing.T) {
	bin := testutil.FindChromium()
	if bin == "" {
		t.Skip("chromium not found (install it with scripts/install-test-deps.sh, or set CAIRN_CHROMIUM)")
	}
	dir := t.TempDir()
	wiki := `module:depends("http")
local server = require "net.http.server"
module:hook_object_event(server, "http-error", function(event)
	if event.code == 404 and event.request and event.request.path:match("^/wiki/") then
		event.response.headers.content_type = "text/html; charset=utf-8"
		return [[<!DOCTYPE html><html><head><meta charset=utf-8><meta name=viewport content="width=device-width, initial-scale=1">]]
			.. [[<title>Not in the wiki</title></head><body><h1>Not in the wiki</h1><p>No page at ]]
			.. event.request.path:gsub("[^%w/_.-]", "") .. [[. <a href="/wiki/">Index</a></p></body></html>]]
	end
end, 10)
module:provides("http", { route = { ["GET /"] = function() return "wiki index" end } })
`
	if err := os.WriteFile(filepath.Join(dir, "mod_http_wiki.lua"), []byte(wiki), 0o644); err != nil {
		t.Fatal(err)
	}
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_status", "http_wiki"}
	cfg.Dir = dir
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Version: "test", Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	c := testutil.LaunchChromium(t, bin)
	c.Call("Page.enable", nil)
	c.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": true})
	out := testutil.ArtifactDir(t, "status")
	for _, p := range []struct{ path, file, h1 string }{
		{"/nothing/here", "error-404-390x844.png", "404 Not Found"},
		{"/wiki/missing", "error-custom-390x844.png", "Not in the wiki"},
		{"/", "root-390x844.png", "cairn is running!"},
	} {
		c.Call("Page.navigate", map[string]any{"url": h.Listeners()[0].URL() + p.path})
		c.WaitEvent("Page.loadEventFired")
		if got := c.Eval(`document.querySelector('h1').textContent`); got != p.h1 {
			t.Errorf("%s: h1 %q, want %q", p.path, got, p.h1)
		}
		if w := c.Eval(`window.innerWidth`); w.(float64) != 390 {
			t.Errorf("%s: laid out %v px wide on a 390 px phone (no viewport meta?)", p.path, w)
		}
		if wide := c.Eval(`document.documentElement.scrollWidth`); wide.(float64) > 390 {
			t.Errorf("%s: the page is %v px wide: it overflows the screen", p.path, wide)
		}
		shot := c.Call("Page.captureScreenshot", map[string]any{"format": "png"})
		png, err := base64.StdEncoding.DecodeString(shot["data"].(string))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(filepath.Join(out, p.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
