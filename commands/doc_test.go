package commands_test

import (
	"testing"

	"cairn/internal/importcheck"
)

// TestFamiliesDoNotTouchHTTP checks the boundary between the command
// families (this package) and the wire framework (package rpc): no
// non-test file here imports an HTTP package, so a command handler can
// reach HTTP only through rpc's Request and Emitter, whose HTTP state is
// unexported.
func TestFamiliesDoNotTouchHTTP(t *testing.T) {
	banned := []string{"net/http", "net/url", "mime/multipart", "github.com/valyala/fasthttp"}
	files := importcheck.Imports(t, ".")
	for p, imports := range files {
		for _, path := range imports {
			for _, b := range banned {
				if importcheck.Under(path, b) {
					t.Errorf("%s imports %s: HTTP belongs in rpc/", p, path)
				}
			}
		}
	}
	if len(files) < 20 {
		t.Fatalf("checked only %d files", len(files))
	}
}
