// report.go: reading the suite's JSON report (go test2json events) into
// cases and checks, and comparing two nodes' outcomes.

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// outcome is how one test ended: pass, fail or skip.
type outcome string

const (
	passed  outcome = "pass"
	failed  outcome = "fail"
	skipped outcome = "skip"
)

// Report is one node's run of the suite. Its tests are named as go test
// names them (spaces as underscores, levels joined by '/'): level one is a
// Go test function of the suite, level two one case (a request and what
// its answer must be), and the levels below are that case's checks.
type Report struct {
	Tests map[string]outcome
	// Panics are the panics the suite's test binary printed ("TestX:
	// message"); each ends its run, so the tests after it did not run then.
	Panics []string
	// children counts the subtests seen under each test.
	children map[string]int
}

// ParseReport reads test2json events (the suite's --json file) and keeps
// each test's final outcome.
func ParseReport(r io.Reader) (*Report, error) {
	rep := &Report{Tests: map[string]outcome{}, children: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var ev struct{ Action, Test, Output string }
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("report line %.80q: %w", line, err)
		}
		if ev.Test == "" {
			continue
		}
		switch ev.Action {
		case "output":
			if msg, ok := strings.CutPrefix(ev.Output, "panic: "); ok {
				rep.Panics = append(rep.Panics, ev.Test+": "+strings.TrimSpace(msg))
			}
		case "run", "pass", "fail", "skip":
			if _, seen := rep.Tests[ev.Test]; !seen {
				rep.Tests[ev.Test] = ""
				if p := rep.parent(ev.Test); p != "" {
					rep.children[p]++
				}
			}
			if ev.Action != "run" {
				rep.Tests[ev.Test] = outcome(ev.Action)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rep.Tests) == 0 {
		return nil, fmt.Errorf("the report holds no test")
	}
	return rep, nil
}

// ParseReportFile reads a report file (see ParseReport).
func ParseReportFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := ParseReport(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// parent is the nearest test above name that the report holds ("" for a
// level-one test).
func (r *Report) parent(name string) string {
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '/' {
			if _, ok := r.Tests[name[:i]]; ok {
				return name[:i]
			}
		}
	}
	return ""
}

// depth is the number of levels of a test name. A '/' inside a case's own
// name (application/vnd.ipld.car) cannot be told apart from a level, so
// levels are counted from the parents actually seen.
func (r *Report) depth(name string) int {
	d := 1
	for i := range len(name) {
		if name[i] == '/' {
			if _, ok := r.Tests[name[:i]]; ok {
				d++
			}
		}
	}
	return d
}

// Cases are the level-two tests (one request each), sorted.
func (r *Report) Cases() []string {
	var out []string
	for name := range r.Tests {
		if r.depth(name) == 2 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Counts tallies cases and checks (the tests with no subtest below a
// case) by outcome. A test that never ended (the run was cut) counts as
// failed.
func (r *Report) Counts() (cases, checks map[outcome]int) {
	cases, checks = map[outcome]int{}, map[outcome]int{}
	for name, o := range r.Tests {
		if o == "" {
			o = failed
		}
		d := r.depth(name)
		if d == 2 {
			cases[o]++
		}
		if d >= 3 && r.children[name] == 0 {
			checks[o]++
		}
	}
	return cases, checks
}

// Regressions are the cases that pass on base (Kubo) but not on r (cairn),
// sorted; a case r lacks counts.
func (r *Report) Regressions(base *Report) []string {
	var out []string
	for _, c := range base.Cases() {
		if base.Tests[c] == passed && r.Tests[c] != passed && r.Tests[c] != skipped {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Missing are the cases base ran that r has no outcome for (r's run
// ended before them), sorted.
func (r *Report) Missing(base *Report) []string {
	var out []string
	for _, c := range base.Cases() {
		if _, ok := r.Tests[c]; !ok {
			out = append(out, c)
		}
	}
	return out
}

// MissingTop are the level-one tests base ran that r has no outcome for,
// sorted.
func (r *Report) MissingTop(base *Report) []string {
	var out []string
	for name := range base.Tests {
		if _, ok := r.Tests[name]; !ok && r.depth(name) == 1 && base.depth(name) == 1 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Difference is one line of the documented difference list.
type Difference struct {
	Case, Reason string
	used         bool
}

// Matches reports whether the entry covers the case name: the same name,
// or a test under it.
func (d *Difference) Matches(name string) bool {
	return name == d.Case || strings.HasPrefix(name, d.Case+"/")
}

// LoadDifferences reads the difference list: one "case | reason" a line,
// '#' comments and blank lines ignored; an entry without a reason is an
// error.
func LoadDifferences(path string) ([]*Difference, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*Difference
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, reason, ok := strings.Cut(l, "|")
		name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
		if !ok || name == "" || reason == "" {
			return nil, fmt.Errorf("%s:%d: want \"case | reason\", got %q", path, i+1, l)
		}
		if !strings.HasPrefix(reason, "on purpose: ") && !strings.HasPrefix(reason, "not built yet: ") {
			return nil, fmt.Errorf("%s:%d: the reason must start with \"on purpose: \" or \"not built yet: \", got %q", path, i+1, reason)
		}
		out = append(out, &Difference{Case: name, Reason: reason})
	}
	return out, nil
}

// Judge splits regressions into those a difference covers and the rest.
func Judge(regressions []string, diffs []*Difference) (listed, unlisted []string) {
	for _, c := range regressions {
		hit := false
		for _, d := range diffs {
			if d.Matches(c) {
				d.used, hit = true, true
			}
		}
		if hit {
			listed = append(listed, c)
		} else {
			unlisted = append(unlisted, c)
		}
	}
	return listed, unlisted
}
