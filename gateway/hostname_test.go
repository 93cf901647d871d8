package gateway_test

import (
	"strings"
	"testing"

	"github.com/ipfs/go-cid"
)

// The implicit subdomain gateway on localhost, a configured path-only
// host, and a DNSLink host (IPFS_NS_MAP, as Kubo reads it).
func TestGateway_Hosts(t *testing.T) {
	n := newSite(t, map[string]any{"Gateway.PublicGateways": map[string]any{
		"example.com": map[string]any{"Paths": []any{"/ipfs"}, "UseSubdomains": false},
	}})
	r := n.root
	// Read when the node's name system is first used, below.
	t.Setenv("IPFS_NS_MAP", "site.example.org:/ipfs/"+r.String())
	port := n.url[strings.LastIndex(n.url, ":")+1:]
	v1 := cid.NewCidV1(r.Type(), r.Hash()).String()

	resp, _ := n.do(t, "GET", "/ipfs/"+r.String()+"/a.txt?x=1", "Host", "localhost:"+port)
	if want := "http://" + v1 + ".ipfs.localhost:" + port + "/a.txt?x=1"; resp.StatusCode != 301 || resp.Header.Get("Location") != want {
		t.Errorf("localhost path: got %d %q, want 301 %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	resp, body := n.do(t, "GET", "/a.txt", "Host", v1+".ipfs.localhost:"+port)
	if resp.StatusCode != 200 || string(body) != "hello\n" {
		t.Errorf("subdomain: got %d %q", resp.StatusCode, body)
	}
	resp, _ = n.do(t, "GET", "/ipfs/"+r.String()+"/a.txt", "Host", "example.com")
	if resp.StatusCode != 200 {
		t.Errorf("path-only host: got %d", resp.StatusCode)
	}
	for _, tc := range []struct{ host, path string }{
		{"example.com", "/ipns/" + v1},        // not among its Paths
		{"localhost:" + port, "/version"},     // a known host serves its Paths only
		{v1 + ".p2p.localhost:" + port, "/"},  // no libp2p proxy
		{"nothing.example.net", "/api/v0/id"}, // no DNSLink, no route
	} {
		resp, _ = n.do(t, "GET", tc.path, "Host", tc.host)
		if resp.StatusCode != 404 {
			t.Errorf("%s%s: got %d, want 404", tc.host, tc.path, resp.StatusCode)
		}
	}

	resp, body = n.do(t, "GET", "/a.txt", "Host", "site.example.org")
	if resp.StatusCode != 200 || string(body) != "hello\n" {
		t.Errorf("DNSLink host: got %d %q", resp.StatusCode, body)
	}
}
