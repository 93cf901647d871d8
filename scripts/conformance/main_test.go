package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The checked-in skip list parses, and every entry has a reason of a known kind.
func TestCheckedInSkipList(t *testing.T) {
	es, err := loadSkipList("../../tests/conformance/skip.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 {
		t.Fatal("skip list is empty")
	}
	seen := map[string]int{}
	for _, e := range es {
		if prev, dup := seen[e.pattern]; dup {
			t.Errorf("line %d repeats line %d: %s", e.line, prev, e.pattern)
		}
		seen[e.pattern] = e.line
	}
}

func writeSkip(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "skip.txt")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSkipListRefusesEntriesWithoutAKnownReason(t *testing.T) {
	for _, line := range []string{
		"go-ipfs-api: shell: TestAdd",                               // no reason
		"go-ipfs-api: shell: TestAdd | flaky",                       // unknown kind
		"go-ipfs-api: shell: TestAdd | cairn bug:",                  // no defect stated
		"go-ipfs-api: shell: TestAdd | not built yet: ",             // no feature stated
		"go-ipfs-api: shell: TestAdd | suite:",                      // no suite defect stated
		"go-ipfs-api: shell: TestAdd | cairn bug: Issue 12",         // an issue number, not the defect
		"go-ipfs-api: shell: TestAdd | cairn bug: see #12",          // the same
		"go-ipfs-api: key: Test* | not built yet: keys (issue #14)", // the same
		"go-ipfs-api: shell: TestAdd | unfiled: no /ws transport",   // no longer a kind: a cairn bug or not built yet
		"TestAdd | not built yet: keys",                             // no suite and area
		"go-ipfs-api: shell: TestAdd |not built yet: keys",          // separator
	} {
		if _, err := loadSkipList(writeSkip(t, "# comment\n"+line+"\n")); err == nil {
			t.Errorf("accepted %q", line)
		}
	}
	es, err := loadSkipList(writeSkip(t, "\n# c\ngo-ipfs-api: key: Test* | not built yet: keys\n"))
	if err != nil || len(es) != 1 || es[0].line != 3 || es[0].reason != "not built yet: keys" {
		t.Fatalf("got %+v, %v", es, err)
	}
}

func TestReportFailsOnlyOnUnlistedFailures(t *testing.T) {
	es, err := loadSkipList(writeSkip(t, strings.Join([]string{
		"go-ipfs-api: key: Test* | not built yet: keys",
		"go-ipfs-api: shell: TestCat | cairn bug: cat of a directory answers 500, Kubo's 'this dag node is a directory'",
		"go-ipfs-api: shell: TestPatchLink | needs the network: a CID no fixture has",
		"kubo-rpc-client: pin: .pin.ls gone | cairn bug: pin ls of an unpinned CID answers nothing, Kubo's 'is not pinned'",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	rs := []result{
		{Suite: suiteGo, Area: "key", Name: "TestKeyGen", State: "fail", Error: "not implemented"},
		{Suite: suiteGo, Area: "key", Name: "TestKeyRm", State: "fail"},
		{Suite: suiteGo, Area: "shell", Name: "TestCat", State: "pass"},
		{Suite: suiteGo, Area: "shell", Name: "TestAdd", State: "pass"},
		{Suite: suiteGo, Area: "shell", Name: "TestPatchLink", State: "skip"},
		{Suite: suiteGo, Area: "ipns", Name: "TestPublish", State: "skip"},
	}
	var out strings.Builder
	if ok := report(&out, rs, es); !ok {
		t.Fatalf("listed failures failed the run:\n%s", out.String())
	}
	text := out.String()
	for _, want := range []string{
		"conformance: 2 passed, 0 failed, 4 skipped",
		"go-ipfs-api key", "go-ipfs-api total",
		"go-ipfs-api: shell: TestCat (skip.txt:2)", // passing though listed
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	// The kubo-rpc-client entry is not called stale: that suite did not run.
	if strings.Contains(text, "matches no test") {
		t.Errorf("stale entry reported for a suite that did not run:\n%s", text)
	}

	rs = append(rs, result{Suite: suiteGo, Area: "shell", Name: "TestGet", State: "pass", Flaky: true, Error: "timeout"})
	out.Reset()
	if !report(&out, rs, es) || !strings.Contains(out.String(), "Flaky: failed, then passed on a second try:\n  go-ipfs-api: shell: TestGet\n    first try: timeout") {
		t.Errorf("a flaky pass:\n%s", out.String())
	}
	rs = rs[:len(rs)-1]

	rs = append(rs, result{Suite: suiteGo, Area: "shell", Name: "TestLs", State: "fail", Error: "boom"})
	out.Reset()
	if report(&out, rs, es) {
		t.Fatal("an unlisted failure passed the run")
	}
	if !strings.Contains(out.String(), "go-ipfs-api: shell: TestLs\n    boom") ||
		!strings.Contains(out.String(), "conformance: 2 passed, 1 failed, 4 skipped") {
		t.Errorf("report:\n%s", out.String())
	}
}

// Ensure a run on Kubo fails on a listed test that Kubo passes (the list
// names only what Kubo fails too) and not on Kubo's other failures.
func TestKuboFailsListed(t *testing.T) {
	es, err := loadSkipList(writeSkip(t, strings.Join([]string{
		"kubo-rpc-client: files: .files.chmod* | Kubo fails it too: Kubo answers no mode",
		"kubo-rpc-client: object: * | suite: API kubo-rpc-client 7 dropped",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	rs := []result{
		{Suite: suiteJS, Area: "files", Name: ".files.chmod should change mode", State: "fail"},
		{Suite: suiteJS, Area: "object", Name: "new", State: "fail"},
		{Suite: suiteJS, Area: "pin", Name: ".pin.add", State: "fail"}, // Kubo's own failure
	}
	var out strings.Builder
	if !kuboFailsListed(&out, rs, es) {
		t.Fatalf("failed though Kubo fails every listed test:\n%s", out.String())
	}
	rs[0].State = "pass"
	out.Reset()
	if kuboFailsListed(&out, rs, es) || !strings.Contains(out.String(), "kubo-rpc-client: files: .files.chmod should change mode (skip.txt:1") {
		t.Fatalf("a listed test Kubo passes was not reported:\n%s", out.String())
	}
}

func TestNotRunTakesOnlyNetworkEntriesOfTheSuite(t *testing.T) {
	es, err := loadSkipList(writeSkip(t, strings.Join([]string{
		"go-ipfs-api: shell: TestPatchLink | needs the network: x",
		"go-ipfs-api: shell: TestPubSub | not built yet: pubsub",
		"kubo-rpc-client: name: .name.resolve should resolve /ipns/ipfs.io* | needs DNS: ipfs.io",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if got := notRun(es, suiteGo); len(got) != 1 || got[0].pattern != "go-ipfs-api: shell: TestPatchLink" {
		t.Errorf("go: %+v", got)
	}
	js := notRun(es, suiteJS)
	if len(js) != 1 || match(js, "kubo-rpc-client: name: .name.resolve should resolve /ipns/ipfs.io with remainder") == nil {
		t.Errorf("js: %+v", js)
	}
}
