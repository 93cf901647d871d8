package tests

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cairn/internal/daemon"
	"cairn/internal/testutil"
)

// gatewayUnderTest starts a daemon, offline on a fresh test-profile repo,
// with its gateway (Addresses.Gateway) on a free 127.0.0.1 port, and
// returns it and the gateway's base URL. It is cairn, or the Kubo binary
// named by $CAIRN_BROWSER_KUBO (to check the test itself against Kubo's
// gateway).
func gatewayUnderTest(t *testing.T) (*daemon.Daemon, string) {
	t.Helper()
	port, err := daemon.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o := daemon.Options{Offline: true, Config: map[string]string{
		"Addresses.Gateway": fmt.Sprintf(`"/ip4/127.0.0.1/tcp/%d"`, port)}}
	repo := filepath.Join(t.TempDir(), "repo")
	var d *daemon.Daemon
	if kubo := os.Getenv("CAIRN_BROWSER_KUBO"); kubo != "" {
		d, err = daemon.StartKubo(kubo, repo, o)
	} else {
		d, err = daemon.StartCairn(cairnBin, repo, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	gw := fmt.Sprintf("http://127.0.0.1:%d", port)
	for t0 := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(gw + "/ipfs/bafkqaaa") // the empty identity CID
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Since(t0) > 5*time.Second {
			t.Fatalf("%s serves no gateway on Addresses.Gateway (%s): %v", d.Name, gw, err)
		}
	}
	return d, gw
}

// answer is what the recording proxy saw of one gateway answer.
type answer struct {
	path, reqRange string
	status         int
	contentRange   string
	first          int64 // of the Content-Range (ranged)
}

// recorder is a reverse proxy in front of the gateway that keeps, for
// every request, its Range header and the gateway's status and
// Content-Range; it hands videos out slowly (slowBody).
type recorder struct {
	mu      sync.Mutex
	answers []answer
}

func (r *recorder) start(t *testing.T, gw string) string {
	u, err := url.Parse(gw)
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1
	p.ModifyResponse = func(resp *http.Response) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.answers = append(r.answers, answer{path: resp.Request.URL.Path, reqRange: resp.Request.Header.Get("Range"),
			status: resp.StatusCode, contentRange: resp.Header.Get("Content-Range")})
		if strings.HasSuffix(resp.Request.URL.Path, ".webm") {
			resp.Body = &slowBody{ReadCloser: resp.Body}
		}
		return nil
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// slowBody hands out a video at about 32 KiB/s, as a phone on a weak
// Wi-Fi gets it, so that the browser has not read the middle of the file
// yet when it seeks there and asks the gateway for it with a Range.
type slowBody struct{ io.ReadCloser }

func (b *slowBody) Read(p []byte) (int, error) {
	const chunk = 4 << 10
	time.Sleep(time.Second / 8)
	return b.ReadCloser.Read(p[:min(len(p), chunk)])
}

// ranged are the answers to requests for path, each with the first byte
// of its Content-Range (206 answers only; -1 otherwise).
func (r *recorder) ranged(path string) (n int, all []answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.answers {
		if !strings.HasSuffix(a.path, path) {
			continue
		}
		a.first = -1
		if a.status == http.StatusPartialContent {
			if _, err := fmt.Sscanf(a.contentRange, "bytes %d-", &a.first); err == nil {
				n++
			}
		}
		all = append(all, a)
	}
	return n, all
}

const playerPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>cairn gateway video</title></head>
<body style="margin:0;overflow:hidden;background:#222">
<video id="v" src="seek.webm" preload="metadata" muted playsinline width="640" height="360"></video>
</body></html>
`

// playAndSeek plays the page's video for half a second, seeks to the
// middle of it, and plays on past that point; it resolves to what the
// video element then says, or rejects after 30 s.
const playAndSeek = `(async () => {
  const v = document.getElementById('v');
  const until = (cond) => new Promise(ok => {
    const f = () => { if (cond()) { v.removeEventListener('timeupdate', f); ok(); } };
    v.addEventListener('timeupdate', f); f();
  });
  const run = (async () => {
    if (v.readyState < 1) await new Promise((ok, ko) => {
      v.addEventListener('loadedmetadata', ok, {once: true});
      v.addEventListener('error', () => ko(new Error('video error ' + (v.error && v.error.code))), {once: true});
    });
    await v.play();
    await until(() => v.currentTime > 0.5);
    v.pause();
    const mid = v.duration / 2;
    const seeked = new Promise(ok => v.addEventListener('seeked', ok, {once: true}));
    v.currentTime = mid;
    await seeked;
    await v.play();
    await until(() => v.currentTime > mid + 0.5);
    v.pause();
    return {duration: v.duration, mid: mid, time: v.currentTime, width: v.videoWidth, height: v.videoHeight};
  })();
  const timeout = new Promise((_, ko) => setTimeout(() => ko(new Error('timed out at ' + v.currentTime + ' s, readyState ' + v.readyState)), 30000));
  return await Promise.race([run, timeout]);
})()`

// Ensure a browser plays a video from the gateway and seeks into its
// middle, the gateway answering the browser's Range requests with 206
// (one of them starting past the file's first byte), and shows the HTML
// listing of a directory; screenshots are kept in test-output/gateway.
func TestGateway_Browser_VideoSeekAndListing(t *testing.T) {
	bin := testutil.FindChromium()
	if bin == "" {
		t.Skip("chromium not found (install it with scripts/install-test-deps.sh, or set CAIRN_CHROMIUM)")
	}
	d, gw := gatewayUnderTest(t)
	site := filepath.Join(t.TempDir(), "site")
	video, err := os.ReadFile(filepath.Join("testdata", "gateway", "seek.webm"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"seek.webm": video, "player.html": []byte(playerPage),
		"notes.txt": []byte("an 8 s VP8 test pattern, 320x180\n")} {
		if err := os.MkdirAll(site, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(site, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := d.CLI("add", "-r", "-Q", site)
	if err != nil {
		t.Fatal(err)
	}
	root := strings.TrimSpace(out)
	var rec recorder
	base := rec.start(t, gw) + "/ipfs/" + root + "/"
	shots := testutil.ArtifactDir(t, "gateway")

	c := testutil.LaunchChromium(t, bin)
	c.Call("Page.enable", nil)
	c.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 640, "height": 360, "deviceScaleFactor": 1, "mobile": false})
	c.Call("Page.navigate", map[string]any{"url": base + "player.html"})
	c.WaitEvent("Page.loadEventFired")
	r := c.Call("Runtime.evaluate", map[string]any{"expression": playAndSeek, "awaitPromise": true, "returnByValue": true})
	if ex, ok := r["exceptionDetails"]; ok {
		_, all := rec.ranged("seek.webm")
		t.Fatalf("playing and seeking: %v; gateway answers: %+v", ex, all)
	}
	res, _ := r["result"].(map[string]any)
	v, _ := res["value"].(map[string]any)
	dur, _ := v["duration"].(float64)
	at, _ := v["time"].(float64)
	if dur < 7.5 || dur > 8.5 || at < dur/2+0.4 || v["width"] != float64(320) {
		t.Fatalf("video after the seek: %v (want an 8 s 320x180 video playing past its middle)", v)
	}
	keepScreenshot(t, c, filepath.Join(shots, "video-mid.png"))
	_, all := rec.ranged("seek.webm")
	t.Logf("%s gateway answers to the video: %+v", d.Name, all)
	mid := false
	for _, a := range all {
		mid = mid || (a.status == http.StatusPartialContent && a.first >= int64(len(video))/4 && a.first <= int64(len(video))*3/4)
	}
	if !mid {
		t.Fatalf("want a 206 answer to a Range request that starts in the middle half of the video; got %+v", all)
	}

	c.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 820, "height": 600, "deviceScaleFactor": 1, "mobile": false})
	c.Call("Page.navigate", map[string]any{"url": base})
	c.WaitEvent("Page.loadEventFired")
	text, _ := c.Eval("document.body.innerText").(string)
	for _, name := range []string{"seek.webm", "player.html", "notes.txt", root} {
		if !strings.Contains(text, name) {
			t.Errorf("directory listing lacks %q; it reads:\n%s", name, text)
		}
	}
	keepScreenshot(t, c, filepath.Join(shots, "listing.png"))
}

// keepScreenshot writes the page as a PNG to path.
func keepScreenshot(t *testing.T, c *testutil.CDP, path string) {
	t.Helper()
	shot := c.Call("Page.captureScreenshot", map[string]any{"format": "png"})
	png, err := base64.StdEncoding.DecodeString(fmt.Sprint(shot["data"]))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}
