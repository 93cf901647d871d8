package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"cairn/internal/daemon"
)

// kuboCISkip is the one test Kubo's own CI skips (the -skip of its
// gateway-conformance workflow, v0.42 and v0.43): Kubo streams CARs
// without a Content-Length.
const kuboCISkip = "TestGatewayCar/GET_response_for_application/vnd.ipld.car/Header_Content-Length"

// publicGateways is Gateway.PublicGateways as the suite's Kubo example
// config (kubo-config.example.sh) and Kubo's CI set it.
const publicGateways = `{
	"example.com": {"UseSubdomains": true, "InlineDNSLink": true, "Paths": ["/ipfs", "/ipns"]},
	"localhost": {"UseSubdomains": true, "InlineDNSLink": true, "Paths": ["/ipfs", "/ipns"]}
}`

func main() {
	home, _ := os.UserHomeDir()
	cache := filepath.Join(home, ".cache", "cairn-gwconformance", suiteVersion)
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	kubo := flag.String("kubo", filepath.Join(daemon.KuboDir(), "ipfs"), "Kubo "+daemon.KuboVersion+" binary (scripts/bench-kubo.sh)")
	suite := flag.String("suite", cache, "the suite's install (scripts/gateway-conformance-install.sh): gateway-conformance and src/")
	diffs := flag.String("differences", "tests/gateway-conformance/differences.txt", "the documented differences from Kubo")
	out := flag.String("out", "test-output/gateway-conformance", "where the reports and logs go")
	nodes := flag.String("nodes", "kubo,cairn", "nodes to run the suite against")
	port := flag.Int("port", 8080, "the gateway's port (inside the namespace)")
	timeout := flag.Duration("timeout", 15*time.Minute, "go test -timeout of one run of the suite")
	run := flag.String("run", "", "go test -run of the suite, e.g. while working on one area")
	reuse := flag.Bool("reuse", false, "judge the reports already in -out instead of running the suite")
	flag.Parse()
	for _, p := range []*string{bin, kubo, suite, diffs, out} {
		if a, err := filepath.Abs(*p); err == nil {
			*p = a
		}
	}
	list := strings.Split(*nodes, ",")
	if !*reuse {
		daemon.EnterNetNS()
		if err := daemon.LoopbackOnly(); err != nil {
			fatal(err)
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fatal(err)
		}
		cfg := runConfig{bin: *bin, kubo: *kubo, suite: *suite, out: *out, port: *port, timeout: *timeout, run: *run}
		if err := cfg.runAll(list); err != nil {
			fatal(err)
		}
	}
	ok, err := judge(os.Stdout, *out, list, *diffs)
	if err != nil {
		fatal(err)
	}
	if !ok {
		os.Exit(1)
	}
}

// suiteVersion is the gateway-conformance release run.
const suiteVersion = "v0.13.1"

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "gwconformance:", err)
	os.Exit(2)
}

type runConfig struct {
	bin, kubo, suite, out string
	port                  int
	timeout               time.Duration
	run                   string
}

// runAll extracts the fixtures once and runs the suite against each node.
func (c runConfig) runAll(nodes []string) error {
	tool := filepath.Join(c.suite, "gateway-conformance")
	src := filepath.Join(c.suite, "src")
	if _, err := os.Stat(tool); err != nil {
		return fmt.Errorf("%w (make gateway-conformance installs the suite: scripts/gateway-conformance-install.sh)", err)
	}
	work, err := os.MkdirTemp("", "cairn-gwconformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fix := filepath.Join(work, "fixtures")
	cmd := exec.Command(tool, "extract-fixtures", "--merged=true", "--dir", fix)
	cmd.Env = append(os.Environ(), "GATEWAY_CONFORMANCE_HOME="+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("extract-fixtures: %v: %s", err, b)
	}
	for _, n := range nodes {
		if err := c.runNode(n, work, fix, tool, src); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// runNode starts one node on a fresh test-profile repo with the
// fixtures imported, runs the suite against its gateway and writes
// <out>/<node>.json (the suite's report) and <node>.log.
func (c runConfig) runNode(node, work, fix, tool, src string) error {
	nsMap, err := os.ReadFile(filepath.Join(fix, "dnslinks.IPFS_NS_MAP"))
	if err != nil {
		return err
	}
	gwAddr := fmt.Sprintf("127.0.0.1:%d", c.port)
	o := daemon.Options{
		Offline: true,
		Env:     []string{"IPFS_NS_MAP=" + strings.TrimSpace(string(nsMap))},
		Config: map[string]string{
			"Addresses.Gateway":      fmt.Sprintf(`"/ip4/127.0.0.1/tcp/%d"`, c.port),
			"Gateway.PublicGateways": publicGateways,
		},
	}
	repo := filepath.Join(work, node)
	var d *daemon.Daemon
	switch node {
	case "kubo":
		d, err = daemon.StartKubo(c.kubo, repo, o)
	case "cairn":
		d, err = daemon.StartCairn(c.bin, repo, o)
	default:
		return fmt.Errorf("unknown node (kubo, cairn)")
	}
	if err != nil {
		return err
	}
	defer func() {
		d.Stop()
		os.WriteFile(filepath.Join(c.out, node+".daemon.log"), []byte(d.Log()), 0o644)
	}()
	notes, err := provision(d, fix)
	if err != nil {
		return err
	}
	report := filepath.Join(c.out, node+".json")
	os.Remove(report)
	if !listening(gwAddr, 5*time.Second) {
		// No gateway: an empty report, which counts every case as failed.
		notes = append(notes, "no gateway listening on "+gwAddr+" (Addresses.Gateway)")
		return writeNotes(c.out, node, notes, os.WriteFile(report, nil, 0o644))
	}
	logf, err := os.Create(filepath.Join(c.out, node+".log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(os.Stderr, "gwconformance: %s: running the suite (log: %s)\n", node, logf.Name())
	t0 := time.Now()
	rep, err := c.runSuite(tool, src, gwAddr, report, c.run, logf)
	if err != nil {
		return err
	}
	// A panic in the suite ends its test binary: the top-level tests
	// after the one that panicked run again, until none is left that the
	// reference (Kubo's report, run first) has and this one lacks.
	var base *Report
	if node != "kubo" && c.run == "" {
		base, _ = ParseReportFile(filepath.Join(c.out, "kubo.json"))
	}
	for i := 2; base != nil && len(rep.Panics) > 0 && i <= 20; i++ {
		rest := rep.MissingTop(base)
		if len(rest) == 0 {
			break
		}
		part := fmt.Sprintf("%s.%d", strings.TrimSuffix(report, ".json"), i)
		next, err := c.runSuite(tool, src, gwAddr, part, "^("+strings.Join(rest, "|")+")$", logf)
		if err != nil {
			return err
		}
		if err := appendFile(report, part); err != nil {
			return err
		}
		if len(next.Panics) == 0 {
			break
		}
		if rep, err = ParseReportFile(report); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "gwconformance: %s: suite done in %s\n", node, time.Since(t0).Round(time.Second))
	return writeNotes(c.out, node, notes, nil)
}

// runSuite runs the suite once against the gateway at gwAddr (only the tests
// run selects, when set), writing its report to report and its output to
// log, and returns the report.
func (c runConfig) runSuite(tool, src, gwAddr, report, run string, log io.Writer) (*Report, error) {
	args := []string{"test", "--gateway-url", "http://" + gwAddr,
		"--subdomain-url", fmt.Sprintf("http://localhost:%d", c.port), "--json", report,
		"--", "-count=1", "-timeout", c.timeout.String(), "-skip", kuboCISkip}
	if run != "" {
		args = append(args, "-run", run)
	}
	cmd := exec.Command(tool, args...)
	// The suite runs `go test ./tests` in its source: built already by
	// the install, so no module is fetched here (GOPROXY=off).
	cmd.Env = append(os.Environ(), "GATEWAY_CONFORMANCE_HOME="+src, "GOPROXY=off", "GOTOOLCHAIN=local",
		"GOFLAGS=-mod=mod -buildvcs=false")
	cmd.Stdout, cmd.Stderr = log, log
	runErr := cmd.Run() // non-zero when any test fails: the report says which
	rep, err := ParseReportFile(report)
	if err != nil {
		return nil, fmt.Errorf("the suite gave no report (%v): %w", runErr, err)
	}
	return rep, nil
}

// appendFile appends the file part to dst and removes part.
func appendFile(dst, part string) error {
	b, err := os.ReadFile(part)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Remove(part)
}

// provision imports the fixtures as Kubo's CI does: the merged CAR with
// dag import --pin-roots=false, each IPNS record with routing put
// --allow-offline under the name its file is named after. What fails is
// returned as notes for the report (a node may lack a command).
func provision(d *daemon.Daemon, fix string) ([]string, error) {
	var notes []string
	if out, err := d.CLI("dag", "import", "--pin-roots=false", filepath.Join(fix, "fixtures.car")); err != nil {
		if d.Name == "kubo" {
			return nil, err
		}
		notes = append(notes, fmt.Sprintf("dag import of fixtures.car failed: %s %s", lastLine(err), out))
	}
	recs, _ := filepath.Glob(filepath.Join(fix, "*.ipns-record"))
	sort.Strings(recs)
	for _, r := range recs {
		key, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(r), ".ipns-record"), "_")
		if _, err := d.CLI("routing", "put", "--allow-offline", "/ipns/"+key, r); err != nil {
			if d.Name == "kubo" {
				return nil, err
			}
			notes = append(notes, fmt.Sprintf("routing put of %s failed: %s", filepath.Base(r), lastLine(err)))
		}
	}
	return notes, nil
}

// lastLine is the end of a CLI error: what the node said, without the
// command line daemon.CLI puts before it.
func lastLine(err error) string {
	s := err.Error()
	if i := strings.Index(s, "exit status "); i >= 0 {
		if j := strings.Index(s[i:], ": "); j >= 0 {
			s = s[i+j+2:]
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

// listening waits up to wait for addr to accept a TCP connection.
func listening(addr string, wait time.Duration) bool {
	for t0 := time.Now(); time.Since(t0) < wait; time.Sleep(100 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// writeNotes keeps what went wrong while provisioning a node next to its
// report (<node>.notes.json), for judge to print.
func writeNotes(out, node string, notes []string, err error) error {
	if err != nil {
		return err
	}
	b, _ := json.Marshal(notes)
	return os.WriteFile(filepath.Join(out, node+".notes.json"), b, 0o644)
}

// judge prints each node's counts, then the cases that pass on Kubo but
// not on cairn, and reports whether every such case is a documented
// difference.
func judge(w io.Writer, out string, nodes []string, diffPath string) (bool, error) {
	reps := map[string]*Report{}
	fmt.Fprintf(w, "\ngateway-conformance %s, offline on loopback (Kubo's CI skip: %s)\n", suiteVersion, kuboCISkip)
	fmt.Fprintf(w, "%-8s %-40s %-40s\n", "node", "cases passed / failed / skipped", "checks passed / failed / skipped")
	for _, n := range nodes {
		var notes []string
		if b, err := os.ReadFile(filepath.Join(out, n+".notes.json")); err == nil {
			json.Unmarshal(b, &notes)
		}
		rep, err := ParseReportFile(filepath.Join(out, n+".json"))
		if err != nil {
			if n != "cairn" || len(notes) == 0 {
				return false, err
			}
			rep = &Report{Tests: map[string]outcome{}} // no gateway: nothing ran
		}
		reps[n] = rep
		cs, ks := rep.Counts()
		if len(rep.Tests) == 0 {
			fmt.Fprintf(w, "%-8s %-40s %-40s\n", n, "none ran", "-")
		} else {
			fmt.Fprintf(w, "%-8s %-40s %-40s\n", n,
				fmt.Sprintf("%d / %d / %d", cs[passed], cs[failed], cs[skipped]),
				fmt.Sprintf("%d / %d / %d", ks[passed], ks[failed], ks[skipped]))
		}
		for _, note := range notes {
			fmt.Fprintf(w, "         %s: %s\n", n, note)
		}
		for _, p := range rep.Panics {
			fmt.Fprintf(w, "         %s: the suite's test binary panicked (the tests after it were run again): %s\n", n, p)
		}
	}
	kubo, cairn := reps["kubo"], reps["cairn"]
	if kubo == nil || cairn == nil {
		fmt.Fprintln(w, "(one node only: nothing to compare)")
		return true, nil
	}
	diffs, err := LoadDifferences(diffPath)
	if err != nil {
		return false, err
	}
	if m := cairn.Missing(kubo); len(cairn.Tests) > 0 && len(m) > 0 {
		fmt.Fprintf(w, "\n%d of Kubo's %d cases did not run on cairn (counted as failed)\n", len(m), len(kubo.Cases()))
	}
	listed, unlisted := Judge(cairn.Regressions(kubo), diffs)
	fmt.Fprintf(w, "\n%d cases pass on Kubo and fail on cairn: %d documented differences (%s), %d not\n",
		len(listed)+len(unlisted), len(listed), filepath.Base(diffPath), len(unlisted))
	if len(cairn.Tests) == 0 {
		fmt.Fprintln(w, "  (cairn ran no case: each of them fails)")
		return false, nil
	}
	for _, c := range unlisted {
		fmt.Fprintf(w, "  FAIL %s\n", c)
	}
	for _, d := range diffs {
		if !d.used {
			fmt.Fprintf(w, "  no longer differs (remove its line): %s\n", d.Case)
		}
	}
	return len(unlisted) == 0, nil
}
