package rpc_test

import (
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node/config"
	"cairn/rpc"
)

// Ensure API.Authorizations gates every path but /api/v0/version itself.
func TestServer_Authorizations(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"API.Authorizations": map[string]*config.RPCAuthScope{
		"alice": {AuthSecret: "bearer:s3cret", AllowedPaths: []string{"/api/v0/cat"}},
		"bob":   {AuthSecret: "basic:bob:pw", AllowedPaths: []string{"/api/v0"}},
	}})
	srv := startServer(t, n, rpc.ServerOptions{}, nil)
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/api/v0/version", "", 403},
		{"/api/v0/version", "Bearer wrong", 403},
		{"/api/v0/version", "Bearer s3cret", 200},
		{"/api/v0/version/deps", "Bearer s3cret", 403}, // Kubo: only /api/v0/version itself
		{"/api/v0/version/deps", "Basic Ym9iOnB3", 200},
		{"/api/v0/id", "Bearer s3cret", 403},
		{"/api/v0/cat?arg=QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", "Bearer s3cret", 500},
		{"/api/v0/commands", "Basic Ym9iOnB3", 200},
	} {
		resp, body := testutil.PostURL(t, srv.URL+tc.path, map[string]string{"Authorization": tc.auth})
		if resp.StatusCode != tc.want {
			t.Errorf("%s with %q: got %d, want %d (%s)", tc.path, tc.auth, resp.StatusCode, tc.want, body)
		}
		if tc.want == 403 && !strings.HasPrefix(string(body), "Kubo RPC Access Denied") {
			t.Errorf("403 body %q", body)
		}
	}
}
