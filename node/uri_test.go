package node_test

import (
	"testing"

	"cairn/node"
)

func TestFromURI_Forms(t *testing.T) {
	const c = "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e"
	for in, want := range map[string]string{
		"ipfs://" + c:               "/ipfs/" + c,
		"ipfs:" + c:                 "/ipfs/" + c,
		"IPFS://" + c + "/a/b":      "/ipfs/" + c + "/a/b",
		"Ipns://example.com":        "/ipns/example.com",
		"ipns:k51qzi5uqu5d":         "/ipns/k51qzi5uqu5d",
		"ipns://Ab/C":               "/ipns/Ab/C", // what follows the scheme is kept as typed
		"/ipfs/" + c:                "/ipfs/" + c,
		c:                           c,
		"ipld://" + c:               "ipld://" + c,
		"ipfsx://" + c:              "ipfsx://" + c,
		"ipfs":                      "ipfs",
		"":                          "",
		"https://ipfs.io/ipfs/" + c: "https://ipfs.io/ipfs/" + c,
	} {
		if got := node.FromURI(in); got != want {
			t.Errorf("FromURI(%q) = %q, want %q", in, got, want)
		}
	}
}
