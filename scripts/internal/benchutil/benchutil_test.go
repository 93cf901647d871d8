package benchutil

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"testing"
)

// The body AddFile sends is one multipart part holding the file's bytes
// exactly, of the length it declares.
func TestFileBody_OnePartExactBytes(t *testing.T) {
	data := bytes.Repeat([]byte("cairn\r\n--not-a-boundary\r\n"), 40000)
	path := filepath.Join(t.TempDir(), "in.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	body, n, ctype, err := fileBody(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(raw)) != n {
		t.Fatalf("body is %d bytes, declared %d", len(raw), n)
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type %q: %v", ctype, err)
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	p, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if p.FormName() != "file" || p.FileName() != "in.bin" {
		t.Fatalf("part %q %q, want file in.bin", p.FormName(), p.FileName())
	}
	got, err := io.ReadAll(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("part holds %d bytes, want the file's %d", len(got), len(data))
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Fatalf("after the part: %v, want io.EOF", err)
	}
}
