package status_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/modules/modapi"
	"cairn/modules/status"
	"cairn/node/config"
)

// onePeer is a node view that reports one connected peer.
type onePeer struct{ modapi.NodeView }

func (onePeer) Peers() int { return 1 }

// Ensure the status page redirects after a POST (303), says "1 peer",
// and shows the repo figure StorageMax counts.
func TestStatus_Upload_RedirectAfterPost(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	h, err := modules.Start(context.Background(), onePeer{modules.ViewOf(n)}, cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	u := h.Listeners()[0].URL()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	body, ct := form(t, "hello.txt", []byte("hello world\n"))
	req, _ := http.NewRequest("POST", u+"/status/", body)
	req.Header.Set("Content-Type", ct)
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 303 || loc != "/status/?added=QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o&name=hello.txt" {
		t.Fatalf("upload: %d Location %q, want 303 to the result page", resp.StatusCode, loc)
	}
	page := func(path string) string {
		resp, err := http.Get(u + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	got := page(loc)
	if !strings.Contains(got, `id="cid">QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o<`) || !strings.Contains(got, "hello.txt (12 B)") {
		t.Errorf("result page after the redirect: %.400q", got)
	}
	if !strings.Contains(got, `<span id="peers-word">peer</span>`) || !strings.Contains(got, `1</b>pin</div>`) {
		t.Errorf("singular words: %s", regexp.MustCompile(`(?s)<div class="stats">.*?</section>`).FindString(got))
	}
	// A CID the node does not hold shows no result.
	if got := page("/status/?added=QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn&name=x"); strings.Contains(got, `id="cid"`) {
		t.Error("a CID the node does not hold was shown as added")
	}
	used, _ := n.Storage().Usage()
	want := `<p id="repo-use">` + status.Short(float64(used)) + " used"
	if got := page("/status/"); !strings.Contains(got, want) || strings.Contains(got, "blocks hold") {
		t.Errorf("repo use: want %q (node.Usage, what StorageMax counts), page: %s", want, regexp.MustCompile(`<p id="repo-use">[^<]*`).FindString(got))
	}
}

// The chart's labels stay inside the SVG's box: the y labels are drawn
// left-aligned inside the plot, the x labels anchored to the edges.
func TestStatus_Chart_LabelsInside(t *testing.T) {
	now := time.Now()
	svg := string(status.Chart([]modapi.BandwidthSample{{Time: now.Add(-time.Minute), BytesIn: 60 * 50000, BytesOut: 60 * 1000}}, now))
	if !strings.Contains(svg, "48.8 KiB/s") {
		t.Errorf("peak label missing: %s", svg)
	}
	for _, m := range regexp.MustCompile(`<text x="([0-9.]+)"[^>]*text-anchor="(\w+)"`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		if m[2] == "end" && x > 600 || m[2] == "start" && x < 0 || m[2] == "middle" && (x < 30 || x > 570) {
			t.Errorf("label at x=%s anchored %s may leave the box", m[1], m[2])
		}
	}
	if strings.Contains(svg, `width="600"`) {
		t.Error("the chart has a fixed pixel width; it must scale to a phone's screen")
	}
}

// Ensure the page shows the flash wear and memory figures of the node's
// metrics (node.Vitals): bytes written since start and over the store's
// life, and the memory budget with its headroom; without a budget it
// says there is none.
func TestStatus_Page_WearAndMemoryBudget(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	page := func() string {
		resp, err := http.Get(h.Listeners()[0].URL() + "/status/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := regexp.MustCompile(`<p id="memory">[^<]*`).FindString(page()); !strings.Contains(got, "no memory budget (Budget.MemoryMiB)") {
		t.Errorf("without a budget: %q", got)
	}

	if _, err := modules.ViewOf(n).Add(context.Background(), "wear.bin", bytes.NewReader(bytes.Repeat([]byte("flash"), 200_000))); err != nil {
		t.Fatal(err)
	}
	if err := n.ConfigFile().Update(func(doc map[string]any) error { return config.SetKeyExact(doc, "Budget.MemoryMiB", 256) }); err != nil {
		t.Fatal(err)
	}
	got := page()
	v := n.Vitals()
	if v.Written < 1_000_000 || v.WrittenTotal < v.Written {
		t.Fatalf("vitals after adding 1 MB: written %d, lifetime %d", v.Written, v.WrittenTotal)
	}
	for _, want := range []string{
		`<b id="written">` + status.Short(float64(v.Written)) + `</b>written to the store since start`,
		`<b id="written-life">` + status.Short(float64(v.WrittenTotal)) + `</b>written over the store's life`,
		` used of the 256.0 MiB memory budget, `,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q: %s", want, regexp.MustCompile(`(?s)<section id="vitals">.*?</section>`).FindString(got))
		}
	}
	// Used and headroom add up to the budget (both read in one go).
	m := regexp.MustCompile(`<p id="memory">([0-9.]+) (B|KiB|MiB) used of the 256.0 MiB memory budget, ([0-9.]+) (B|KiB|MiB) headroom</p>`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("memory line: %s", regexp.MustCompile(`<p id="memory">[^<]*`).FindString(got))
	}
	mib := func(v, unit string) float64 {
		f, _ := strconv.ParseFloat(v, 64)
		return f * map[string]float64{"B": 1.0 / (1 << 20), "KiB": 1.0 / 1024, "MiB": 1}[unit]
	}
	if sum := mib(m[1], m[2]) + mib(m[3], m[4]); sum < 255.8 || sum > 256.2 {
		t.Errorf("used %s %s + headroom %s %s = %.1f MiB, want the 256 MiB budget", m[1], m[2], m[3], m[4], sum)
	}
}

// Ensure the page links to the HTTP gateway on the host it was opened
// with, and says nothing of one when none listens.
func TestStatus_Page_GatewayLink(t *testing.T) {
	for _, port := range []string{"8080", ""} {
		n := testutil.MustOpenNode(t)
		cfg := config.DefaultModules()
		cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
		h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler), GatewayPort: port})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(h.Listeners()[0].URL() + "/status/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.Close()
		link := `<p id="gateway">HTTP gateway: <a href="http://127.0.0.1:8080/ipfs/">http://127.0.0.1:8080/ipfs/</a></p>`
		if got := strings.Contains(string(b), link); got != (port != "") {
			t.Errorf("port %q: link shown %v:\n%s", port, got, b)
		}
		if port == "" && strings.Contains(string(b), `id="gateway"`) {
			t.Errorf("no gateway, yet a link")
		}
	}
}
