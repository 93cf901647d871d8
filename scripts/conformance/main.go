// Command conformance runs real clients' own test suites against cairn
// (make conformance; docs/conformance.md):
//
//   - go-ipfs-api v0.7.0's tests (shell_test.go and the package's other test
//     files), taken from the Go module cache at that version and copied into a
//     scratch folder at run time, against one cairn daemon (profile test,
//     API on a 127.0.0.1 port) holding the suite's fixtures;
//   - kubo-rpc-client 7.1.0 driven by the interface-ipfs-core suites (the
//     published package that holds them; kubo-rpc-client's tarball ships no
//     tests), with ipfsd-ctl 17 spawning cairn as the Kubo node
//     (tests/conformance/js/run.mjs), plus cairn's own spec of the client's
//     log and diag API, which no published package tests
//     (tests/conformance/js/spec, checked against Kubo with -kubo).
//
// Failures listed in tests/conformance/skip.txt are counted apart; any other
// failure makes the run exit 1. Installs are cached under
// ~/.cache/cairn-conformance. Nothing but loopback is used once the
// packages are installed.
//
//	go run ./scripts/conformance [-bin bin/cairn] [-suites go,js] [-areas root,pin]
//	go run ./scripts/conformance -kubo ~/.cache/cairn-bench/kubo-v0.43.1/ipfs -areas log,diag
//
// -kubo runs the kubo-rpc-client suites against that Kubo binary instead
// of cairn, offline and inside a network namespace with only loopback up
// (internal/daemon.EnterNetNS): the proof that what cairn's own specs
// (tests/conformance/js/spec) assert is what Kubo answers. The skip list
// then only names the tests not to run.
//
// CAIRN_BUILD_LOCK, when set, is a file that this command holds with flock
// while it compiles the go-ipfs-api tests (the developers' shared build lock).
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	netns "cairn/internal/daemon"
)

const (
	goModule  = "github.com/ipfs/go-ipfs-api"
	goVersion = "v0.7.0"
	// The CID of the suite's testdata folder added with Kubo's defaults; the
	// tests read it as examplesHash.
	goExamples = "QmS4ustL54uo8FzR9455qaxZwuMiUhyvMcX9Ba8nUH4uVv"

	suiteGo = "go-ipfs-api"
	suiteJS = "kubo-rpc-client"
)

// cleanups stop what the run started (the Go suite's daemon, the process
// group of node and the daemons ipfsd-ctl spawned) when it is interrupted.
var (
	cleanupMu sync.Mutex
	cleanups  = map[int]func(){}
	cleanupID int
)

func onInterrupt(f func()) (remove func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanupID++
	id := cleanupID
	cleanups[id] = f
	return func() {
		cleanupMu.Lock()
		defer cleanupMu.Unlock()
		delete(cleanups, id)
	}
}

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cleanupMu.Lock()
		for _, f := range cleanups {
			f()
		}
		os.Exit(2)
	}()
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	cache := flag.String("cache", defaultCache(), "where the suites and packages are installed")
	skipFile := flag.String("skip", "tests/conformance/skip.txt", "the skip list")
	suites := flag.String("suites", "go,js", "suites to run")
	areas := flag.String("areas", "", "only these kubo-rpc-client areas (comma-separated; default all)")
	goCap := flag.Duration("go-timeout", 45*time.Second, "longest one go-ipfs-api test may take")
	jsCap := flag.Duration("js-timeout", 20*time.Second, "longest one kubo-rpc-client test or hook may take")
	prepare := flag.Bool("prepare", false, "only download and compile the go-ipfs-api tests (run it under the build lock)")
	kubo := flag.String("kubo", "", "run the kubo-rpc-client suites against this Kubo binary instead of cairn (offline, loopback-only network namespace)")
	flag.Parse()
	if *kubo != "" {
		// The packages are installed first, while the network is there;
		// then the run goes on in the namespace.
		if !netns.InNetNS() {
			if _, err := installJS(*cache, filepath.Join(filepath.Dir(*skipFile), "js")); err != nil {
				fatal(err)
			}
		}
		netns.EnterNetNS()
		if err := netns.LoopbackOnly(); err != nil {
			fatal(err)
		}
		*suites, *bin = "js", *kubo
	}
	if *prepare {
		if _, _, _, err := prepareGoSuite(context.Background(), *cache); err != nil {
			fatal(err)
		}
		return
	}

	skips, err := loadSkipList(*skipFile)
	if err != nil {
		fatal(err)
	}
	absBin, err := filepath.Abs(*bin)
	if err != nil {
		fatal(err)
	}
	if _, err := os.Stat(absBin); err != nil {
		fatal(fmt.Errorf("cairn binary: %w (run make build)", err))
	}
	judged := skips
	if *kubo != "" {
		judged = nil // Kubo is not judged by cairn's list
	}
	if err := os.MkdirAll(*cache, 0o755); err != nil {
		fatal(err)
	}
	skipDir, err := filepath.Abs(filepath.Dir(*skipFile))
	if err != nil {
		fatal(err)
	}

	var results []result
	for _, s := range strings.Split(*suites, ",") {
		var rs []result
		switch strings.TrimSpace(s) {
		case "go":
			rs, err = runGoSuite(absBin, *cache, *goCap, skips)
		case "js":
			rs, err = runJSSuite(absBin, *kubo != "", *cache, filepath.Join(skipDir, "js"), *areas, *jsCap, skips)
		default:
			err = fmt.Errorf("unknown suite %q (go, js)", s)
		}
		if err != nil {
			fatal(err)
		}
		results = append(results, rs...)
	}
	ok := report(os.Stdout, results, judged)
	if *kubo != "" {
		// Kubo's own failures are expected; what fails this run is a
		// skip-list line that says Kubo fails a test Kubo passes.
		ok = kuboFailsListed(os.Stdout, results, skips)
	}
	if !ok {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "conformance: %v\n", err)
	os.Exit(2)
}

func defaultCache() string {
	if d := os.Getenv("CAIRN_CONFORMANCE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "cairn-conformance")
	}
	return filepath.Join(home, ".cache", "cairn-conformance")
}

// result is one test's outcome: state is pass, fail or skip (skipped by the
// suite itself).
type result struct {
	Suite, Area, Name string
	State             string
	Error             string
	Flaky             bool // failed, then passed on a second try
}

func (r result) key() string { return r.Suite + ": " + r.Area + ": " + r.Name }

// goCmd runs the go tool under the build lock when CAIRN_BUILD_LOCK is set.
func goCmd(ctx context.Context, args ...string) *exec.Cmd {
	if lock := os.Getenv("CAIRN_BUILD_LOCK"); lock != "" {
		return exec.CommandContext(ctx, "flock", append([]string{lock, "go"}, args...)...)
	}
	return exec.CommandContext(ctx, "go", args...)
}

// ---- go-ipfs-api ----

func runGoSuite(bin, cache string, perTest time.Duration, skips []*skipEntry) ([]result, error) {
	ctx := context.Background()
	dir, testBin, area, err := prepareGoSuite(ctx, cache)
	if err != nil {
		return nil, err
	}
	d, err := startDaemon(bin, filepath.Join(cache, "go-repo"))
	if err != nil {
		return nil, err
	}
	defer onInterrupt(func() { d.cmd.Process.Kill() })()
	defer d.stop()
	// The suite's fixture: its testdata folder (Kubo's old init docs), which
	// the tests read as examplesHash.
	out, err := d.cli("add", "-r", "-Q", filepath.Join(dir, "testdata"))
	if err != nil {
		return nil, fmt.Errorf("adding the go-ipfs-api fixtures: %v", err)
	}
	if got := strings.TrimSpace(out); got != goExamples {
		fmt.Printf("go-ipfs-api: fixture testdata added as %s, the tests expect %s\n", got, goExamples)
	}
	list := exec.Command(testBin, "-test.list", ".")
	list.Dir = dir
	list.Env = append(os.Environ(), "IPFS_PATH="+d.repo, apiEnv+"="+d.hostPort) // TestMain runs here too
	listOut, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the go-ipfs-api tests: %v", err)
	}
	var rs []result
	for _, name := range strings.Fields(string(listOut)) {
		if !strings.HasPrefix(name, "Test") {
			continue
		}
		r := result{Suite: suiteGo, Area: area[name], Name: name, State: "skip"}
		if e := match(notRun(skips, suiteGo), r.key()); e != nil {
			r.Error = "not run: " + e.reason
		} else {
			r = runGoTest(testBin, dir, d, name, perTest)
			r.Area = area[name]
			if r.State == "fail" && match(skips, r.key()) == nil {
				// A second try for a failure the skip list does not know.
				if again := runGoTest(testBin, dir, d, name, perTest); again.State == "pass" {
					r.State, r.Flaky = "pass", true
				}
			}
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// apiEnv carries the daemon's host:port into the suite, whose tests dial
// the constant localhost:5001.
const apiEnv = "CAIRN_CONFORMANCE_API"

var shellURLConst = regexp.MustCompile(`\n\s*shellUrl\s*=\s*"localhost:5001"`)

// prepareGoSuite copies the module into cache/go-suite with the address
// read from apiEnv, and compiles its tests once (again only when the
// copy changes). It returns the folder, the test binary and each test's
// area (its file: shell, key, mfs, ...).
func prepareGoSuite(ctx context.Context, cache string) (string, string, map[string]string, error) {
	src, err := goModuleDir(ctx, cache)
	if err != nil {
		return "", "", nil, err
	}
	dir := filepath.Join(cache, "go-suite")
	if err := copyTree(src, dir); err != nil {
		return "", "", nil, err
	}
	tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	sort.Strings(tests)
	area := map[string]string{}
	h := sha256.New()
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", "", nil, err
		}
		for _, m := range goTestFunc.FindAllStringSubmatch(string(b), -1) {
			area[m[1]] = strings.TrimSuffix(filepath.Base(f), "_test.go")
		}
		text := string(b)
		if filepath.Base(f) == "shell_test.go" {
			if !shellURLConst.MatchString(text) {
				return "", "", nil, fmt.Errorf("%s: no shellUrl constant to point at the daemon", f)
			}
			text = shellURLConst.ReplaceAllString(text, "") + "\nvar shellUrl = os.Getenv(\"" + apiEnv + "\")\n"
		}
		text = strings.ReplaceAll(text, `"localhost:5001"`, "shellUrl")
		h.Write([]byte(text))
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			return "", "", nil, err
		}
	}
	testBin := filepath.Join(cache, "go-ipfs-api.test")
	sum := hex.EncodeToString(h.Sum(nil))
	stamp := testBin + ".sum"
	if old, _ := os.ReadFile(stamp); string(old) == sum {
		if _, err := os.Stat(testBin); err == nil {
			return dir, testBin, area, nil
		}
	}
	build := goCmd(ctx, "test", "-c", "-o", testBin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", nil, fmt.Errorf("building the go-ipfs-api tests: %v\n%s", err, out)
	}
	return dir, testBin, area, os.WriteFile(stamp, []byte(sum), 0o644)
}

// runGoTest runs one test in its own process (a hang or an os.Exit in the
// suite costs that test only), TestMain's fixture setup included.
func runGoTest(testBin, dir string, d *daemon, name string, perTest time.Duration) result {
	r := result{Suite: suiteGo, Name: name}
	ctx, cancel := context.WithTimeout(context.Background(), perTest+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testBin, "-test.run", "^"+name+"$", "-test.v", "-test.count=1",
		"-test.timeout", perTest.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "IPFS_PATH="+d.repo, apiEnv+"="+d.hostPort)
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case strings.Contains(text, "--- SKIP: "+name):
		r.State = "skip"
	case err == nil && strings.Contains(text, "--- PASS: "+name):
		r.State = "pass"
	default:
		r.State = "fail"
		r.Error = goFailure(text, err)
	}
	return r
}

var goTestFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)

var goNoise = regexp.MustCompile(`^(=== RUN|--- FAIL|FAIL|exit status|goroutine |\s*$)`)

func goFailure(text string, err error) string {
	if strings.Contains(text, "panic: test timed out") {
		return "no answer: the test hung until its timeout"
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if !goNoise.MatchString(l) && len(lines) < 4 {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) == 0 && err != nil {
		return err.Error()
	}
	return strings.Join(lines, " | ")
}

// goModuleDir brings go-ipfs-api at the pinned version into the module
// cache (a tiny module of its own asks for it) and returns its folder.
func goModuleDir(ctx context.Context, cache string) (string, error) {
	mod := filepath.Join(cache, "go-mod")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return "", err
	}
	gomod := "module cairn-conformance\n\ngo 1.21\n\nrequire " + goModule + " " + goVersion + "\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", goModule+"@"+goVersion) // no compile: no lock
	cmd.Dir = mod
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v", goModule, goVersion, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("go mod download: %v", err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", goModule, goVersion, info.Error)
	}
	return info.Dir, nil
}

// copyTree replaces dst with a writable copy of src.
func copyTree(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}

// ---- the cairn daemon of the Go suite ----

type daemon struct {
	bin, repo, hostPort string
	cmd                 *exec.Cmd
	exited              chan struct{}
}

var apiAddr = regexp.MustCompile(`^/ip4/(127\.\d+\.\d+\.\d+)/tcp/(\d+)$`)

func startDaemon(bin, repo string) (*daemon, error) {
	if err := os.RemoveAll(repo); err != nil {
		return nil, err
	}
	d := &daemon{bin: bin, repo: repo, exited: make(chan struct{})}
	if out, err := d.cli("init", "--profile=test"); err != nil {
		return nil, fmt.Errorf("cairn init: %v\n%s", err, out)
	}
	// go-ipfs-api's TestPubSub needs pubsub, which its own CI turns on
	// with this flag.
	d.cmd = exec.Command(bin, "daemon", "--enable-pubsub-experiment")
	d.cmd.Env = append(os.Environ(), "CAIRN_PATH="+repo)
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(repo + ".log")
	if err != nil {
		return nil, err
	}
	d.cmd.Stderr = logf
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if sc.Text() == "Daemon is ready" {
				close(ready)
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { d.cmd.Wait(); close(d.exited) }()
	select {
	case <-ready:
	case <-d.exited:
		return nil, fmt.Errorf("cairn daemon exited before it was ready (see %s.log)", repo)
	case <-time.After(60 * time.Second):
		d.stop()
		return nil, fmt.Errorf("cairn daemon not ready after 60s (see %s.log)", repo)
	}
	api, err := os.ReadFile(filepath.Join(repo, "api"))
	if err != nil {
		d.stop()
		return nil, err
	}
	m := apiAddr.FindStringSubmatch(strings.TrimSpace(string(api)))
	if m == nil {
		d.stop()
		return nil, fmt.Errorf("cairn daemon API on %q, not a loopback address", api)
	}
	d.hostPort = m[1] + ":" + m[2]
	return d, nil
}

func (d *daemon) cli(args ...string) (string, error) {
	cmd := exec.Command(d.bin, args...)
	cmd.Env = append(os.Environ(), "CAIRN_PATH="+d.repo)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("cairn %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func (d *daemon) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	d.cli("shutdown")
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
	}
}

// ---- kubo-rpc-client ----

// jsFiles are copied from tests/conformance/js into the install folder,
// where node_modules is; package.json and the stand-in decide when to
// reinstall (jsCode, the runner and cairn's own specs, do not).
var (
	jsFiles = []string{"package.json", "aegir-stub/package.json", "aegir-stub/utils/chai.js",
		"aegir-stub/utils/fixtures.js", "aegir-stub/utils/resolve.js"}
	jsCode = []string{"run.mjs", "spec/index.js", "spec/log.js", "spec/diag.js"}
)

// installJS copies the files into cache/js and installs the packages
// when package.json or the stand-in changed. It returns the folder.
func installJS(cache, srcDir string) (string, error) {
	dir := filepath.Join(cache, "js")
	h := sha256.New()
	for _, f := range append(append([]string{}, jsFiles...), jsCode...) {
		b, err := os.ReadFile(filepath.Join(srcDir, f))
		if err != nil {
			return "", err
		}
		if !slices.Contains(jsCode, f) {
			h.Write(b)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return "", err
		}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	stamp := filepath.Join(dir, ".installed")
	if old, _ := os.ReadFile(stamp); string(old) != sum {
		fmt.Println("kubo-rpc-client: installing the suite's packages (npm install)")
		os.RemoveAll(filepath.Join(dir, "node_modules"))
		cmd := exec.Command("npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error")
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("npm install: %v", err)
		}
		if err := installFixtures(dir); err != nil {
			return "", err
		}
		if err := os.WriteFile(stamp, []byte(sum), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func runJSSuite(bin string, kubo bool, cache, srcDir, areas string, perTest time.Duration, skips []*skipEntry) ([]result, error) {
	dir, err := installJS(cache, srcDir)
	if err != nil {
		return nil, err
	}

	// ipfsd-ctl runs "<bin> init|daemon|version" with IPFS_PATH set to a
	// fresh repo: this wrapper makes that cairn's repo and forces the test
	// profile on init, so no node it spawns has a bootstrap list or mDNS.
	wrapper := filepath.Join(cache, "cairn-as-kubo")
	env := "CAIRN_PATH=$IPFS_PATH; export CAIRN_PATH\n"
	if kubo {
		// Kubo itself (-kubo): no telemetry, and every daemon offline.
		wrapper = filepath.Join(cache, "kubo-offline")
		env = "IPFS_TELEMETRY=off; export IPFS_TELEMETRY\n" +
			"if [ \"$1\" = daemon ]; then set -- \"$@\" --offline; fi\n"
	}
	script := "#!/bin/sh\n# The Kubo binary for ipfsd-ctl (written by scripts/conformance).\n" +
		"[ -n \"$IPFS_PATH\" ] || { echo 'IPFS_PATH is not set' >&2; exit 1; }\n" + env +
		// init: any profile ipfsd-ctl asks for is replaced by test (cairn,
		// like Kubo, refuses an option given twice).
		"if [ \"$1\" = init ]; then\n" +
		"  shift; skip=0\n" +
		"  for a in \"$@\"; do\n" +
		"    shift\n" +
		"    if [ $skip = 1 ]; then skip=0; continue; fi\n" +
		"    case \"$a\" in --profile|-p) skip=1 ;; --profile=*|-p=*) ;; *) set -- \"$@\" \"$a\" ;; esac\n" +
		"  done\n" +
		"  set -- init \"$@\" --profile=test\n" +
		"fi\n" +
		"exec " + shellQuote(bin) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return nil, err
	}

	// Tests that would reach outside loopback are not run at all.
	var exclude []string
	for _, e := range notRun(skips, suiteJS) {
		exclude = append(exclude, jsTitle(e.pattern))
	}
	excludeFile := filepath.Join(cache, "js-not-run.json")
	if err := writeJSON(excludeFile, exclude); err != nil {
		return nil, err
	}
	args := []string{"--bin", wrapper, "--cap-ms", fmt.Sprint(perTest.Milliseconds()), "--exclude", excludeFile}
	start := time.Now()
	rs, err := runNode(dir, filepath.Join(cache, "js-run"), 12*time.Minute, append(args, "--areas", areas))
	if err != nil {
		return nil, err
	}
	fmt.Printf("kubo-rpc-client: %d tests in %s (mocha log: %s)\n", len(rs), time.Since(start).Round(time.Second),
		filepath.Join(cache, "js-run.log"))

	// A second try, alone, for failures the skip list does not know: one
	// that passes then is reported as flaky, not failed.
	var again []string
	areaSet := map[string]bool{}
	for _, r := range rs {
		if r.State == "fail" && match(skips, r.key()) == nil {
			again = append(again, r.Area+" "+r.Name)
			areaSet[r.Area] = true
		}
	}
	if len(again) == 0 {
		return rs, nil
	}
	onlyFile := filepath.Join(cache, "js-rerun-tests.json")
	if err := writeJSON(onlyFile, again); err != nil {
		return nil, err
	}
	var rerunAreas []string
	for a := range areaSet {
		rerunAreas = append(rerunAreas, a)
	}
	second, err := runNode(dir, filepath.Join(cache, "js-rerun"), 6*time.Minute,
		append(args, "--only", onlyFile, "--areas", strings.Join(rerunAreas, ",")))
	if err != nil {
		return nil, err
	}
	passed := map[string]bool{}
	for _, r := range second {
		if r.State == "pass" {
			passed[r.key()] = true
		}
	}
	for i, r := range rs {
		if r.State == "fail" && passed[r.key()] {
			rs[i].State, rs[i].Flaky = "pass", true
		}
	}
	return rs, nil
}

// jsTitle turns "kubo-rpc-client: area: name" into mocha's "area name".
func jsTitle(pattern string) string {
	_, rest, _ := strings.Cut(pattern, ": ")
	area, name, _ := strings.Cut(rest, ": ")
	return area + " " + name
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// runNode runs run.mjs once; base.log gets mocha's output and base.json
// the results.
func runNode(dir, base string, limit time.Duration, args []string) ([]result, error) {
	out, logPath := base+".json", base+".log"
	os.Remove(out)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"run.mjs", "--out", out}, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// node and the cairn daemons ipfsd-ctl spawns share a process group of
	// their own: whatever is left of it when node ends (or is stopped) is
	// killed, so no daemon outlives the run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pgid := cmd.Process.Pid
	defer onInterrupt(func() { syscall.Kill(-pgid, syscall.SIGKILL) })()
	err = cmd.Wait()
	syscall.Kill(-pgid, syscall.SIGKILL)
	if err != nil {
		return nil, fmt.Errorf("kubo-rpc-client suites: %v (log: %s)", err, logPath)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("kubo-rpc-client suites wrote no results (log: %s): %v", logPath, err)
	}
	var res struct {
		Notes []string
		Tests []struct{ Area, Name, State, Error string }
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	for _, n := range res.Notes {
		fmt.Println("kubo-rpc-client:", n)
	}
	var rs []result
	for _, t := range res.Tests {
		rs = append(rs, result{Suite: suiteJS, Area: t.Area, Name: t.Name, State: t.State, Error: t.Error})
	}
	return rs, nil
}

// The suites read their fixtures from interface-ipfs-core/test/fixtures,
// which 0.158.1 does not publish; 0.155.2 is the last version whose tarball
// holds them (in dist/test/fixtures). Only its tarball is fetched, not its
// dependencies.
const fixturesPackage = "interface-ipfs-core@0.155.2"

func installFixtures(dir string) error {
	tmp, err := os.MkdirTemp(dir, "fixtures-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pack := exec.Command("npm", "pack", fixturesPackage, "--pack-destination", tmp, "--loglevel=error")
	pack.Dir = tmp
	out, err := pack.Output()
	if err != nil {
		return fmt.Errorf("npm pack %s: %v", fixturesPackage, err)
	}
	tgz := filepath.Join(tmp, strings.TrimSpace(lastLine(string(out))))
	if out, err := exec.Command("tar", "xzf", tgz, "-C", tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("unpacking %s: %v: %s", fixturesPackage, err, out)
	}
	dst := filepath.Join(dir, "node_modules", "interface-ipfs-core", "test", "fixtures")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	os.RemoveAll(dst)
	return os.Rename(filepath.Join(tmp, "package", "dist", "test", "fixtures"), dst)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ---- the skip list and the report ----

// skipEntry is one line of skip.txt: "suite: area: test name | reason",
// where a name ending in * covers every test it starts.
type skipEntry struct {
	pattern, reason string
	line            int
	used            bool
}

// Every reason says which of these it is. A "cairn bug", "not built yet" or
// "suite" reason goes on to state the defect or the missing feature itself.
var reasonKinds = regexp.MustCompile(`^(Kubo fails it too|needs DNS|needs the network|not built yet: \S|cairn bug: \S|suite: \S)`)

// A reason states what is wrong in words; it names no tracker entry.
var trackerRef = regexp.MustCompile(`(?i)\bissues? *#?\d|#\d`)

func loadSkipList(path string) ([]*skipEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var es []*skipEntry
	var bad []string
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		pat, reason, ok := strings.Cut(l, " | ")
		pat, reason = strings.TrimSpace(pat), strings.TrimSpace(reason)
		if !ok || !reasonKinds.MatchString(reason) || trackerRef.MatchString(reason) || strings.Count(pat, ": ") < 2 {
			bad = append(bad, fmt.Sprintf("%s:%d: %q", path, i+1, l))
			continue
		}
		es = append(es, &skipEntry{pattern: pat, reason: reason, line: i + 1})
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("skip list entries must read \"suite: area: test | reason\" with a reason of a known kind (%s) that states the defect, not an issue number:\n%s",
			reasonKinds, strings.Join(bad, "\n"))
	}
	return es, nil
}

// notRun is the part of the skip list of one suite whose tests must not
// run at all: they would reach past loopback (DNS, outside addresses).
func notRun(es []*skipEntry, suite string) []*skipEntry {
	var out []*skipEntry
	for _, e := range es {
		if strings.HasPrefix(e.pattern, suite+": ") &&
			(strings.HasPrefix(e.reason, "needs DNS") || strings.HasPrefix(e.reason, "needs the network")) {
			out = append(out, e)
		}
	}
	return out
}

func match(es []*skipEntry, key string) *skipEntry {
	for _, e := range es {
		if e.pattern == key || (strings.HasSuffix(e.pattern, "*") && strings.HasPrefix(key, strings.TrimSuffix(e.pattern, "*"))) {
			return e
		}
	}
	return nil
}

type tally struct{ pass, fail, known, skip int }

// report prints the counts per suite and area and the failures, and says
// whether every failure is in the skip list.
func report(w io.Writer, rs []result, es []*skipEntry) bool {
	per := map[string]*tally{}
	var areas []string
	var unexpected, fixed, flaky []string
	total := tally{}
	for _, r := range rs {
		a := r.Suite + " " + r.Area
		t := per[a]
		if t == nil {
			t = &tally{}
			per[a] = t
			areas = append(areas, a)
		}
		e := match(es, r.key())
		if e != nil {
			e.used = true
		}
		if r.Flaky {
			flaky = append(flaky, r.key()+"\n    first try: "+strings.ReplaceAll(r.Error, "\n", "\n    "))
		}
		switch {
		case r.State == "pass":
			t.pass++
			if e != nil && !strings.Contains(e.reason, "sometimes") {
				fixed = append(fixed, fmt.Sprintf("%s (skip.txt:%d)", r.key(), e.line))
			}
		case r.State == "skip":
			t.skip++
		case e != nil:
			t.known++
		default:
			t.fail++
			unexpected = append(unexpected, r.key()+"\n    "+strings.ReplaceAll(r.Error, "\n", "\n    "))
		}
	}
	sort.Strings(areas)
	fmt.Fprintf(w, "\n%-40s %6s %6s %6s %6s\n", "suite area", "pass", "fail", "known", "skip")
	suiteTotals := map[string]*tally{}
	for _, a := range areas {
		t := per[a]
		fmt.Fprintf(w, "%-40s %6d %6d %6d %6d\n", a, t.pass, t.fail, t.known, t.skip)
		s := strings.SplitN(a, " ", 2)[0]
		if suiteTotals[s] == nil {
			suiteTotals[s] = &tally{}
		}
		st := suiteTotals[s]
		st.pass, st.fail, st.known, st.skip = st.pass+t.pass, st.fail+t.fail, st.known+t.known, st.skip+t.skip
		total.pass, total.fail, total.known, total.skip = total.pass+t.pass, total.fail+t.fail, total.known+t.known, total.skip+t.skip
	}
	for _, s := range []string{suiteGo, suiteJS} {
		if t := suiteTotals[s]; t != nil {
			fmt.Fprintf(w, "%-40s %6d %6d %6d %6d   (%d/%d pass)\n", s+" total", t.pass, t.fail, t.known, t.skip,
				t.pass, t.pass+t.fail+t.known)
		}
	}
	if len(fixed) > 0 {
		fmt.Fprintf(w, "\nPassing now though listed in the skip list (remove the entries):\n  %s\n", strings.Join(fixed, "\n  "))
	}
	for _, e := range es {
		if !e.used && ranSuiteOf(rs, e.pattern) {
			fmt.Fprintf(w, "skip.txt:%d matches no test that ran: %s\n", e.line, e.pattern)
		}
	}
	if len(flaky) > 0 {
		fmt.Fprintf(w, "\nFlaky: failed, then passed on a second try:\n  %s\n", strings.Join(flaky, "\n  "))
	}
	if len(unexpected) > 0 {
		fmt.Fprintf(w, "\nFailures not in the skip list (after a second try):\n  %s\n", strings.Join(unexpected, "\n  "))
	}
	// "known" failures are listed in skip.txt: reported as skipped.
	fmt.Fprintf(w, "\nconformance: %d passed, %d failed, %d skipped\n", total.pass, total.fail, total.known+total.skip)
	return total.fail == 0
}

// kuboFailsListed checks the skip list against a run on Kubo: a listed
// test that Kubo passes has no place in the list (cairn must pass what
// Kubo passes), whatever the line's reason. It prints those and reports
// whether there were none.
func kuboFailsListed(w io.Writer, rs []result, es []*skipEntry) bool {
	var passing []string
	for _, r := range rs {
		if e := match(es, r.key()); e != nil && r.State == "pass" {
			passing = append(passing, fmt.Sprintf("%s (skip.txt:%d: %s)", r.key(), e.line, e.reason))
		}
	}
	if len(passing) > 0 {
		fmt.Fprintf(w, "\nListed in the skip list, but Kubo passes them:\n  %s\n", strings.Join(passing, "\n  "))
	}
	fmt.Fprintf(w, "skip list against Kubo: %d listed tests pass on Kubo\n", len(passing))
	return len(passing) == 0
}

// ranSuiteOf reports whether the run covered the area of pattern (a partial
// run must not call the rest of the list stale).
func ranSuiteOf(rs []result, pattern string) bool {
	parts := strings.SplitN(pattern, ": ", 3)
	for _, r := range rs {
		if r.Suite == parts[0] && r.Area == parts[1] {
			return true
		}
	}
	return false
}
