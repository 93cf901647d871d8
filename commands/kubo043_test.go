package commands_test

import (
	"regexp"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/p2p"

	dshelp "github.com/ipfs/boxo/datastore/dshelp"
	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
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
	// Offline nothing is queued: 0, as Kubo answers.
	if got := *mustCall(t, off, "provide/clear", nil, nil, nil).Values[0].(*int); got != 0 {
		t.Fatalf("provide/clear offline: %d", got)
	}

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

// Ensure diag datastore reads and counts the repo with Kubo's key shapes:
// /blocks/<base32 multihash> are the stored blocks, other keys the
// datastore; put writes the datastore and refuses block keys.
func TestDiagDatastore(t *testing.T) {
	n := testutil.MustOpenNode(t)
	c := cid.MustParse(blkPut(t, n, []byte("diag datastore block"), nil))
	key := "/blocks/" + dshelp.MultihashToDsKey(c.Hash()).String()[1:]
	g := mustCall(t, n, "diag/datastore/get", []string{key}, nil, nil).Values[0].(*commands.DiagDatastoreGet)
	if string(g.Value) != "diag datastore block" || g.HexDump != "" || g.Key != key {
		t.Fatalf("get %s: %+v", key, g)
	}
	res := mustCall(t, n, "diag/datastore/get", []string{key}, map[string]string{"hex": "true"}, nil)
	if got := renderText(t, "diag/datastore/get", nil, res); !strings.HasPrefix(got, "Key: "+key+"\nHex Dump:\n00000000  64 69 61 67") {
		t.Errorf("get --hex text: %q", got)
	}
	wantErr(t, callErr(t, n, "diag/datastore/get", []string{"/test/none"}, nil, nil), "key not found: /test/none")
	wantErr(t, callErr(t, n, "diag/datastore/get", []string{"/blocks/CIQNOTAKEY"}, nil, nil), "key not found: /blocks/CIQNOTAKEY")

	mustCall(t, n, "diag/datastore/put", []string{"/test/mykey", "hello"}, nil, nil)
	if g := mustCall(t, n, "diag/datastore/get", []string{"/test/mykey"}, nil, nil).Values[0].(*commands.DiagDatastoreGet); string(g.Value) != "hello" {
		t.Fatalf("get after put: %q", g.Value)
	}
	wantErr(t, callErr(t, n, "diag/datastore/put", []string{key, "x"}, nil, nil), "failed to put key: blocks are written with 'cairn block put'")

	count := func(prefix string) int64 {
		t.Helper()
		return mustCall(t, n, "diag/datastore/count", []string{prefix}, nil, nil).Values[0].(*commands.DiagDatastoreCount).Count
	}
	st, err := n.Store.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if got := count("/test/"); got != 1 {
		t.Errorf("count /test/: %d", got)
	}
	if got := count("/blocks/"); got != int64(st.NumBlocks) || got < 1 {
		t.Errorf("count /blocks/: %d, store holds %d", got, st.NumBlocks)
	}
	if got := count(key[:len(key)-2]); got < 1 {
		t.Errorf("count of the block key's prefix: %d", got)
	}
	if got := count("/"); got <= int64(st.NumBlocks) {
		t.Errorf("count /: %d, not above the %d blocks", got, st.NumBlocks)
	}
	for _, p := range []string{"diag/datastore/get", "diag/datastore/put", "diag/datastore/count"} {
		if !commands.DefaultTable.Find(p).NoRemote {
			t.Errorf("%s is served over HTTP", p)
		}
	}
}

// Ensure swarm resources reports the resource manager's limits (those of
// the memory budget) beside its usage: a connection to another node shows
// in the system scope and under that peer.
func TestSwarmResources(t *testing.T) {
	off := testutil.MustOpenNode(t)
	wantErr(t, callErr(t, off, "swarm/resources", nil, nil, nil), p2p.ErrNoResourceMgr.Error())
	a := testutil.MustOnlineNode(t, "none", nil)
	b := testutil.MustOnlineNode(t, "none", nil)
	mustCall(t, a, "swarm/connect", []string{testutil.P2PAddr(t, b)}, nil, nil)
	res := mustCall(t, a, "swarm/resources", nil, nil, nil)
	u := res.Values[0].(*p2p.ResourceUsage)
	if int64(u.System.Memory) != a.Net.Limits.LibP2PMemory || int(u.System.ConnsInbound) != a.Net.Limits.ConnsInbound {
		t.Fatalf("system limits %+v, want the budget's %+v", u.System, a.Net.Limits)
	}
	if u.System.ConnsUsage < 1 || u.System.ConnsOutboundUsage < 1 {
		t.Fatalf("system usage without the connection to B: %+v", u.System)
	}
	if p, ok := u.Peers[b.PeerID.String()]; !ok || p.ConnsUsage < 1 {
		t.Fatalf("peer scope of B: %+v (peers %d)", p, len(u.Peers))
	}
	text := renderText(t, "swarm/resources", nil, res)
	if !regexp.MustCompile(`^Scope\t+Limit Name\t+Limit Value\t+Limit Usage Amount\t+Limit Usage Percent\t\n`).MatchString(text) ||
		!regexp.MustCompile(`(?m)^system\t+Memory\t+\d+\t+\d+\t+[0-9.]+%\t`).MatchString(text) || !strings.Contains(text, "\npeer:"+b.PeerID.String()+"\t") {
		t.Errorf("swarm resources text:\n%.600s", text)
	}
}
