package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"strings"
	"testing"

	shell "github.com/ipfs/go-ipfs-api"
)

// Ensure go-ipfs-api's files (MFS) calls work against the daemon: mkdir,
// write, read, ls, stat, cp, mv, rm, flush and chcid.
func TestIpfsAPI_Files(t *testing.T) {
	d := startDaemon(t, "test")
	sh := shell.NewShell(strings.TrimPrefix(d.url, "http://"))
	ctx := context.Background()

	if err := sh.FilesMkdir(ctx, "/docs/sub", shell.FilesMkdir.Parents(true)); err != nil {
		t.Fatalf("mkdir -p: %v", err)
	}
	if err := sh.FilesMkdir(ctx, "/docs"); err == nil || !strings.Contains(err.Error(), "file already exists") {
		t.Fatalf("mkdir existing: %v", err)
	}

	big := make([]byte, 500<<10)
	rand.Read(big)
	if err := sh.FilesWrite(ctx, "/docs/big.bin", bytes.NewReader(big), shell.FilesWrite.Create(true)); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := sh.FilesWrite(ctx, "/new/dir/hello.txt", strings.NewReader("hello world"),
		shell.FilesWrite.Create(true), shell.FilesWrite.Parents(true)); err != nil {
		t.Fatalf("write -p: %v", err)
	}
	if err := sh.FilesWrite(ctx, "/new/dir/hello.txt", strings.NewReader("WORLD"), shell.FilesWrite.Offset(6)); err != nil {
		t.Fatalf("write at offset: %v", err)
	}
	if err := sh.FilesWrite(ctx, "/missing", strings.NewReader("x")); err == nil || !strings.Contains(err.Error(), "file does not exist") {
		t.Fatalf("write without create: %v", err)
	}

	read := func(p string, opts ...shell.FilesOpt) []byte {
		t.Helper()
		rc, err := sh.FilesRead(ctx, p, opts...)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		return b
	}
	if got := read("/docs/big.bin"); !bytes.Equal(got, big) {
		t.Fatalf("read big: %d bytes differ", len(got))
	}
	if got := read("/new/dir/hello.txt"); string(got) != "hello WORLD" {
		t.Fatalf("read hello: %q", got)
	}
	if got := read("/docs/big.bin", shell.FilesRead.Offset(300000), shell.FilesRead.Count(10)); !bytes.Equal(got, big[300000:300010]) {
		t.Fatalf("read range: %x", got)
	}
	if _, err := sh.FilesRead(ctx, "/docs/a/../b"); err == nil || !strings.Contains(err.Error(), `".." is not allowed`) {
		t.Fatalf("read with ..: %v", err)
	}

	entries, err := sh.FilesLs(ctx, "/docs", shell.FilesLs.Stat(true))
	if err != nil {
		t.Fatalf("ls: %v", err)
	}
	if len(entries) != 2 || entries[0].Name != "big.bin" || entries[0].Type != 0 || entries[0].Size != uint64(len(big)) ||
		entries[1].Name != "sub" || entries[1].Type != 1 || entries[1].Hash == "" {
		t.Fatalf("ls -l /docs: %+v %+v", entries[0], entries[1])
	}
	st, err := sh.FilesStat(ctx, "/docs/big.bin")
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if st.Type != "file" || st.Size != uint64(len(big)) || st.Hash != entries[0].Hash || st.CumulativeSize < st.Size {
		t.Fatalf("stat: %+v", st)
	}
	st, err = sh.FilesStat(ctx, "/", shell.FilesStat.WithLocal(true))
	if err != nil || st.Type != "directory" || !st.WithLocality || !st.Local || st.SizeLocal != st.CumulativeSize {
		t.Fatalf("stat / --with-local: %+v %v", st, err)
	}

	// cp from an /ipfs/ path and within MFS, mv, rm.
	c, err := sh.Add(strings.NewReader("added\n"), shell.Pin(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.FilesCp(ctx, "/ipfs/"+c, "/docs/added.txt"); err != nil {
		t.Fatalf("cp /ipfs: %v", err)
	}
	if err := sh.FilesCp(ctx, "/docs/added.txt", "/copy.txt"); err != nil {
		t.Fatalf("cp mfs: %v", err)
	}
	if got := read("/copy.txt"); string(got) != "added\n" {
		t.Fatalf("read copy: %q", got)
	}
	if err := sh.FilesMv(ctx, "/copy.txt", "/docs/sub/moved.txt"); err != nil {
		t.Fatalf("mv: %v", err)
	}
	if got := read("/docs/sub/moved.txt"); string(got) != "added\n" {
		t.Fatalf("read moved: %q", got)
	}
	if _, err := sh.FilesStat(ctx, "/copy.txt"); err == nil {
		t.Fatal("mv left the source")
	}
	if err := sh.FilesRm(ctx, "/docs/sub/moved.txt", false); err != nil {
		t.Fatalf("rm: %v", err)
	}
	// As with Kubo: the path's error is a line of the answer, the error
	// go-ipfs-api returns is the trailer's.
	if err := sh.FilesRm(ctx, "/new", false); err == nil || !strings.Contains(err.Error(), "can't remove some files") {
		t.Fatalf("rm dir without force: %v", err)
	}
	if err := sh.FilesRm(ctx, "/new", true); err != nil {
		t.Fatalf("rm --force dir: %v", err)
	}
	if err := sh.FilesChcid(ctx, "/docs", shell.FilesChcid.CidVersion(1)); err != nil {
		t.Fatalf("chcid: %v", err)
	}
	root, err := sh.FilesFlush(ctx, "/")
	if err != nil {
		t.Fatalf("flush: %v", err)
	}
	st, err = sh.FilesStat(ctx, "/")
	if err != nil || st.Hash != root {
		t.Fatalf("flush %s, stat / %+v %v", root, st, err)
	}
	entries, err = sh.FilesLs(ctx, "/")
	if err != nil || len(entries) != 1 || entries[0].Name != "docs" {
		t.Fatalf("ls / at the end: %+v %v", entries, err)
	}
	if st, err := sh.FilesStat(ctx, "/docs"); err != nil || !strings.HasPrefix(st.Hash, "bafy") {
		t.Fatalf("/docs after chcid: %+v %v", st, err)
	}
}
