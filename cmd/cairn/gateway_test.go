package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The daemon serves the gateway on Addresses.Gateway, says so after the
// RPC's line as Kubo does (and that the routing API is on it), and the
// gateway never answers the RPC.
func TestDaemon_Gateway(t *testing.T) {
	repo := initRepo(t)
	_, api, out := startDaemonFlags(t, repo, []string{"--offline"})
	text := out.String()
	m := regexp.MustCompile(`Gateway server listening on /ip4/127\.0\.0\.1/tcp/(\d+)\n`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no gateway line in:\n%s", text)
	}
	if strings.Index(text, "RPC API server listening on") > strings.Index(text, "Gateway server listening on") {
		t.Errorf("the gateway line comes before the RPC's:\n%s", text)
	}
	gw := "http://127.0.0.1:" + m[1]
	if want := "Gateway server listening on /ip4/127.0.0.1/tcp/" + m[1] + "\nRouting V1 API exposed at " + gw + "/routing/v1\n"; !strings.Contains(text, want) {
		t.Errorf("no routing API line after the gateway's (Gateway.ExposeRoutingAPI is true by default); want %q in:\n%s", want, text)
	}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// An identity CID needs no stored block.
	if code, body := get(gw + "/ipfs/bafkqac3imvwgy3zao5xxe3de"); code != 200 || body != "hello world" {
		t.Errorf("identity CID: got %d %q", code, body)
	}
	if code, body := get(gw + "/api/v0/version"); code != 404 || body != "404 page not found\n" {
		t.Errorf("RPC on the gateway: got %d %q", code, body)
	}
	resp, err := http.Post(api+"/api/v0/version", "", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("RPC: %v %v", resp, err)
	}
	resp.Body.Close()
}
