package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// events is a test2json stream as the suite writes it: a case whose name
// holds a '/', a nested check group, a skipped case and a package line.
const kuboEvents = `{"Action":"start","Package":"Gateway Tests"}
{"Action":"run","Test":"TestGatewayCar"}
{"Action":"run","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car"}
{"Action":"run","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car/Status_code"}
{"Action":"output","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car/Status_code","Output":"ok\n"}
{"Action":"pass","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car/Status_code"}
{"Action":"run","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car/Check_0"}
{"Action":"run","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car/Check_0/Body"}
{"Action":"pass","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car/Check_0/Body"}
{"Action":"pass","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car/Check_0"}
{"Action":"pass","Test":"TestGatewayCar/GET_response_for_application/vnd.ipld.car"}
{"Action":"run","Test":"TestGatewayCar/Range"}
{"Action":"run","Test":"TestGatewayCar/Range/Header_Content-Range"}
{"Action":"fail","Test":"TestGatewayCar/Range/Header_Content-Range"}
{"Action":"fail","Test":"TestGatewayCar/Range"}
{"Action":"run","Test":"TestGatewayCar/Skipped"}
{"Action":"skip","Test":"TestGatewayCar/Skipped"}
{"Action":"fail","Test":"TestGatewayCar"}
{"Action":"suite_fail","Package":"Gateway Tests"}
`

func TestParseReport_CountsCasesAndChecks(t *testing.T) {
	rep, err := ParseReport(strings.NewReader(kuboEvents))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TestGatewayCar/GET_response_for_application/vnd.ipld.car", "TestGatewayCar/Range", "TestGatewayCar/Skipped"}
	if got := rep.Cases(); !slices.Equal(got, want) {
		t.Errorf("Cases() = %q, want %q", got, want)
	}
	cases, checks := rep.Counts()
	if cases[passed] != 1 || cases[failed] != 1 || cases[skipped] != 1 {
		t.Errorf("cases = %v, want 1 passed, 1 failed, 1 skipped", cases)
	}
	// Status_code, Check_0/Body and Header_Content-Range; Check_0 is a group.
	if checks[passed] != 2 || checks[failed] != 1 || checks[skipped] != 0 {
		t.Errorf("checks = %v, want 2 passed, 1 failed", checks)
	}
}

func TestParseReport_UnfinishedTestFails(t *testing.T) {
	rep, err := ParseReport(strings.NewReader(`{"Action":"run","Test":"TestA"}
{"Action":"run","Test":"TestA/case"}
{"Action":"run","Test":"TestA/case/check"}
`))
	if err != nil {
		t.Fatal(err)
	}
	cases, checks := rep.Counts()
	if cases[failed] != 1 || checks[failed] != 1 {
		t.Errorf("cases %v checks %v: a run cut short must count as failed", cases, checks)
	}
}

func TestParseReport_Errors(t *testing.T) {
	for _, in := range []string{"", `{"Action":"start","Package":"x"}` + "\n", "not json\n"} {
		if _, err := ParseReport(strings.NewReader(in)); err == nil {
			t.Errorf("ParseReport(%q): no error", in)
		}
	}
}

func TestRegressions_JudgedByDifferenceList(t *testing.T) {
	kubo, err := ParseReport(strings.NewReader(`{"Action":"pass","Test":"TestA"}
{"Action":"pass","Test":"TestA/one"}
{"Action":"pass","Test":"TestA/two"}
{"Action":"pass","Test":"TestA/three"}
{"Action":"fail","Test":"TestA/four"}
`))
	if err != nil {
		t.Fatal(err)
	}
	cairn, err := ParseReport(strings.NewReader(`{"Action":"fail","Test":"TestA"}
{"Action":"fail","Test":"TestA/one"}
{"Action":"pass","Test":"TestA/two"}
{"Action":"fail","Test":"TestA/four"}
`))
	if err != nil {
		t.Fatal(err)
	}
	regs := cairn.Regressions(kubo)
	if want := []string{"TestA/one", "TestA/three"}; !slices.Equal(regs, want) {
		t.Fatalf("Regressions = %q, want %q (a case cairn lacks counts)", regs, want)
	}
	path := filepath.Join(t.TempDir(), "differences.txt")
	os.WriteFile(path, []byte("# comment\n\nTestA/one | on purpose: cairn answers 404\nTestB/gone | not built yet: no longer differs\n"), 0o644)
	diffs, err := LoadDifferences(path)
	if err != nil {
		t.Fatal(err)
	}
	listed, unlisted := Judge(regs, diffs)
	if !slices.Equal(listed, []string{"TestA/one"}) || !slices.Equal(unlisted, []string{"TestA/three"}) {
		t.Errorf("Judge: listed %q unlisted %q", listed, unlisted)
	}
	if !diffs[0].used || diffs[1].used {
		t.Errorf("used flags %v %v, want true false", diffs[0].used, diffs[1].used)
	}
}

func TestLoadDifferences_NeedsReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "differences.txt")
	for _, l := range []string{"TestA/one\n", "TestA/one | cairn answers 404\n"} {
		os.WriteFile(path, []byte(l), 0o644)
		if _, err := LoadDifferences(path); err == nil {
			t.Errorf("%q: an entry without a reason of a known kind was accepted", l)
		}
	}
}

func TestDifferenceList_Committed(t *testing.T) {
	if _, err := LoadDifferences("../../tests/gateway-conformance/differences.txt"); err != nil {
		t.Fatal(err)
	}
}

func TestParseReport_KeepsPanic(t *testing.T) {
	rep, err := ParseReport(strings.NewReader(`{"Action":"run","Test":"TestA"}
{"Action":"run","Test":"TestA/case"}
{"Action":"output","Test":"TestA","Output":"panic: invalid character 'r' looking for beginning of value\n"}
{"Action":"fail","Test":"TestA"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"TestA: invalid character 'r' looking for beginning of value"}; !slices.Equal(rep.Panics, want) {
		t.Errorf("Panics = %q, want %q", rep.Panics, want)
	}
	base, _ := ParseReport(strings.NewReader(`{"Action":"pass","Test":"TestA"}
{"Action":"pass","Test":"TestA/case"}
{"Action":"pass","Test":"TestA/later"}
{"Action":"pass","Test":"TestB"}
`))
	if m := rep.Missing(base); !slices.Equal(m, []string{"TestA/later"}) {
		t.Errorf("Missing = %q, want [TestA/later]", m)
	}
	if m := rep.MissingTop(base); !slices.Equal(m, []string{"TestB"}) {
		t.Errorf("MissingTop = %q, want [TestB]", m)
	}
}
