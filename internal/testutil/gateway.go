package testutil

import (
	"testing"
	"time"

	"cairn/gateway"
	"cairn/node"

	"github.com/valyala/fasthttp"
)

// Gateway is n's HTTP gateway without a listener, offline, as the module
// host takes it (modules.Options.Gateway, which the http_ipfs app serves
// through); it is shut down at cleanup.
func Gateway(t testing.TB, n *node.Node) func(c *fasthttp.RequestCtx, contentPath string) {
	t.Helper()
	srv, err := gateway.New(n, gateway.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	return srv.ServePath
}
