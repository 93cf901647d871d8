package gateway_test

import (
	"strings"
	"testing"

	"github.com/ipfs/go-cid"
)

// A listing links its breadcrumbs and CIDs where the page's host can
// follow them: the path gateway's own /ipfs/ paths, the parent gateway of
// a subdomain, the DNSLink host's own root (CIDs then lead to
// cid.ipfs.tech, since such a site has no /ipfs/ of its own).
func TestGateway_Listing_Links(t *testing.T) {
	s := newSite(t, nil)
	t.Setenv("IPFS_NS_MAP", "site.example.org:/ipfs/"+s.root.String())
	r := s.root.String()
	v1 := cid.NewCidV1(s.root.Type(), s.root.Hash()).String()
	port := s.url[strings.LastIndex(s.url, ":")+1:]
	parent := "//localhost:" + port
	file := s.cidOf(t, "/empty/x y.txt").String()
	for _, tc := range []struct {
		name, host, path string
		want             []string
		not              []string
	}{
		{"path", "", "/ipfs/" + r + "/empty/", []string{
			"Index of",
			`/ipfs/<a href="/ipfs/` + r + `">` + r + `</a>/<a href="/ipfs/` + r + `/empty">empty</a>`,
			`<a href="/ipfs/` + r + `/empty/..">..</a>`,
			`<a href="/ipfs/` + r + `/empty/x%20y.txt">x y.txt</a>`,
			`<a class="ipfs-hash" translate="no" href="/ipfs/` + file + `?filename=x%2520y.txt">`,
		}, nil},
		{"path root", "", "/ipfs/" + r + "/", []string{"Index of"}, []string{`<a href="/ipfs/` + r + `/">..</a>`}},
		{"subdomain", v1 + ".ipfs.localhost:" + port, "/empty/", []string{
			`/ipfs/<a href="` + parent + `/ipfs/` + v1 + `">` + v1 + `</a>/<a href="` + parent + `/ipfs/` + v1 + `/empty">empty</a>`,
			`<a href="/empty/..">..</a>`,
			`<a href="/empty/x%20y.txt">x y.txt</a>`,
			`<a class="ipfs-hash" translate="no" href="` + parent + `/ipfs/` + file + `?filename=x%2520y.txt">`,
		}, nil},
		{"subdomain root", v1 + ".ipfs.localhost:" + port, "/", []string{"Index of"}, []string{`<a href="/">..</a>`}},
		{"dnslink", "site.example.org", "/empty/", []string{
			`/ipns/<a href="//site.example.org/">site.example.org</a>/<a href="//site.example.org/empty">empty</a>`,
			`<a href="/empty/..">..</a>`,
			`<a href="/empty/x%20y.txt">x y.txt</a>`,
			`<a class="ipfs-hash" translate="no" href="https://cid.ipfs.tech/#` + file + `" target="_blank" rel="noreferrer noopener">`,
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.host != "" {
				hdr = []string{"Host", tc.host}
			}
			resp, body := s.do(t, "GET", tc.path, hdr...)
			if resp.StatusCode != 200 {
				t.Fatalf("got %d %s", resp.StatusCode, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(body), w) {
					t.Errorf("lacks %s\n%s", w, body)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(string(body), w) {
					t.Errorf("has %s", w)
				}
			}
		})
	}
}
