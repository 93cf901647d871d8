package rpc_test

import (
	"net"
	"net/http"
	"testing"

	"cairn/internal/testutil"
	"cairn/rpc"
)

// Ensure preflights are answered as Kubo answers them and allowed origins
// get CORS headers.
func TestServer_CORS(t *testing.T) {
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{}, nil)
	_, port, _ := net.SplitHostPort(srv.Addr)
	origin := "http://localhost:" + port
	req, _ := http.NewRequest("OPTIONS", srv.URL+"/api/v0/version", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != origin ||
		resp.Header.Get("Access-Control-Allow-Methods") != "POST" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	req.Header.Set("Access-Control-Request-Headers", "authorization")
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight asking for authorization got ACAO %q", resp.Header.Get("Access-Control-Allow-Origin"))
	}
	r2, _ := testutil.PostURL(t, srv.URL+"/api/v0/version", map[string]string{"Origin": origin, "User-Agent": "Mozilla/5.0"})
	if r2.StatusCode != 200 || r2.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("allowed origin: %d %v", r2.StatusCode, r2.Header)
	}
	r3, _ := testutil.PostURL(t, srv.URL+"/api/v0/version", map[string]string{"User-Agent": "Mozilla/5.0 Electron"})
	if r3.StatusCode != 200 {
		t.Errorf("Electron UA: %d", r3.StatusCode)
	}
}

// Ensure the ipfs-companion extension origins are always allowed, as in
// Kubo 0.42, and other extensions are not.
func TestServer_CompanionOrigins(t *testing.T) {
	srv := startServer(t, testutil.MustOpenNode(t), rpc.ServerOptions{}, nil)
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"chrome-extension://nibjojkomfdiaoajekhjakgkdhaomnch", 200},
		{"chrome-extension://hjoieblefckbooibpepigmacodalfndh", 200},
		{"chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 403},
	} {
		resp, body := testutil.PostURL(t, srv.URL+"/api/v0/id", map[string]string{"Origin": tc.origin})
		if resp.StatusCode != tc.want {
			t.Errorf("Origin %s: got %d, want %d (%s)", tc.origin, resp.StatusCode, tc.want, body)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); tc.want == 200 && got != tc.origin {
			t.Errorf("Origin %s: Access-Control-Allow-Origin %q", tc.origin, got)
		}
	}
}
