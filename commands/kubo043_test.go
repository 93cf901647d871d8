package commands_test

import (
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/files"
)

const emptyDirCID = "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn"

// Ensure files chroot replaces the MFS root of a stopped repo with a
// stored directory (or the empty one), checks what it is given, and
// refuses once the MFS is in use.
func TestFilesChroot(t *testing.T) {
	n := testutil.MustOpenNode(t)
	dir := blkAdd(t, n, "d", files.NewMapDirectory(map[string]files.Node{"a.txt": files.NewBytesFile([]byte("a"))}), nil)
	file := lsKey(t, n, dir+"/a.txt")
	wantErr(t, callErr(t, n, "files/chroot", []string{dir}, nil, nil), "this is a potentially destructive operation; pass --confirm to proceed")
	confirm := map[string]string{"confirm": "true"}
	wantErr(t, callErr(t, n, "files/chroot", []string{file}, confirm, nil), "new root must be a directory, got File")
	missing := "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"
	wantErr(t, callErr(t, n, "files/chroot", []string{missing}, confirm, nil),
		"new root "+missing+" does not exist locally; fetch it first with 'ipfs block get'")
	if err := callErr(t, n, "files/chroot", []string{"not-a-cid"}, confirm, nil); !strings.HasPrefix(err.Error(), `invalid CID "not-a-cid": `) {
		t.Errorf("bad CID: %v", err)
	}
	mustCall(t, n, "files/chroot", []string{dir}, confirm, nil)
	msg := mustCall(t, n, "files/chroot", nil, confirm, nil).Values[0].(*commands.MessageOutput).Message
	want := "MFS root changed from " + dir + " to " + emptyDirCID + "\nThe old root " + dir + " will be garbage collected unless pinned.\n"
	if msg != want {
		t.Fatalf("chroot to the empty directory: %q, want %q", msg, want)
	}
	mustCall(t, n, "files/chroot", []string{dir}, confirm, nil)
	if got := filesLsNames(t, n, "/"); len(got) != 1 || got[0] != "a.txt" {
		t.Fatalf("files ls / after chroot: %v", got)
	}
	wantErr(t, callErr(t, n, "files/chroot", nil, confirm, nil), "the MFS is in use: files chroot runs only while the daemon is stopped")
	if !commands.DefaultTable.Find("files/chroot").NoRemote {
		t.Error("files/chroot is served over HTTP")
	}
}

func filesLsNames(t *testing.T, n *node.Node, p string) []string {
	t.Helper()
	var names []string
	for _, v := range mustCall(t, n, "files/ls", []string{p}, nil, nil).Values {
		for _, e := range v.(*commands.FilesLsOutput).Entries {
			names = append(names, e.Name)
		}
	}
	return names
}

// Ensure diag healthy answers ok while the store reads and writes: the
// empty directory it probes is stored again when it was removed.
func TestDiagHealthy(t *testing.T) {
	n := testutil.MustOpenNode(t)
	res := mustCall(t, n, "diag/healthy", nil, nil, nil)
	if got := *res.Values[0].(*string); got != "ok" {
		t.Fatalf("diag/healthy: %q", got)
	}
	if got := renderText(t, "diag/healthy", nil, res); got != "ok" {
		t.Errorf("diag/healthy text: %q", got)
	}
	mustCall(t, n, "block/rm", []string{emptyDirCID}, nil, nil)
	if got := *mustCall(t, n, "diag/healthy", nil, nil, nil).Values[0].(*string); got != "ok" {
		t.Fatalf("diag/healthy after the probe block was removed: %q", got)
	}
	mustCall(t, n, "block/stat", []string{emptyDirCID}, nil, nil)
	n.Close()
	if err := callErr(t, n, "diag/healthy", nil, nil, nil); !strings.HasPrefix(err.Error(), "probe ") {
		t.Fatalf("diag/healthy on a closed store: %v", err)
	}
}

// Ensure provide once queues each block of a DAG once (arguments and the
// walk deduplicated), provide clear empties the queue, stats reprovide
// answers as provide stat, and the refusals carry Kubo's texts.
func TestProvideOnceAndClear(t *testing.T) {
	off := testutil.MustOpenNode(t)
	wantErr(t, callErr(t, off, "provide/once", []string{emptyDirCID}, nil, nil), node.ErrOffline.Error())
	wantErr(t, callErr(t, off, "provide/clear", nil, nil, nil), node.ErrOffline.Error())

	none := testutil.MustOnlineNode(t, "none", nil)
	wantErr(t, callErr(t, none, "provide/once", []string{emptyDirCID}, nil, nil), "cannot provide: Routing.Type is none")

	a := testutil.MustOnlineNode(t, "auto", nil)
	wantErr(t, callErr(t, a, "provide/once", []string{emptyDirCID}, nil, nil), "cannot provide: no connected peers")
	b := testutil.MustOnlineNode(t, "auto", nil)
	mustCall(t, a, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)

	root := blkAdd(t, a, "d", files.NewMapDirectory(map[string]files.Node{
		"x": files.NewBytesFile([]byte("provide once x")),
		"y": files.NewBytesFile([]byte("provide once y")),
	}), nil)
	missing := "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	wantErr(t, callErr(t, a, "provide/once", []string{missing}, nil, nil), "block "+missing+" not found locally, cannot provide")

	res := mustCall(t, a, "provide/once", []string{root, root}, map[string]string{"recursive": "true"}, nil)
	var queued []string
	for _, v := range res.Values {
		queued = append(queued, v.(*commands.ProvideOnceEvent).Queued)
	}
	if len(queued) != 3 || queued[0] != root {
		t.Fatalf("provide once -r of a two-file directory, given twice: %v", queued)
	}
	if got := renderText(t, "provide/once", nil, res); got != strings.Join(queued, "\n")+"\n" {
		t.Errorf("provide once text: %q", got)
	}
	res = mustCall(t, a, "provide/once", []string{root}, nil, nil)
	if len(res.Values) != 1 {
		t.Fatalf("provide once without -r: %d events", len(res.Values))
	}
	cl := mustCall(t, a, "provide/clear", nil, nil, nil)
	left := *cl.Values[0].(*int)
	if left < 0 || left > 4 {
		t.Fatalf("provide clear removed %d", left)
	}
	if got := renderText(t, "provide/clear", nil, cl); !strings.HasPrefix(got, "removed ") || !strings.HasSuffix(got, " items from provide queue\n") {
		t.Errorf("provide clear text: %q", got)
	}
	if got := mustCall(t, a, "provide/clear", nil, map[string]string{"quiet": "true"}, nil); len(got.Values) != 0 {
		t.Errorf("provide clear --quiet answered %v", got.Values)
	}
	if a.Net.ProvideStats().Queued != 0 {
		t.Error("the queue is not empty after provide clear")
	}
	ps := mustCall(t, a, "stats/reprovide", nil, nil, nil).Values[0].(*commands.ProvideStatOutput)
	if ps.Legacy == nil {
		t.Fatalf("stats/reprovide: %+v", ps)
	}
}
