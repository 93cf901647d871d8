package tests

import (
	"net"
	"testing"
	"time"

	"cairn/internal/tcpecho"
	"cairn/internal/testutil"
)

// Ensure 100 MiB pass through a p2p tunnel between two cairn nodes (a
// TCP echo behind p2p/listen, reached through p2p/forward) and come back
// unchanged (CAIRN_SLOW=1; the fast suite sends 4 MiB, in commands).
func TestP2P_100MiBThroughTunnel(t *testing.T) {
	if !slow() {
		t.Skip("CAIRN_SLOW=1 runs it (make test)")
	}
	a, b := testutil.P2PNode(t), testutil.P2PNode(t)
	testutil.Connect(t, a, b)
	addr := testutil.P2PTunnel(t, a, b, "/x/echo100", testutil.EchoServer(t))
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Minute))
	res, err := tcpecho.RoundTrip(c, 100<<20, 100)
	if err != nil || res.NGot != 100<<20 || res.Sent != res.Got {
		t.Fatalf("100 MiB round trip: %v (sent %d, got %d, hashes equal %v)", err, res.NSent, res.NGot, res.Sent == res.Got)
	}
	t.Logf("100 MiB each way in %v", res.Elapsed)
}
