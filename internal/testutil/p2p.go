package testutil

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/tcpecho"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/peer"
)

// P2PNode is an online node with Experimental.Libp2pStreamMounting set.
func P2PNode(t testing.TB) *node.Node {
	t.Helper()
	return MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Experimental.Libp2pStreamMounting", true)
	})
}

// Connect connects a to b.
func Connect(t testing.TB, a, b *node.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Net.Host.Connect(ctx, peer.AddrInfo{ID: b.PeerID, Addrs: b.Net.Host.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

// EchoServer is a TCP echo server on 127.0.0.1, closed at cleanup.
func EchoServer(t testing.TB) *tcpecho.Server {
	t.Helper()
	s, err := tcpecho.Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// P2PTunnel runs p2p/listen of proto on b towards echo and p2p/forward
// on a from 127.0.0.1:0 to b, and returns the forwarder's host:port.
func P2PTunnel(t testing.TB, a, b *node.Node, proto string, echo *tcpecho.Server) string {
	t.Helper()
	call := func(n *node.Node, path string, args ...string) *rpc.Result {
		t.Helper()
		res, err := rpc.Call(context.Background(), n, commands.DefaultTable, path, args, nil, nil)
		if err != nil {
			t.Fatalf("%s %v: %v", path, args, err)
		}
		return res
	}
	call(b, "p2p/listen", proto, fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", echo.Port()))
	call(a, "p2p/forward", proto, "/ip4/127.0.0.1/tcp/0", "/p2p/"+b.PeerID.String())
	for _, l := range call(a, "p2p/ls").Values[0].(*commands.P2PLsOutput).Listeners {
		if port, ok := strings.CutPrefix(l.ListenAddress, "/ip4/127.0.0.1/tcp/"); ok && l.Protocol == proto {
			return "127.0.0.1:" + port
		}
	}
	t.Fatalf("forwarder of %s not listed", proto)
	return ""
}
