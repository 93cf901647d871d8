//go:build interop

// bitswap_test.go: cairn and Kubo compute the same CIDs and CAR bytes, and
// fetch each other's blocks over bitswap.

package interop

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"cairn/internal/daemon"
)

// The same bytes under the same import settings give the same CID on both,
// and dag/export of it gives the same CAR bytes.
func TestInterop_SameCIDsAndCAR(t *testing.T) {
	c := startCairn(t, daemon.Options{Offline: true})
	k := startKubo(t, daemon.Options{Offline: true})
	data := randomBytes(t, 3<<20+12345)
	for _, q := range []url.Values{
		{},
		{"cid-version": {"1"}},
		{"raw-leaves": {"false"}, "cid-version": {"1"}},
		{"chunker": {"size-1000"}},
		{"chunker": {"rabin-1024-4096-16384"}},
		{"trickle": {"true"}},
		{"hash": {"blake2b-256"}},
		{"inline": {"true"}, "chunker": {"size-20"}},
	} {
		_, hc := add(t, c, q, file{Path: "f.bin", Data: data})
		_, hk := add(t, k, q, file{Path: "f.bin", Data: data})
		if hc != hk {
			t.Errorf("add %v: cairn %s, Kubo %s", q, hc, hk)
			continue
		}
		ec, err := c.Post("dag/export", url.Values{"arg": {hc}}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		ek, err := k.Post("dag/export", url.Values{"arg": {hk}}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ec, ek) {
			t.Errorf("dag/export %s (%v): %d bytes from cairn, %d from Kubo, not equal", hc, q, len(ec), len(ek))
		}
	}
}

// A file and a directory added on Kubo are read on cairn, and the reverse,
// over one loopback connection.
func TestInterop_BitswapBothWays(t *testing.T) {
	c := startCairn(t, daemon.Options{})
	k := startKubo(t, daemon.Options{})
	connect(t, c, k)

	fromKubo := randomBytes(t, 2<<20+7)
	_, hk := add(t, k, nil, file{Path: "k.bin", Data: fromKubo})
	if got := cat(t, c, "/ipfs/"+hk); !bytes.Equal(got, fromKubo) {
		t.Fatalf("cairn cat of Kubo's %s: %d bytes, want %d equal", hk, len(got), len(fromKubo))
	}

	fromCairn := randomBytes(t, 1<<20+3)
	_, hc := add(t, c, url.Values{"cid-version": {"1"}}, file{Path: "c.bin", Data: fromCairn})
	if got := cat(t, k, "/ipfs/"+hc); !bytes.Equal(got, fromCairn) {
		t.Fatalf("Kubo cat of cairn's %s: %d bytes, want %d equal", hc, len(got), len(fromCairn))
	}

	// A directory on Kubo, pinned on cairn (a recursive fetch), then
	// listed the same way on both.
	_, dir := add(t, k, url.Values{"wrap-with-directory": {"true"}},
		file{Path: "a.txt", Data: []byte("alpha\n")},
		file{Path: "b.txt", Data: randomBytes(t, 300000)})
	if _, err := c.Post("pin/add", url.Values{"arg": {dir}, "timeout": {"60s"}}, nil, ""); err != nil {
		t.Fatal(err)
	}
	lc, err := c.Post("ls", url.Values{"arg": {dir}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	lk, err := k.Post("ls", url.Values{"arg": {dir}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(lc)) != strings.TrimSpace(string(lk)) {
		t.Errorf("ls %s:\ncairn %s\nKubo  %s", dir, lc, lk)
	}
	// cairn now serves the whole DAG offline.
	if _, err := c.Post("dag/export", url.Values{"arg": {dir}, "offline": {"true"}}, nil, ""); err != nil {
		t.Errorf("after pin/add cairn cannot export %s offline: %v", dir, err)
	}
}
