//go:build fleet

// fleet_test.go: the fleet's checks, in order, on one fleet of three
// cairn daemons and their cluster peers (docs/fleet.md, "The fleet test",
// lists them).

package fleet

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/internal/daemon"
)

func urlValues(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func randomFile(t *testing.T, dir, name string, n int) string {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// cli runs the cairn CLI against a daemon (through its repo's api file).
func cli(t *testing.T, d *daemon.Daemon, args ...string) string {
	t.Helper()
	out, err := d.CLI(args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// addLocal adds a path to one cairn only, unpinned, and returns its CID.
func addLocal(t *testing.T, d *daemon.Daemon, path string) string {
	t.Helper()
	return cli(t, d, "add", "-r", "-Q", "--pin=false", path)
}

// pinnedOn reports whether c is pinned recursively on d.
func pinnedOn(d *daemon.Daemon, c string) bool {
	_, err := d.Post("pin/ls", urlValues("arg", c, "type", "recursive"), nil, "")
	return err == nil
}

// storedOn reports whether d holds the block c (without asking peers).
func storedOn(d *daemon.Daemon, c string) bool {
	_, err := d.Post("block/stat", urlValues("arg", c, "offline", "true"), nil, "")
	return err == nil
}

func TestFleet(t *testing.T) {
	start := time.Now()
	f := startFleet(t)
	t.Logf("fleet up in %v", time.Since(start).Round(time.Millisecond))
	p0 := f.peers[0]
	dir := t.TempDir()
	step := func(name string, fn func(t *testing.T)) {
		s := time.Now()
		if !t.Run(name, fn) {
			t.FailNow()
		}
		t.Logf("%s: %v", name, time.Since(s).Round(time.Millisecond))
	}

	// ipfs-cluster-ctl add: the cluster's adder streams the blocks into
	// cairn (block/put) and pins on every peer; the CID is cairn's own.
	var added string
	step("CtlAddPinnedEverywhere", func(t *testing.T) {
		path := randomFile(t, dir, "ctl-add.bin", 32<<20)
		var outs []struct {
			Name string `json:"name"`
			Cid  string `json:"cid"`
		}
		if err := p0.ctlJSONLines(&outs, "add", path); err != nil {
			t.Fatal(err)
		}
		if len(outs) == 0 {
			t.Fatal("ipfs-cluster-ctl add printed nothing")
		}
		added = outs[len(outs)-1].Cid
		if want := cli(t, f.cairns[1], "add", "-Q", "--only-hash", path); added != want {
			t.Fatalf("cluster added %s, cairn computes %s", added, want)
		}
		waitStatus(t, p0, added, "pinned on every peer", allPinned)
		for i, c := range f.cairns {
			if !pinnedOn(c, added) {
				t.Fatalf("cairn%d does not pin %s", i, added)
			}
		}
	})

	// pin add --replication 2 of a CID only cairn2 holds: the two peers
	// it is allocated to fetch it over bitswap.
	step("Replication2FetchedOverBitswap", func(t *testing.T) {
		c := addLocal(t, f.cairns[2], randomFile(t, dir, "rep2.bin", 600<<10))
		if storedOn(f.cairns[0], c) || storedOn(f.cairns[1], c) {
			t.Fatal("cairn0 or cairn1 already holds the new block")
		}
		if _, err := p0.ctl("pin", "add", "--replication", "2", "--allocations", f.peers[0].ID+","+f.peers[1].ID, c); err != nil {
			t.Fatal(err)
		}
		st := waitStatus(t, p0, c, "pinned on two peers", func(st map[string]string) bool { return count(st, "pinned") == 2 })
		if st["peer0"] != "pinned" || st["peer1"] != "pinned" || st["peer2"] == "pinned" {
			t.Fatalf("status %v, want pinned on peer0 and peer1 only", st)
		}
		if !pinnedOn(f.cairns[0], c) || !pinnedOn(f.cairns[1], c) || pinnedOn(f.cairns[2], c) {
			t.Fatal("cairn pins do not follow the allocations")
		}
	})

	// pin update: the new DAG pinned where the old one is, through
	// cairn's pin/update (unpin=false), sharing the unchanged blocks.
	var from, to string
	step("PinUpdate", func(t *testing.T) {
		tree := filepath.Join(dir, "tree")
		randomFile(t, tree, "big.bin", 500<<10)
		randomFile(t, tree, "small.txt", 100)
		from = addLocal(t, f.cairns[0], tree)
		if _, err := p0.ctl("pin", "add", from); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, p0, from, "the old tree pinned everywhere", allPinned)
		randomFile(t, tree, "small.txt", 120)
		to = addLocal(t, f.cairns[0], tree)
		if _, err := p0.ctl("pin", "update", from, to); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, p0, to, "the new tree pinned everywhere", allPinned)
		for i, c := range f.cairns {
			if !pinnedOn(c, to) || !pinnedOn(c, from) {
				t.Fatalf("cairn%d: new pin %v, old pin %v (cluster keeps both)", i, pinnedOn(c, to), pinnedOn(c, from))
			}
		}
	})

	// pin rm, then ipfs gc through the cluster: the blocks are gone
	// from every cairn.
	step("PinRmThenGCFreesBlocks", func(t *testing.T) {
		if _, err := p0.ctl("pin", "rm", added); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, "every cairn to unpin "+added, func() bool {
			for _, c := range f.cairns {
				if pinnedOn(c, added) {
					return false
				}
			}
			return true
		})
		var gc []struct {
			PeerMap map[string]struct {
				Peername string `json:"peername"`
				Error    string `json:"error"`
			} `json:"peer_map"`
		}
		if err := p0.ctlJSONLines(&gc, "ipfs", "gc"); err != nil {
			t.Fatal(err)
		}
		if len(gc) != 1 || len(gc[0].PeerMap) != len(f.cairns) {
			t.Fatalf("ipfs gc answered %+v", gc)
		}
		for _, r := range gc[0].PeerMap {
			if r.Error != "" {
				t.Fatalf("ipfs gc on %s: %s", r.Peername, r.Error)
			}
		}
		for i, c := range f.cairns {
			if storedOn(c, added) {
				t.Fatalf("cairn%d still holds %s after gc", i, added)
			}
			if !storedOn(c, to) {
				t.Fatalf("cairn%d lost the pinned %s in gc", i, to)
			}
		}
	})

	// A killed cairn shows as an error in status; pins made while it
	// was down come back on it with recover after its restart.
	step("KilledCairnThenRecover", func(t *testing.T) {
		f.cairns[1].Kill()
		st := waitStatus(t, p0, to, "an error on peer1", func(st map[string]string) bool {
			return strings.Contains(st["peer1"], "error")
		})
		t.Logf("status with cairn1 down: %v", st)
		c := addLocal(t, f.cairns[0], randomFile(t, dir, "while-down.bin", 300<<10))
		if _, err := p0.ctl("pin", "add", c); err != nil {
			t.Fatal(err)
		}
		st = waitStatus(t, p0, c, "pinned on peer0 and peer2, an error on peer1", func(st map[string]string) bool {
			return st["peer0"] == "pinned" && st["peer2"] == "pinned" && strings.Contains(st["peer1"], "error")
		})
		t.Logf("status of a pin made while cairn1 is down: %v", st)
		if err := f.cairns[1].Restart(f.opts[1]); err != nil {
			t.Fatal(err)
		}
		f.mem.add(cairnMemName(1), f.cairns[1].Pid())
		if _, err := f.peers[1].ctl("recover"); err != nil {
			t.Fatal(err)
		}
		for _, x := range []string{c, to, from} {
			waitStatus(t, p0, x, "pinned everywhere after recover", allPinned)
		}
		if !pinnedOn(f.cairns[1], c) {
			t.Fatalf("cairn1 does not pin %s after recover", c)
		}
	})

	// cairn's pin/remote against the cluster's Pinning Service API.
	step("PinRemoteAgainstPinsvcapi", func(t *testing.T) { pinRemoteAgainstCluster(t, f, dir, to) })

	// The cluster's IPFS proxy in front of cairn: the cairn CLI adds
	// through it and the add is pinned by the cluster.
	step("CLIThroughIPFSProxy", func(t *testing.T) {
		path := randomFile(t, dir, "proxy.bin", 100<<10)
		proxy := tcp(p0.Proxy)
		out := cli(t, f.cairns[0], "--api", proxy, "add", "-Q", path)
		waitStatus(t, p0, out, "the proxy's add pinned everywhere", allPinned)
		ls := cli(t, f.cairns[0], "--api", proxy, "pin", "ls", "--type=recursive")
		if !strings.Contains(ls, out) {
			t.Fatalf("pin ls through the proxy does not list %s: %s", out, ls)
		}
	})

	// Pin by path: the cluster resolves /ipfs/<dir>/sub with cairn's
	// resolve.
	step("PinByPath", func(t *testing.T) {
		root := filepath.Join(dir, "pathroot")
		randomFile(t, root, "sub/leaf.bin", 50<<10)
		randomFile(t, root, "other.txt", 10)
		top := addLocal(t, f.cairns[0], root)
		sub := cli(t, f.cairns[0], "resolve", "/ipfs/"+top+"/sub")
		sub = strings.TrimPrefix(sub, "/ipfs/")
		if _, err := p0.ctl("pin", "add", "/ipfs/"+top+"/sub"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, p0, sub, "the sub directory pinned everywhere", allPinned)
		if pinnedOn(f.cairns[2], top) || !pinnedOn(f.cairns[2], sub) {
			t.Fatal("cairn2 pins the root instead of the path's node")
		}
	})

	// The connector's complaints: only those of the killed cairn's
	// downtime and the cluster's own cancelled origin connects are
	// expected.
	for _, p := range f.peers {
		for _, l := range strings.Split(p.log(), "\n") {
			if !strings.Contains(l, "\tERROR\t") && !strings.Contains(l, "\tWARN\t") {
				continue
			}
			t.Logf("%s: %s", p.Name, l)
			if (strings.Contains(l, "\tipfshttp\t") || strings.Contains(l, "\tpintracker\t")) && !expectedComplaint(l) {
				t.Errorf("%s's IPFS connector complains: %s", p.Name, l)
			}
		}
	}
	f.mem.stop()
	t.Logf("memory (%s; board profiles and GOMEMLIMIT as named):\n%s", "sampled every 250 ms during the test", f.mem.report())
	t.Logf("fleet test took %v", time.Since(start).Round(time.Second))
}

// expectedComplaint reports whether a connector's ERROR line is one the
// fleet causes without any fault of cairn's:
//   - "connect: connection refused": the killed cairn's downtime;
//   - "context canceled" of a swarm/connect post: the cluster's own race.
//     ipfshttp's Pin (ipfs-cluster 1.1.6, ipfsconn/ipfshttp/ipfshttp.go)
//     asks its IPFS, in a goroutine and ignoring errors, to swarm/connect
//     to each of the pin's origins, pins, and cancels the origin connects
//     when the pin returns (defer cancelRequest()); doPostCtx logs an ERROR
//     for a request cancelled before its answer's headers came. cairn
//     sends its own addresses as origins with pin remote add (as Kubo
//     does), so peer0 asks cairn0 to connect to itself, which cairn, as
//     Kubo, refuses at once (TestNet_BadInput_Errors); a pin of blocks
//     cairn0 holds can still finish first on a busy machine (seen once
//     in CI). Only that line is tolerated: any other cancel still fails.
func expectedComplaint(l string) bool {
	if strings.Contains(l, "connect: connection refused") {
		return true
	}
	return strings.Contains(l, "\terror posting to IPFS:Post \"http://127.0.0.1:") &&
		strings.Contains(l, "/api/v0/swarm/connect?arg=") &&
		strings.HasSuffix(strings.TrimRight(l, "\r\n "), "\": context canceled")
}

// pinRemoteAgainstCluster drives `cairn pin remote` against peer0's
// pinsvcapi: service add with a JWT the API issues, add waiting and
// --background, ls with status filters, rm --force, the pins in the
// cluster's status, and no key in any output. keep is a cluster pin made
// with ipfs-cluster-ctl, which the API lists too and rm must leave.
func pinRemoteAgainstCluster(t *testing.T, f *fleet, dir, keep string) {
	p0, c0 := f.peers[0], f.cairns[0]
	endpoint := "http://127.0.0.1:" + fmt.Sprint(p0.PSA)
	req, _ := http.NewRequest(http.MethodPost, endpoint+"/token", nil)
	req.SetBasicAuth("fleet", "fleet-password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var tok struct{ Token string }
	if err := json.Unmarshal(body, &tok); err != nil || tok.Token == "" {
		t.Fatalf("pinsvcapi /token: %v %s", err, body)
	}
	key := tok.Token
	var outputs []string
	run := func(args ...string) string {
		t.Helper()
		out, err := c0.CLI(args...)
		outputs = append(outputs, out)
		if err != nil {
			outputs = append(outputs, err.Error())
			t.Fatal(err)
		}
		return out
	}
	fails := func(args ...string) string {
		t.Helper()
		out, err := c0.CLI(args...)
		outputs = append(outputs, out)
		if err == nil {
			t.Fatalf("cairn %v: expected an error, got %s", args, out)
		}
		outputs = append(outputs, err.Error())
		return err.Error()
	}

	run("pin", "remote", "service", "add", "cluster", endpoint, key)
	run("pin", "remote", "service", "add", "wrongkey", endpoint, "not-a-jwt")
	ls := run("pin", "remote", "service", "ls", "--stat")
	if !strings.Contains(ls, "cluster ") || !strings.Contains(ls, "wrongkey") || !strings.Contains(ls, "invalid") {
		t.Fatalf("service ls --stat:\n%s", ls)
	}
	if e := fails("pin", "remote", "ls", "--service=wrongkey"); !strings.Contains(e, "401") {
		t.Fatalf("a wrong key: %s", e)
	}

	y := addLocal(t, c0, randomFile(t, dir, "remote-y.bin", 400<<10))
	out := run("pin", "remote", "add", "--service=cluster", "--name=fleet-y", "/ipfs/"+y)
	if !strings.Contains(out, "CID:    "+y) || !strings.Contains(out, "Status: pinned") {
		t.Fatalf("pin remote add (waiting):\n%s", out)
	}
	waitStatus(t, p0, y, "the remote pin pinned everywhere", allPinned)

	// Two in the background under one name.
	z := addLocal(t, c0, randomFile(t, dir, "remote-z.bin", 400<<10))
	w := addLocal(t, c0, randomFile(t, dir, "remote-w.bin", 300<<10))
	for _, c := range []string{z, w} {
		out = run("pin", "remote", "add", "--service=cluster", "--name=fleet-many", "--background", c)
		if !strings.Contains(out, "CID:    "+c) || !strings.Contains(out, "Name:   fleet-many") {
			t.Fatalf("pin remote add --background:\n%s", out)
		}
	}
	for _, c := range []string{z, w} {
		waitStatus(t, p0, c, "the background remote pin pinned everywhere", allPinned)
	}

	all := run("pin", "remote", "ls", "--service=cluster", "--status=queued,pinning,pinned,failed")
	for _, c := range []string{y, z, w} {
		if !strings.Contains(all, c) {
			t.Fatalf("pin remote ls --status=all lacks %s:\n%s", c, all)
		}
	}
	if one := strings.TrimSpace(run("pin", "remote", "ls", "--service=cluster", "--cid="+y)); one != y+"\tpinned\tfleet-y" {
		t.Fatalf("pin remote ls --cid: %q", one)
	}
	waitFor(t, 30*time.Second, "both fleet-many pins listed as pinned", func() bool {
		return len(strings.Fields(run("pin", "remote", "ls", "--service=cluster", "--name=fleet-many"))) == 6
	})
	if q := strings.TrimSpace(run("pin", "remote", "ls", "--service=cluster", "--status=queued,pinning,failed", "--name=fleet-many")); q != "" {
		t.Fatalf("pin remote ls --status=queued,pinning,failed: %q", q)
	}
	if e := fails("pin", "remote", "rm", "--service=cluster", "--name=fleet-many"); !strings.Contains(e, "multiple remote pins are matching this query, add --force") {
		t.Fatalf("rm of several without --force: %s", e)
	}
	run("pin", "remote", "rm", "--service=cluster", "--name=fleet-many", "--force")
	run("pin", "remote", "rm", "--service=cluster", "--cid="+y)
	waitFor(t, 60*time.Second, "the removed remote pins to leave the cluster and every cairn", func() bool {
		for _, c := range []string{y, z, w} {
			if strings.TrimSpace(run("pin", "remote", "ls", "--service=cluster", "--cid="+c, "--status=queued,pinning,pinned,failed")) != "" {
				return false
			}
			for _, d := range f.cairns {
				if pinnedOn(d, c) {
					return false
				}
			}
		}
		return true
	})
	if !strings.Contains(run("pin", "remote", "ls", "--service=cluster"), keep) {
		t.Fatal("rm removed a cluster pin it did not match")
	}

	outputs = append(outputs, run("config", "show"), run("pin", "remote", "service", "ls", "--enc=json"), c0.Log())
	for _, o := range outputs {
		if strings.Contains(o, key) {
			t.Fatalf("an output shows the service key: %s", o)
		}
	}
	if !strings.Contains(readFile(t, filepath.Join(c0.Repo, "config")), key) {
		t.Fatal("the key is not in the repo's config")
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExpectedComplaint: the one line CI saw (a cancelled origin connect)
// and the killed cairn's refusals pass; any other cancel, or another error
// of a swarm/connect, is still a complaint.
func TestExpectedComplaint(t *testing.T) {
	const at = "2026-11-24T17:04:33.320Z\tERROR\tipfshttp\tipfshttp/ipfshttp.go:1299\terror posting to IPFS:"
	const connect = `Post "http://127.0.0.1:32306/api/v0/swarm/connect?arg=%2Fip4%2F127.0.0.1%2Ftcp%2F31144%2Fp2p%2F12D3KooWQCEnh8kvC9KJEcVfSdf6ua2kctxAizUvWE6oZrswV6mG"`
	for _, tc := range []struct {
		line string
		want bool
	}{
		{at + connect + ": context canceled", true},
		{at + `Post "http://127.0.0.1:27846/api/v0/pin/ls?stream=true&arg=QmSwHUQyGE5sDWR8mdtCpSdqry22dsqFTNzBTKkRfxvxdN&type=recursive": dial tcp 127.0.0.1:27846: connect: connection refused`, true},
		{at + `Post "http://127.0.0.1:32306/api/v0/pin/add?arg=QmSwHUQyGE5sDWR8mdtCpSdqry22dsqFTNzBTKkRfxvxdN&progress=true": context canceled`, false},
		{at + connect + ": context deadline exceeded", false},
		{at + connect + ": EOF", false},
		{"2026-11-24T17:04:33.320Z\tERROR\tpintracker\tstateless/stateless.go:540\tcontext canceled", false},
	} {
		if got := expectedComplaint(tc.line); got != tc.want {
			t.Errorf("expectedComplaint(%q) = %v", tc.line, got)
		}
	}
}
