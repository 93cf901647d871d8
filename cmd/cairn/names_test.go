package main

import (
	"strings"
	"testing"

	"cairn/internal/testutil"

	"github.com/ipfs/boxo/ipns"
)

// `cairn name publish --allow-delegated` without a daemon: the record
// goes to the publisher of Ipns.DelegatedPublishers and resolves locally;
// without a publisher the answer is Kubo's error.
func TestCLI_NamePublishDelegated(t *testing.T) {
	repo := initRepo(t)
	if _, errs, code := cli(t, repo, nil, "name", "publish", "--allow-delegated", "/ipfs/bafkqaaa"); code != 1 ||
		errs != "Error: no delegated publishers configured: add Ipns.DelegatedPublishers or use --allow-offline for local-only publishing\n" {
		t.Errorf("no publishers: code %d, %q", code, errs)
	}
	pub := testutil.NewIpnsPublisher(t, 0, false)
	if _, errs, code := cli(t, repo, nil, "config", "--json", "Ipns.DelegatedPublishers", `["`+pub.URL+`"]`); code != 0 {
		t.Fatalf("config: %s", errs)
	}
	out, errs, code := cli(t, repo, nil, "name", "publish", "--allow-delegated", "/ipfs/bafkqaaa")
	name, ok := strings.CutPrefix(strings.TrimSuffix(out, ": /ipfs/bafkqaaa\n"), "Published to ")
	if code != 0 || !ok {
		t.Fatalf("publish: code %d, %q, %q", code, out, errs)
	}
	n, err := ipns.NameFromString(name)
	if err != nil {
		t.Fatal(err)
	}
	// Sequence 0: init published nothing (Kubo 0.43).
	pub.CheckPut(t, 0, n, "/ipfs/bafkqaaa", 0)
	if out, errs, code := cli(t, repo, nil, "name", "resolve", name); code != 0 || out != "/ipfs/bafkqaaa\n" {
		t.Errorf("resolve: code %d, %q, %q", code, out, errs)
	}
}
