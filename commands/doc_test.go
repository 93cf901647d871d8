package commands_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFamiliesDoNotTouchHTTP checks the boundary between the command
// families (this package) and the wire framework (package rpc): no
// non-test file here imports an HTTP package, so a command handler can
// reach HTTP only through rpc's Request and Emitter, whose HTTP state is
// unexported.
func TestFamiliesDoNotTouchHTTP(t *testing.T) {
	banned := []string{"net/http", "net/url", "mime/multipart", "github.com/valyala/fasthttp"}
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
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
				if path == b || strings.HasPrefix(path, b+"/") {
					t.Errorf("%s imports %s: HTTP belongs in rpc/", p, path)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d files", checked)
	}
}
