//go:build interop

// transport_test.go: cairn and Kubo connect over each transport cairn
// builds its host with (node/p2p/host.go): TCP (the other tests) and
// QUIC v1.

package interop

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"

	"cairn/internal/daemon"
)

// quicOnly makes a daemon listen on loopback QUIC v1 only, so any
// connection to or from it is a QUIC one.
var quicOnly = map[string]string{"Addresses.Swarm": `["/ip4/127.0.0.1/udp/0/quic-v1"]`}

// Each side dials the other over QUIC v1 (Noise/TLS and yamux are QUIC's
// own there: TLS 1.3 and QUIC streams) and fetches a file from it.
func TestInterop_QUICBothWays(t *testing.T) {
	for _, dir := range []string{"cairn dials Kubo", "Kubo dials cairn"} {
		t.Run(strings.ReplaceAll(dir, " ", "_"), func(t *testing.T) {
			c := startCairn(t, daemon.Options{Config: quicOnly})
			k := startKubo(t, daemon.Options{Config: quicOnly})
			a, b := c, k
			if dir == "Kubo dials cairn" {
				a, b = k, c
			}
			addr := quicAddr(t, b)
			if _, err := a.Post("swarm/connect", url.Values{"arg": {addr}}, nil, ""); err != nil {
				t.Fatalf("%s: swarm/connect %s: %v", dir, addr, err)
			}
			// Both list the other, over a /quic-v1 address.
			for _, d := range []*daemon.Daemon{a, b} {
				other := c
				if d == c {
					other = k
				}
				if got := peerAddr(t, d, id(t, other).ID); !strings.Contains(got, "/quic-v1") {
					t.Fatalf("%s: %s lists %s at %q, want a /quic-v1 address", dir, d.Name, other.Name, got)
				}
			}
			data := randomBytes(t, 1<<20+17)
			_, h := add(t, b, url.Values{"cid-version": {"1"}}, file{Path: "q.bin", Data: data})
			if got := cat(t, a, "/ipfs/"+h); !bytes.Equal(got, data) {
				t.Fatalf("%s: %s cat of %s: %d bytes, want %d equal", dir, a.Name, h, len(got), len(data))
			}
		})
	}
}

// quicAddr is d's loopback /quic-v1 address with its /p2p/ part.
func quicAddr(t *testing.T, d *daemon.Daemon) string {
	t.Helper()
	p := id(t, d)
	for _, a := range p.Addresses {
		if strings.HasPrefix(a, "/ip4/127.0.0.1/udp/") && strings.Contains(a, "/quic-v1") && !strings.Contains(a, "/webtransport") {
			if !strings.Contains(a, "/p2p/") {
				a += "/p2p/" + p.ID
			}
			return a
		}
	}
	t.Fatalf("%s has no loopback QUIC address: %v", d.Name, p.Addresses)
	return ""
}

// peerAddr waits up to 10 s for d to list pid in swarm/peers, and
// returns the address it lists it at.
func peerAddr(t *testing.T, d *daemon.Daemon, pid string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out struct{ Peers []struct{ Addr, Peer string } }
		if err := d.JSON("swarm/peers", nil, &out); err != nil {
			t.Fatal(err)
		}
		for _, p := range out.Peers {
			if p.Peer == pid {
				return p.Addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not list %s as a peer", d.Name, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
