//go:build faults

// ioerr_test.go: the card answers reads of a stored block with EIO.

package faults

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Ensure an I/O error on reading a block makes cat, GC and bitswap answer
// an error and go on: cat names the block, GC removes nothing pinned, a
// peer asking for the block gets nothing; the daemon stays up, serves its
// other files and logs which block; once the card reads again all is
// whole.
func TestIOError_ReadsAnswerAndGoOn(t *testing.T) {
	ffs := mountFaulty(t)
	d := startOnline(t, ffs.Dir)
	data, other := random(1<<20), random(300<<10)
	c, oc := d.mustAdd(data), d.mustAdd(other)
	d.addUnpinned(random(200 << 10))
	root, _ := cid.Decode(c)
	links, err := d.Node.UnixFS().Links(t.Context(), root)
	if err != nil || len(links) < 3 {
		t.Fatalf("links of %s: %v %v", c, links, err)
	}
	leaf := links[2].Cid
	file, off, n, err := d.Node.Store.BlockFile(leaf.Hash())
	if err != nil {
		t.Fatal(err)
	}
	stop := testutil.CaptureLog(t)
	ffs.failReads(filepath.Base(file), off, n)

	e := d.call("cat", []string{c}, nil, nil).errText()
	if !strings.Contains(e, leaf.String()) || !strings.Contains(e, "input/output error") {
		t.Fatalf("cat over an unreadable block: error %q, want one naming %s and the I/O error", e, leaf)
	}
	d.wantUp()
	d.wantCat(oc, other)

	gc := d.call("repo/gc", nil, nil, nil)
	if e := gc.errText(); !strings.Contains(e, leaf.String()) || !strings.Contains(e, "nothing was removed") {
		t.Fatalf("repo gc with an unreadable pinned block: error %q, want one naming %s, nothing removed", e, leaf)
	}
	d.wantUp()

	peerB := testutil.MustOnlineNode(t, "none", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := peerB.Net.Host.Connect(ctx, peer.AddrInfo{ID: d.Node.PeerID, Addrs: d.Node.Net.Host.Addrs()}); err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(ctx, 3*time.Second)
	defer cancel2()
	if err := peerB.UnixFS().WriteFile(short, root, 0, -1, io.Discard); err == nil {
		t.Fatal("a peer read the file while one of its blocks is unreadable here")
	}
	d.wantUp()
	otherRoot, _ := cid.Decode(oc)
	var buf strings.Builder
	if err := peerB.UnixFS().WriteFile(ctx, otherRoot, 0, -1, &buf); err != nil || buf.String() != string(other) {
		t.Fatalf("a peer reading the other file: %v", err)
	}

	logged := false
	for _, l := range stop() {
		if strings.Contains(fmt.Sprint(l["msg"]), leaf.String()) {
			logged = true
		}
	}
	if !logged {
		t.Fatalf("no log line names the unreadable block %s", leaf)
	}
	ffs.failReads(filepath.Base(file), 0, 0)
	d.wantCat(c, data)
	d.wantCat(oc, other)
	d.wantVerified()
}
