//go:build interop

// p2p_test.go: TCP tunnels between cairn and Kubo (p2p forward on one,
// p2p listen on the other, a TCP echo server behind it), both ways.

package interop

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"cairn/internal/daemon"
	"cairn/internal/tcpecho"
)

var p2pOn = daemon.Options{Config: map[string]string{"Experimental.Libp2pStreamMounting": "true"}}

// p2pTunnel runs p2p/listen on srv towards echo and p2p/forward on cli,
// and returns the forwarder's host:port.
func p2pTunnel(t *testing.T, cli, srv *daemon.Daemon, proto string, echo *tcpecho.Server) string {
	t.Helper()
	target := "/ip4/127.0.0.1/tcp/" + strings.Split(echo.Addr(), ":")[1]
	if _, err := srv.Post("p2p/listen", url.Values{"arg": {proto, target}}, nil, ""); err != nil {
		t.Fatalf("%s p2p/listen: %v", srv.Name, err)
	}
	if _, err := cli.Post("p2p/forward", url.Values{"arg": {proto, "/ip4/127.0.0.1/tcp/0", "/p2p/" + id(t, srv).ID}}, nil, ""); err != nil {
		t.Fatalf("%s p2p/forward: %v", cli.Name, err)
	}
	var ls struct {
		Listeners []struct{ Protocol, ListenAddress, TargetAddress string }
	}
	if err := cli.JSON("p2p/ls", nil, &ls); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls.Listeners {
		if port, ok := strings.CutPrefix(l.ListenAddress, "/ip4/127.0.0.1/tcp/"); ok && l.Protocol == proto {
			return "127.0.0.1:" + port
		}
	}
	t.Fatalf("%s p2p/ls: no forwarder of %s: %+v", cli.Name, proto, ls)
	return ""
}

// p2pEcho pushes n bytes through the tunnel at addr and checks they come
// back, while both daemons list the stream.
func p2pEcho(t *testing.T, addr string, n int64, ends ...*daemon.Daemon) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Minute))
	res, err := tcpecho.RoundTrip(c, n, uint64(n))
	if err != nil || res.Sent != res.Got {
		t.Fatalf("round trip of %d bytes: %v (got %d, equal %v)", n, err, res.NGot, res.Sent == res.Got)
	}
	t.Logf("%d bytes each way in %v", n, res.Elapsed)
	for _, d := range ends {
		var ss struct {
			Streams []struct{ HandlerID, Protocol string }
		}
		if err := d.JSON("p2p/stream/ls", nil, &ss); err != nil || len(ss.Streams) != 1 {
			t.Fatalf("%s p2p/stream/ls: %v %+v", d.Name, err, ss)
		}
	}
}

func TestInterop_P2P_CairnForwardsToKubo(t *testing.T) { p2pInterop(t, true) }

func TestInterop_P2P_KuboForwardsToCairn(t *testing.T) { p2pInterop(t, false) }

// p2pInterop tunnels a TCP echo from one daemon's forwarder to the
// other's service (cairn forwards with cairnForwards, else Kubo).
func p2pInterop(t *testing.T, cairnForwards bool) {
	c := startCairn(t, p2pOn)
	k := startKubo(t, p2pOn)
	cli, srv := c, k
	if !cairnForwards {
		cli, srv = k, c
	}
	connect(t, cli, srv)
	echo, err := tcpecho.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	addr := p2pTunnel(t, cli, srv, "/x/echo", echo)
	p2pEcho(t, addr, 1000, cli, srv)
	p2pEcho(t, addr, 16<<20, cli, srv)
}

// Ensure cairn answers the errors Kubo answers for the same bad input,
// word for word.
func TestInterop_P2P_SameErrors(t *testing.T) {
	c := startCairn(t, p2pOn)
	k := startKubo(t, p2pOn)
	kid := id(t, k).ID
	for _, q := range []struct {
		path string
		q    url.Values
	}{
		{"p2p/listen", url.Values{"arg": {"/y/a", "/ip4/127.0.0.1/tcp/1"}}},
		{"p2p/listen", url.Values{"arg": {"/x/a", "/ip4/127.0.0.1"}}},
		{"p2p/listen", url.Values{"arg": {"/x/a", "/ip4/127.0.0.1/tcp/0"}}},
		{"p2p/forward", url.Values{"arg": {"a", "/ip4/127.0.0.1/tcp/0", "/p2p/" + kid}}},
		{"p2p/close", nil},
		{"p2p/close", url.Values{"all": {"true"}, "protocol": {"/x/a"}}},
		{"p2p/stream/close", nil},
	} {
		_, errC := c.Post(q.path, q.q, nil, "")
		_, errK := k.Post(q.path, q.q, nil, "")
		// The texts start with the daemon's name, then status and body.
		if errC == nil || errK == nil || strings.TrimPrefix(errC.Error(), c.Name) != strings.TrimPrefix(errK.Error(), k.Name) {
			t.Errorf("%s %v: cairn %v, Kubo %v", q.path, q.q, errC, errK)
		}
	}
}

// Ensure report-peer-id writes the forwarding peer's ID and a newline to
// the target first, on Kubo's service and on cairn's alike.
func TestInterop_P2P_ReportPeerID(t *testing.T) {
	c := startCairn(t, p2pOn)
	k := startKubo(t, p2pOn)
	connect(t, c, k)
	for _, ends := range [][2]*daemon.Daemon{{c, k}, {k, c}} {
		cli, srv := ends[0], ends[1]
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		proto := "/x/who-" + srv.Name
		q := url.Values{"arg": {proto, "/ip4/127.0.0.1/tcp/" + strings.Split(l.Addr().String(), ":")[1]}, "report-peer-id": {"true"}}
		if _, err := srv.Post("p2p/listen", q, nil, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Post("p2p/forward", url.Values{"arg": {proto, "/ip4/127.0.0.1/tcp/0", "/p2p/" + id(t, srv).ID}}, nil, ""); err != nil {
			t.Fatal(err)
		}
		var ls struct {
			Listeners []struct{ Protocol, ListenAddress string }
		}
		if err := cli.JSON("p2p/ls", nil, &ls); err != nil {
			t.Fatal(err)
		}
		var addr string
		for _, x := range ls.Listeners {
			if x.Protocol == proto {
				addr = strings.Replace(strings.TrimPrefix(x.ListenAddress, "/ip4/"), "/tcp/", ":", 1)
			}
		}
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.Write([]byte("hi\n"))
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 0, 128)
		want := id(t, cli).ID + "\nhi\n"
		for len(buf) < len(want) {
			tmp := make([]byte, 128)
			n, err := s.Read(tmp)
			buf = append(buf, tmp[:n]...)
			if err != nil {
				break
			}
		}
		if string(buf) != want {
			t.Fatalf("%s's service wrote %q to its target, want %q", srv.Name, buf, want)
		}
	}
}
