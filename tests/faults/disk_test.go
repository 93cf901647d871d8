//go:build faults

// disk_test.go: the disk fills up during an add, a commit and a GC.

package faults

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"cairn/storage"
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
	spare := d.call("block/put", nil, nil, random(4096))
	if spare.errText() != "" {
		t.Fatalf("block/put: %s", spare.errText())
	}
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
	// A write that only removes (block/rm) clears the fault once the
	// disk has room.
	if a := d.call("block/rm", []string{spare.key(t)}, nil, nil); a.errText() != "" {
		t.Fatalf("block/rm after space was freed: %s", a.errText())
	}
	d.wantFault(false)
	if a := d.call("pin/add", []string{looseCid}, nil, nil); a.errText() != "" {
		t.Fatalf("pin/add after space was freed: %s", a.errText())
	}
	if a := d.call("files/mkdir", []string{"/again"}, nil, nil); a.errText() != "" {
		t.Fatalf("files/mkdir after space was freed: %s", a.errText())
	}
	d.wantCat(c, kept)
	d.wantVerified()
}

// Ensure a GC on a full disk removes what no pin holds and gives its
// space back, from older segments too (as holes, where Reclaim cannot
// copy live blocks out), so that adds work again while the disk's filler
// is still there; the pinned file reads whole and the store checks
// clean, and a GC once space is freed works.
// GC on a full disk of 64,000 blocks of 256 bytes, in batches of 1024
// against an index of 96,000 entries, with a reserve of 256 KiB: the
// deletes go through, the kept file reads whole, and adds work once
// space is freed.
func TestDiskFull_GC_ManySmallBlocks(t *testing.T) {
	fs := mountLoop(t, 96)
	d := startDaemonWith(t, fs.Dir, &storage.Options{ReserveBytes: 256 << 10})
	small := url.Values{"quiet": {"true"}, "chunker": {"size-256"}, "raw-leaves": {"true"}}
	addSmall := func(data []byte) string {
		a := d.call("add", nil, small, data)
		lines := strings.Split(strings.TrimSpace(a.body), "\n")
		var ev struct{ Hash string }
		if a.errText() != "" || json.Unmarshal([]byte(lines[len(lines)-1]), &ev) != nil || ev.Hash == "" {
			t.Fatalf("add: %q %s", a.errText(), a.body)
		}
		return ev.Hash
	}
	keep := random(8 << 20)
	kept := addSmall(keep)
	loose := addSmall(random(16 << 20))
	free := fs.fill(t)
	_, e := d.add(random(300 << 10))
	wantNoSpace(t, "add of 300 KiB", e)
	if a := d.call("pin/rm", []string{loose}, nil, nil); a.errText() != "" {
		t.Fatalf("pin/rm on a full disk: %s", a.errText())
	}
	if e := d.call("repo/gc", nil, nil, nil).errText(); e != "" {
		t.Fatalf("repo gc of 16,000 small blocks on a full disk: %s", e)
	}
	if a := d.call("block/stat", []string{loose}, url.Values{"offline": {"true"}}, nil); a.errText() == "" {
		t.Fatalf("the removed file's root is still stored: %s", a.body)
	}
	d.wantUp()
	d.wantCat(kept, keep)
	d.wantVerified()
	free()
	again := random(1 << 20)
	d.wantCat(d.mustAdd(again), again)
	d.wantFault(false)
}

func TestDiskFull_GC(t *testing.T) {
	fs := mountLoop(t, 48)
	// Small segments, each holding live and removed blocks, less than
	// half removed: Reclaim would copy none out.
	d := startDaemonWith(t, fs.Dir, &storage.Options{SegmentBytes: 2 << 20})
	type file struct {
		cid  string
		data []byte
	}
	var kept []file
	var loose []string
	for i := 0; i < 8; i++ {
		k := random(5 << 18) // 1.25 MiB: no segment is half garbage
		kept = append(kept, file{d.mustAdd(k), k})
		loose = append(loose, d.mustAdd(random(1<<20)))
	}
	free := fs.fill(t)
	_, e := d.add(random(300 << 10))
	wantNoSpace(t, "add of 300 KiB", e)
	d.wantFault(true)
	for _, l := range loose {
		if a := d.call("pin/rm", []string{l}, nil, nil); a.errText() != "" {
			t.Fatalf("pin/rm on a full disk: %s", a.errText())
		}
	}
	before := fs.avail(t)
	if e := d.call("repo/gc", nil, nil, nil).errText(); e != "" {
		t.Fatalf("repo gc on a full disk: %s", e)
	}
	after := fs.avail(t)
	t.Logf("repo gc on a full disk: %d KiB free before, %d KiB after", before>>10, after>>10)
	if after-before < 7<<20 {
		t.Fatalf("repo gc on a full disk gave back %d KiB, want the 8 MiB it removed (7 MiB at least)", (after-before)>>10)
	}
	d.wantUp()
	for _, f := range kept {
		d.wantCat(f.cid, f.data)
	}
	again := random(3 << 20)
	d.wantCat(d.mustAdd(again), again)
	d.wantFault(false)
	d.wantVerified()
	free()
	if a := d.call("repo/gc", nil, nil, nil); a.errText() != "" {
		t.Fatalf("repo gc after space was freed: %s", a.errText())
	}
	for _, f := range kept {
		d.wantCat(f.cid, f.data)
	}
	d.wantVerified()
}
