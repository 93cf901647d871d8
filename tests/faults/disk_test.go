//go:build faults

// disk_test.go: the disk fills up during an add, a commit and a GC.

package faults

import (
	"strings"
	"testing"
)

// noSpace is the text a client must see when the disk is full (as Kubo's
// flatfs answers it: the system's own words).
const noSpace = "no space left on device"

// withFile makes a 48 MiB file system, starts a daemon on it and adds a
// pinned file of size random bytes.
func withFile(t *testing.T, size int) (fs *loopFS, d *daemon, c string, kept []byte) {
	t.Helper()
	fs = mountLoop(t, 48)
	d = startDaemon(t, fs.Dir)
	kept = random(size)
	return fs, d, d.mustAdd(kept), kept
}

func wantNoSpace(t *testing.T, what, got string) {
	t.Helper()
	if !strings.Contains(got, noSpace) {
		t.Fatalf("%s on a full disk: error %q, want one saying %q", what, got, noSpace)
	}
}

// Ensure an add larger than the disk answers "no space left on device",
// keeps every block acknowledged before and leaves the store whole, and
// that adds work again once space is freed.
func TestDiskFull_Add(t *testing.T) {
	fs, d, c, kept := withFile(t, 2<<20)
	_, e := d.add(random(64 << 20))
	wantNoSpace(t, "add of 64 MiB", e)
	d.wantUp()
	d.wantCat(c, kept)
	d.wantVerified()

	free := fs.fill(t)
	_, e = d.add(random(300 << 10))
	wantNoSpace(t, "add of 300 KiB", e)
	d.wantUp()
	d.wantCat(c, kept)
	free()
	again := random(3 << 20)
	d.wantCat(d.mustAdd(again), again)
	d.wantFault(false)
	d.wantCat(c, kept)
	d.wantVerified()
}

// Ensure writes that only commit small records (a pin, an MFS directory,
// a block put) answer "no space left on device" on a full disk, change
// nothing, and work once space is freed.
func TestDiskFull_Commit(t *testing.T) {
	fs, d, c, kept := withFile(t, 1<<20)
	looseCid := d.addUnpinned(random(100 << 10))
	free := fs.fill(t)
	for _, w := range []struct {
		path string
		args []string
		body []byte
	}{
		{"pin/add", []string{looseCid}, nil},
		{"files/mkdir", []string{"/full"}, nil},
		{"block/put", nil, random(4096)},
	} {
		// A commit may fit in space the file system keeps for its own
		// metadata: repeat until the disk refuses.
		var e string
		for i := 0; i < 64 && e == ""; i++ {
			a := d.call(w.path, w.args, nil, w.body)
			e = a.errText()
			if e == "" && w.path == "files/mkdir" {
				w.args = []string{"/full" + strings.Repeat("x", i+1)}
			}
			if e == "" && w.path == "block/put" {
				w.body = random(4096)
			}
		}
		wantNoSpace(t, w.path, e)
		d.wantUp()
	}
	d.wantCat(c, kept)
	d.wantFault(true)
	free()
	if a := d.call("pin/add", []string{looseCid}, nil, nil); a.errText() != "" {
		t.Fatalf("pin/add after space was freed: %s", a.errText())
	}
	d.wantFault(false)
	if a := d.call("files/mkdir", []string{"/again"}, nil, nil); a.errText() != "" {
		t.Fatalf("files/mkdir after space was freed: %s", a.errText())
	}
	d.wantCat(c, kept)
	d.wantVerified()
}

// Ensure a GC on a full disk answers (done or an error), removes nothing
// pinned and leaves the store whole; a GC once space is freed works.
func TestDiskFull_GC(t *testing.T) {
	fs, d, c, kept := withFile(t, 2<<20)
	for i := 0; i < 8; i++ {
		d.addUnpinned(random(1 << 20))
	}
	free := fs.fill(t)
	a := d.call("repo/gc", nil, nil, nil)
	t.Logf("repo gc on a full disk: status %d, error %q", a.status, a.errText())
	if e := a.errText(); e != "" {
		wantNoSpace(t, "repo gc", e)
	}
	d.wantUp()
	d.wantCat(c, kept)
	d.wantRepoVerify()
	free()
	if a := d.call("repo/gc", nil, nil, nil); a.errText() != "" {
		t.Fatalf("repo gc after space was freed: %s", a.errText())
	}
	d.wantCat(c, kept)
	d.wantVerified()
}
