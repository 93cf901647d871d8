// table.go: figures measured several times for cairn and Kubo, printed as
// medians with their range and the cairn/Kubo ratio against a goal.

package benchutil

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"cairn/internal/daemon"
)

// Figure is one line of a comparison table.
type Figure struct {
	Name  string
	Unit  string  // "MiB/s", "MiB", "req/s", "MB"
	Goal  float64 // goal for cairn/Kubo: at least it when Higher, at most it otherwise; 0: none
	Abs   float64 // goal for cairn's median itself, in Unit, read as Goal is; 0: none
	Keep  bool    // the goal is to keep a lead, not reach one
	Lower bool    // lower is better (memory, size)
	Cairn []float64
	Kubo  []float64
	Note  string
}

// Verdict says f's goal ("<= 500 ms, <= 2.00x") and whether the medians
// meet all of it. checked is false when f has no goal or lacks a median
// the goal needs (a ratio goal without Kubo's figure): goal then names
// what could be checked, and ok means nothing.
func (f *Figure) Verdict() (goal string, ok, checked bool) {
	op := ">="
	if f.Lower {
		op = "<="
	}
	meets := func(v, bound float64) bool {
		if f.Lower {
			return v <= bound
		}
		return v >= bound
	}
	var parts []string
	ok = true
	if f.Abs > 0 {
		parts = append(parts, fmt.Sprintf("%s %s %s", op, trim(f.Abs), f.Unit))
		if len(f.Cairn) > 0 {
			ok = ok && meets(Median(f.Cairn), f.Abs)
			checked = true
		}
	}
	if f.Goal > 0 {
		parts = append(parts, fmt.Sprintf("%s %.2fx", op, f.Goal))
		if r, has := f.Ratio(); has {
			ok = ok && meets(r, f.Goal)
			checked = true
		} else {
			checked = false
		}
	}
	return strings.Join(parts, ", "), ok, checked
}

// Ratio is cairn's median over Kubo's, when both are there.
func (f *Figure) Ratio() (float64, bool) {
	if len(f.Cairn) == 0 || len(f.Kubo) == 0 || Median(f.Kubo) == 0 {
		return 0, false
	}
	return Median(f.Cairn) / Median(f.Kubo), true
}

// trim formats v without trailing zeros (500, 1.2, 0.5).
func trim(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Median of vs (0 when empty).
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func cell(vs []float64, unit string) string {
	if len(vs) == 0 {
		return "-"
	}
	f := "%.0f"
	switch m := Median(vs); {
	case m < 10:
		f = "%.2f"
	case m < 100:
		f = "%.1f"
	}
	s := fmt.Sprintf(f+" %s", Median(vs), unit)
	if len(vs) > 1 {
		s += fmt.Sprintf(" ["+f+"-"+f+"]", slices.Min(vs), slices.Max(vs))
	}
	return s
}

// PrintTable writes the figures: cairn and Kubo (daemon.KuboVersion)
// medians with their ranges, the ratio of the medians and whether it
// meets the goal.
func PrintTable(w io.Writer, title string, figs []*Figure) {
	Table{Title: title, Kubo: "Kubo " + strings.TrimPrefix(daemon.KuboVersion, "v"), Met: "met", Missed: "NOT met"}.Print(w, figs)
}

// Table is how a comparison table is printed.
type Table struct {
	Title       string
	Kubo        string // heading of Kubo's column, "Kubo 0.43.1"
	Met, Missed string // the words of the verdict
}

// Print writes the figures: cairn and Kubo medians with their ranges, the
// ratio of the medians, the goal and whether the medians meet it (a goal
// that could not be checked, for want of Kubo's figure, says so).
func (t Table) Print(w io.Writer, figs []*Figure) {
	fmt.Fprintf(w, "\n%s\n", t.Title)
	fmt.Fprintf(w, "%-46s %-30s %-30s %-7s %s\n", "figure", "cairn median [min-max]", t.Kubo+" median [min-max]", "ratio", "goal")
	for _, f := range figs {
		ratio, verdict := "-", ""
		if r, ok := f.Ratio(); ok {
			ratio = fmt.Sprintf("%.2fx", r)
			if r > 0 && r < 0.01 {
				ratio = fmt.Sprintf("%.2gx", r)
			}
		}
		if goal, ok, checked := f.Verdict(); goal != "" {
			verdict = goal + " "
			switch {
			case !checked:
				verdict += "(not checked)"
			case ok:
				verdict += t.Met
			default:
				verdict += t.Missed
			}
		}
		fmt.Fprintf(w, "%-46s %-30s %-30s %-7s %s", f.Name, cell(f.Cairn, f.Unit), cell(f.Kubo, f.Unit), ratio, verdict)
		if f.Note != "" {
			fmt.Fprintf(w, "  (%s)", f.Note)
		}
		fmt.Fprintln(w)
	}
}

// MiBs is size bytes over d in MiB/s.
func MiBs(size int64, d time.Duration) float64 { return float64(size) / (1 << 20) / d.Seconds() }

// Stream posts an RPC path and copies the answer to w; it fails on a
// non-200 status or a trailer error.
func Stream(url, path string, w io.Writer) (int64, error) {
	resp, err := http.Post(url+path, "", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, err
	}
	if resp.StatusCode != 200 {
		return n, fmt.Errorf("%s: status %d", path, resp.StatusCode)
	}
	if e := resp.Trailer.Get("X-Stream-Error"); e != "" {
		return n, fmt.Errorf("%s: %s", path, e)
	}
	return n, nil
}

// SyncWriteSpeed writes size bytes to a file in dir and fdatasyncs it, as
// `dd bs=1M conv=fdatasync` does, and returns MiB/s: what the disk can
// take durably in this run.
func SyncWriteSpeed(dir string, size int64) (float64, error) {
	p := filepath.Join(dir, "fdatasync.bin")
	defer os.Remove(p)
	f, err := os.Create(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	t0 := time.Now()
	for n := int64(0); n < size; n += int64(len(buf)) {
		if _, err := f.Write(buf); err != nil {
			return 0, err
		}
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return MiBs(size, time.Since(t0)), nil
}

var reqSec = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

// Wrk runs wrk against POST url+path with conns connections for d and
// returns requests per second.
func Wrk(url, path string, conns int, d time.Duration, dir string) (float64, error) {
	script := filepath.Join(dir, "post.lua")
	if err := os.WriteFile(script, []byte("wrk.method = \"POST\"\n"), 0o644); err != nil {
		return 0, err
	}
	out, err := exec.Command("wrk", "-t2", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(int(d.Seconds()))+"s",
		"-s", script, url+path).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("wrk (apt-get install wrk): %v %s", err, out)
	}
	m := reqSec.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("wrk: no Requests/sec in %s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}
