//go:build faults

// bitflip_test.go: a bit flips in a stored block.

package faults

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"cairn/internal/testutil"

	"github.com/ipfs/go-cid"
)

// Ensure a block with a flipped bit is served by no reader: cat, get,
// dag export, block get and the http_ipfs gateway answer an error naming
// it (or cut their answer) and never its damaged bytes; repo verify
// names it; the daemon stays up and serves the other files.
func TestBitFlip_NeverServed(t *testing.T) {
	fs := mountLoop(t, 48)
	d := startDaemon(t, fs.Dir)
	gw := startModules(t, d)
	data := random(1 << 20)
	c := d.mustAdd(data)
	other := random(300 << 10)
	oc := d.mustAdd(other)
	root, err := cid.Decode(c)
	if err != nil {
		t.Fatal(err)
	}
	links, err := d.Node.UnixFS().Links(t.Context(), root)
	if err != nil || len(links) < 3 {
		t.Fatalf("links of %s: %v %v", c, links, err)
	}
	leaf := links[2].Cid
	damaged := testutil.FlipBit(t, d.Node.Store, leaf.Hash())
	for _, r := range []struct {
		path string
		arg  string
	}{
		{"cat", c},
		{"get", c},
		{"dag/export", c},
		{"block/get", leaf.String()},
	} {
		a := d.call(r.path, []string{r.arg}, nil, nil)
		if bytes.Contains([]byte(a.body), damaged) {
			t.Fatalf("%s served the damaged bytes of %s", r.path, leaf)
		}
		if e := a.errText(); !strings.Contains(e, "damaged") || !strings.Contains(e, leaf.String()) {
			t.Fatalf("%s of a file with a damaged block: error %q, want one naming %s as damaged", r.path, e, leaf)
		}
		d.wantUp()
	}
	resp, err := http.Get(gw + "/ipfs/" + c)
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(body, damaged) {
			t.Fatal("the gateway served the damaged bytes")
		}
		if resp.StatusCode == 200 && rerr == nil && bytes.Equal(body, data) {
			t.Fatal("the gateway answered the whole file")
		}
	}
	a := d.call("repo/verify", nil, nil, nil)
	// As Kubo's, repo verify names blocks by their multihash as raw CIDv1.
	if !strings.Contains(a.body, "block "+cid.NewCidV1(cid.Raw, leaf.Hash()).String()+" was corrupt") {
		t.Fatalf("repo verify does not name the damaged block %s: %s", leaf, a.body)
	}
	d.wantCat(oc, other)
}
