package node_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportRules checks that imports run one way: node's sub-packages
// (one concept each) never import node itself, and nothing under node
// imports the RPC, the modules or the CLI. A sub-package is handed what it
// needs by node instead; sub-packages may use each other (p2p reads
// config's types).
func TestImportRules(t *testing.T) {
	upward := []string{"cairn/commands", "cairn/rpc", "cairn/httprpc", "cairn/modules", "cairn/cmd", "cairn/mount"}
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
		exact := map[string]bool{"cairn/node": true}
		paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				for _, b := range banned {
					if path == b || !exact[b] && strings.HasPrefix(path, b+"/") {
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
