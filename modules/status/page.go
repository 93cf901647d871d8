// page.go: the HTML of the status page and its SVG chart.

package status

import (
	"fmt"
	"html"
	"net"
	"strconv"
	"strings"
	"time"

	"cairn/modules/httpapp"
	"cairn/modules/modapi"
)

type pageData struct {
	ID         string
	Peers      int
	Networking bool
	Repo       modapi.RepoStat
	RepoErr    string
	UsedPct    float64
	Memory     modapi.MemoryStat
	MemPct     float64
	Chart      string // HTML
	Added      *added
	IPFSBase   string            // base path of the http_ipfs app, "" if not mounted
	Gateway    string            // the HTTP gateway's /ipfs/ URL on the page's host, "" if none
	Apps       []httpapp.AppInfo // the other modules' apps, linked
	Base       string
	Version    string
	Now        string
}

func (m *Module) render(ev *httpapp.Event, res *added) any {
	d := pageData{ID: m.ctx.Node.ID(), Peers: m.ctx.Node.Peers(), Networking: m.ctx.Node.Networking(),
		Added: res, Base: ev.Base, Version: m.ctx.Settings.Version, Now: time.Now().UTC().Format("2006-01-02 15:04:05 UTC")}
	rs, err := m.ctx.Node.Repo(ev.Ctx)
	if err != nil {
		d.RepoErr = err.Error()
	}
	d.Repo = rs
	if rs.StorageMax > 0 {
		d.UsedPct = min(100, float64(rs.UsedBytes)*100/float64(rs.StorageMax))
	}
	d.Memory = m.ctx.Node.Memory()
	if d.Memory.Budget > 0 {
		d.MemPct = min(100, float64(d.Memory.Used)*100/float64(d.Memory.Budget))
	}
	d.Chart = chart(m.ctx.Node.Bandwidth(), time.Now())
	if port := m.ctx.Settings.GatewayPort; port != "" {
		d.Gateway = "http://" + net.JoinHostPort(hostOnly(ev.Request.Headers["host"]), port) + "/ipfs/"
	}
	if m.ctx.AppsFunc != nil {
		for _, a := range m.ctx.AppsFunc() {
			if a.Module == "http_ipfs" {
				d.IPFSBase = a.Base
			}
			if a.Module != m.ctx.Name {
				d.Apps = append(d.Apps, a)
			}
		}
	}
	return d.html()
}

// html renders the page. It is written out by hand rather than with
// html/template, whose reflection-driven execution keeps every exported
// method of every type in the binary (about 0.4 MB of the arm64 build);
// text goes through esc, URLs in attributes through escURL, which escape
// as html/template did (the goldens in testdata check it byte for byte).
func (d pageData) html() string {
	var b strings.Builder
	w := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	w(pageHead, `<header><h1>cairn node</h1><code id="peer-id">`, esc(d.ID), "</code></header>\n<main>\n")
	if a := d.Added; a != nil {
		if a.Err != "" {
			w(`<section class="failed" id="upload-error"><h2>Upload failed</h2><p>`, esc(a.Err), "</p></section>\n")
		} else {
			w(`<section class="added" id="upload-result"><h2>Added</h2><p>`, esc(a.Name), " (", esc(short(float64(a.Size))), ")</p>\n",
				`<p>CID: <span class="cid" id="cid">`, esc(a.Cid), "</span></p>\n")
			if d.IPFSBase != "" {
				w(`<p><a href="`, escURL(d.IPFSBase, true), "/", escURL(a.Cid, false), `">open it</a></p>`)
			}
			w("</section>\n")
		}
	}
	n := strconv.Itoa
	w("\n", `<section><h2>Node</h2><div class="stats">`, "\n",
		`<div class="stat"><b id="peers">`, n(d.Peers), `</b><span id="peers-word">`, word(int64(d.Peers), "peer", "peers"), "</span></div>\n",
		`<div class="stat"><b id="pins">`, n(d.Repo.Pins), "</b>", word(int64(d.Repo.Pins), "pin", "pins"), "</div>\n",
		`<div class="stat"><b>`, strconv.FormatInt(d.Repo.NumBlocks, 10), "</b>", word(d.Repo.NumBlocks, "block", "blocks"), "</div>\n</div>")
	if d.Gateway != "" {
		w(`<p id="gateway">HTTP gateway: <a href="`, escURL(d.Gateway, true), `">`, esc(d.Gateway), "</a></p>\n")
	}
	if !d.Networking {
		w(`<p class="note">This node is offline (daemon --offline, or running without a daemon): peers and bandwidth stay at 0.</p>`)
	}
	w("</section>\n")
	if len(d.Apps) > 0 {
		w(`<section id="apps"><h2>Apps</h2><ul>`, "\n")
		for _, a := range d.Apps {
			w("<li>")
			if a.Home != "" {
				w(`<a href="`, escURL(a.Home, true), `">`, esc(a.Name), "</a>")
			} else {
				w(esc(a.Name))
			}
			w(" <code>", esc(a.Base), "</code> (", esc(a.Module), ")</li>\n")
		}
		w("</ul></section>\n")
	}
	w("<section><h2>Repo</h2>")
	if d.RepoErr != "" {
		w("<p>", esc(d.RepoErr), "</p>")
	}
	if d.Repo.Fault != "" {
		w("\n", `<p class="failed" id="store-fault">Writes fail: `, esc(d.Repo.Fault), ". Reads go on.</p>")
	}
	w("\n", `<p id="repo-use">`, esc(short(float64(d.Repo.UsedBytes))), " used")
	pct := fmt.Sprintf("%.1f", d.UsedPct)
	if d.Repo.StorageMax != 0 {
		w(" of ", esc(short(float64(d.Repo.StorageMax))), " (StorageMax), ", pct, "%")
	}
	w("</p>\n")
	if d.Repo.StorageMax != 0 {
		w(`<div class="bar"><div style="width:`, pct, `%"></div></div>`)
	}
	sz := func(n int64) string { return esc(short(float64(n))) }
	w("</section>\n", `<section id="vitals"><h2>Flash wear and memory</h2><div class="stats">`, "\n",
		`<div class="stat"><b id="written">`, sz(d.Repo.WrittenBytes), "</b>written to the store since start</div>\n",
		`<div class="stat"><b id="written-life">`, sz(d.Repo.LifetimeWrittenBytes), "</b>written over the store's life</div>\n</div>\n")
	if m := d.Memory; m.Budget != 0 {
		w(`<p id="memory">`, sz(m.Used), " used of the ", sz(m.Budget), " memory budget, ")
		if m.Headroom >= 0 {
			w(sz(m.Headroom), " headroom")
		} else {
			w(sz(-m.Headroom), " over it")
		}
		w("</p>\n", `<div class="bar"><div style="width:`, fmt.Sprintf("%.1f", d.MemPct), `%"></div></div>`, "\n")
	} else {
		w(`<p id="memory">`, sz(m.Used), " held by the Go runtime; no memory budget (Budget.MemoryMiB)</p>")
	}
	w("\n", `<p class="note">The figures of <code>/debug/metrics/prometheus</code> on the RPC port (<code>cairn_store_*written_bytes_total</code>, <code>cairn_memory_*</code>).</p>`)
	w("</section>\n<section><h2>Bandwidth, last hour</h2>", d.Chart, "\n",
		`<p class="legend"><span style="background:#2a7ae2"></span>in<span style="background:#e2892a"></span>out</p></section>`, "\n",
		"<section><h2>Add a file</h2>\n",
		`<form id="upload" method="post" action="`, escURL(d.Base, true), `/" enctype="multipart/form-data">`, "\n",
		`<input type="file" name="file" id="file" required> <button type="submit" id="add">Add</button></form>`, "\n",
		`<p class="note">The file is added and pinned, like <code>cairn add</code>.</p></section>`, "\n",
		"</main><footer>cairn ", esc(d.Version), " · ", esc(d.Now), "</footer>\n</body></html>\n")
	return b.String()
}

func word(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// esc escapes text and quoted attribute values.
func esc(s string) string { return html.EscapeString(s) }

// escURL escapes a URL in a quoted attribute as html/template does:
// bytes outside RFC 3986's unreserved and reserved sets (but ' ( ) and
// bytes >= 0x80) are %-encoded, then the result is HTML-escaped. At the
// start of a URL (start), a scheme other than http, https or mailto is
// replaced by html/template's "#ZgotmplZ".
func escURL(s string, start bool) string {
	if start {
		if i := strings.IndexByte(s, ':'); i >= 0 && !strings.Contains(s[:i], "/") {
			switch strings.ToLower(s[:i]) {
			case "http", "https", "mailto":
			default:
				return "#ZgotmplZ"
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("-._~!#$&*+,/:;=?@[]%", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return esc(b.String())
}

// chart draws bytes per second in and out over the last hour, one point
// per minute; minutes without a sample are zero. The SVG scales to its
// container's width (a phone's 390 px too); the y-axis labels sit inside
// the plot, above their grid lines, so no label can be cut at the edge.
func chart(samples []modapi.BandwidthSample, now time.Time) string {
	const w, h, left, top, bottom, font = 600, 180, 4, 6, 24, 14
	in, out := make([]float64, 60), make([]float64, 60)
	for _, s := range samples {
		age := int(now.Sub(s.Time) / time.Minute)
		if age < 0 || age >= 60 {
			continue
		}
		in[59-age] += float64(s.BytesIn) / 60
		out[59-age] += float64(s.BytesOut) / 60
	}
	peak := 1.0
	for i := range in {
		peak = max(peak, in[i], out[i])
	}
	plotH := float64(h - top - bottom)
	plotW := float64(w - left - 8)
	line := func(v []float64) string {
		pts := make([]string, len(v))
		for i, x := range v {
			px := float64(left) + plotW*float64(i)/59
			py := float64(top) + plotH*(1-x/peak)
			pts[i] = fmt.Sprintf("%.1f,%.1f", px, py)
		}
		return strings.Join(pts, " ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" preserveAspectRatio="xMidYMid meet" role="img" aria-label="bandwidth over the last hour">`, w, h)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#ccc"/>`, left, top, plotW, plotH)
	for i := 0; i <= 4; i++ {
		y := float64(top) + plotH*float64(i)/4
		fmt.Fprintf(&b, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, left, float64(left)+plotW, y, y)
		if i < 4 { // the 0 line needs no label
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="%d" text-anchor="start" fill="#555" stroke="#fff" stroke-width="3" paint-order="stroke">%s/s</text>`, left+4, y-3+(font+2)*boolf(i == 0), font, short(peak*float64(4-i)/4))
		}
	}
	for i, lbl := range []string{"-60 min", "-45", "-30", "-15", "now"} {
		x := float64(left) + plotW*float64(i)/4
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="%d" text-anchor="%s" fill="#777">%s</text>`, x, h-6, font, anchor, lbl)
	}
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#2a7ae2" stroke-width="2" points="%s"/>`, line(in))
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#e2892a" stroke-width="2" points="%s"/>`, line(out))
	b.WriteString(`</svg>`)
	return b.String()
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// short formats a byte count: 0 B, 1.5 KiB, 3.2 MiB.
func short(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.3g %s", n, units[i])
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// pageHead is the page up to its body's first element.
const pageHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>cairn status</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:1.3em}
header code{color:#9fc3ff;font-size:.85em;word-break:break-all}
main{max-width:720px;margin:0 auto;padding:16px;box-sizing:border-box}
svg.chart{display:block;width:100%;height:auto}
input[type=file]{max-width:100%}
section{background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002;padding:14px 18px;margin:14px 0}
h2{font-size:1em;margin:0 0 10px;color:#444;text-transform:uppercase;letter-spacing:.05em}
.stats{display:flex;gap:12px;flex-wrap:wrap}.stat{flex:1;min-width:120px}
.stat b{display:block;font-size:1.8em}.note{color:#777;font-size:.85em}
.bar{height:14px;background:#e4e7ec;border-radius:7px;overflow:hidden}.bar div{height:100%;background:#2a7ae2}
.added{border-left:5px solid #2bb673}.failed{border-left:5px solid #d64545}
.cid{font-family:monospace;font-size:1.05em;word-break:break-all;background:#eef6ff;padding:4px 6px;border-radius:4px}
.legend span{display:inline-block;width:12px;height:3px;margin:0 4px 3px 10px;vertical-align:middle}
button{font-size:1em;padding:6px 14px}
footer{color:#888;font-size:.8em;text-align:center;padding:10px}
</style></head><body>
`

// hostOnly is the host name of a Host header (without its port).
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}
