package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/storage"
)

// Ensure repo migrate brings a schema-1 block store to the current schema
// (its blocks then read back), says so when there is nothing to do, and
// refuses a downgrade and an unknown target with Kubo's texts where Kubo
// has one.
func TestCLI_RepoMigrate(t *testing.T) {
	repo := initRepo(t)
	path := filepath.Join(repo, storage.FileName)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(storage.SegmentDir(path)); err != nil {
		t.Fatal(err)
	}
	blks := testutil.WriteSchema1Store(t, path, 20, map[string]string{"/local/x": "y"})
	out, errs, code := cli(t, repo, nil, "repo", "migrate")
	v := storage.SchemaVersion
	want := fmt.Sprintf("Migrating repository from version 1 to %d...\nRepository successfully migrated to version %d.\n", v, v)
	if code != 0 || out != want {
		t.Fatalf("repo migrate: %d %q %q", code, out, errs)
	}
	if v, err := storage.Schema(path); err != nil || v != storage.SchemaVersion {
		t.Fatalf("schema after migrate: %d %v", v, err)
	}
	if out, errs, code := cli(t, repo, nil, "block", "get", blks[7].Cid().String()); code != 0 || out != string(blks[7].RawData()) {
		t.Fatalf("block get after migrate: %d %q", code, errs)
	}
	if out, _, code := cli(t, repo, nil, "repo", "migrate"); code != 0 || out != fmt.Sprintf("Repository is already at version %d.\n", v) {
		t.Fatalf("second migrate: %d %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--to=2"}, fmt.Sprintf("downgrade from version %d to 2 requires --allow-downgrade flag", v)},
		{[]string{"--to=2", "--allow-downgrade"}, fmt.Sprintf("cairn cannot downgrade its block store from version %d to 2", v)},
		{[]string{fmt.Sprintf("--to=%d", v+1)}, fmt.Sprintf("migrates the block store to version %d only, not %d", v, v+1)},
	} {
		_, errs, code := cli(t, repo, nil, append([]string{"repo", "migrate"}, tc.args...)...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("repo migrate %v: %d %q, want %q", tc.args, code, errs, tc.want)
		}
	}
}
