// Package importcheck reads the imports of a package's files, for the
// tests that hold the import rules (node's sub-packages never import
// node; the command families never import HTTP).
package importcheck

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Imports returns the import paths of each non-test Go file in dir.
func Imports(t testing.TB, dir string) map[string][]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = []string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			out[p] = append(out[p], path)
		}
	}
	return out
}

// Under reports whether path is pkg or a package under it.
func Under(path, pkg string) bool {
	return path == pkg || strings.HasPrefix(path, pkg+"/")
}
