package node_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/importcheck"
)

// TestImportRules checks that imports run one way: node's sub-packages
// (one concept each) never import node itself, and nothing under node
// imports the RPC, the modules or the CLI. A sub-package is handed what it
// needs by node instead; sub-packages may use each other (p2p reads
// config's types).
func TestImportRules(t *testing.T) {
	upward := []string{"cairn/commands", "cairn/rpc", "cairn/modules", "cairn/cmd", "cairn/mount"}
	dirs := []string{"."}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" {
			dirs = append(dirs, e.Name())
		}
	}
	checked := 0
	for _, dir := range dirs {
		banned := upward
		if dir != "." {
			banned = append([]string{"cairn/node"}, upward...)
		}
		files := importcheck.Imports(t, dir)
		checked += len(files)
		for p, imports := range files {
			for _, path := range imports {
				for _, b := range banned {
					if path == b || b != "cairn/node" && importcheck.Under(path, b) {
						t.Errorf("%s imports %s", p, path)
					}
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d files", checked)
	}
}

// TestDocMapsEveryFile checks that the doc.go of node and of each of its
// sub-packages names every non-test file of its package, so that the map
// a newcomer reads first is whole.
func TestDocMapsEveryFile(t *testing.T) {
	dirs := []string{"."}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" && e.Name() != "initdoc" {
			dirs = append(dirs, e.Name())
		}
	}
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := os.ReadFile(filepath.Join(dir, "doc.go"))
		if err != nil {
			if len(paths) == 1 {
				continue // a one-file package documents itself
			}
			t.Fatalf("%s: %v", dir, err)
		}
		for _, p := range paths {
			name := filepath.Base(p)
			if strings.HasSuffix(name, "_test.go") || name == "doc.go" {
				continue
			}
			if !strings.Contains(string(doc), name) {
				t.Errorf("%s/doc.go does not name %s", dir, name)
			}
		}
	}
}
