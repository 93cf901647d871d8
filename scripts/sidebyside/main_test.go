package main

import "testing"

// Ensure a "#! differs:" line marks the next request only, and that the
// marker needs its reason.
func TestParseCases_KnownDifferences(t *testing.T) {
	ks, err := parseCases("#! differs: the stores differ\nrepo/ls\nrepo/stat\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 || ks[0].known != "the stores differ" || ks[1].known != "" {
		t.Fatalf("cases %+v", ks)
	}
	if _, err := parseCases("#! differs:\nrepo/ls\n"); err == nil {
		t.Fatal("a marker without a reason was taken")
	}
}
