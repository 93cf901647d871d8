package commands_test

import (
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"
)

// Ensure mount answers Kubo's offline error on a node without the network
// (and in a process that cannot mount), as Kubo's ErrNotOnline.
func TestMount_Offline(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	code, body := postJSON(t, srv.URL+"/api/v0/mount", nil)
	if code != 500 || !strings.Contains(body, `"Message":"`+node.ErrOffline.Error()+`"`) {
		t.Fatalf("%d %s", code, body)
	}
}
