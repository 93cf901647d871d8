package commands_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/tcpecho"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/p2p"

	"github.com/libp2p/go-libp2p/core/network"
)

// p2pPair is two connected stream-mounting nodes.
func p2pPair(t *testing.T) (a, b *node.Node) {
	t.Helper()
	a, b = testutil.P2PNode(t), testutil.P2PNode(t)
	testutil.Connect(t, a, b)
	return a, b
}

func p2pListeners(t *testing.T, n *node.Node) []commands.P2PListenerInfo {
	t.Helper()
	return mustCall(t, n, "p2p/ls", nil, nil, nil).Values[0].(*commands.P2PLsOutput).Listeners
}

func p2pStreams(t *testing.T, n *node.Node) []commands.P2PStreamInfo {
	t.Helper()
	return mustCall(t, n, "p2p/stream/ls", nil, nil, nil).Values[0].(*commands.P2PStreamsOutput).Streams
}

// settleGoroutines waits until no more than base+slack goroutines run.
func settleGoroutines(t *testing.T, base, slack int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+slack {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d, before %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func dialTunnel(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Ensure bytes sent into a forwarder come back from the echo service
// behind the other node's listener unchanged, on several connections in
// turn, that both nodes list the listeners and streams as Kubo does, and
// that the resource manager counts the streams under the p2p service.
func TestP2P_EchoThroughTunnel(t *testing.T) {
	a, b := p2pPair(t)
	echo := testutil.EchoServer(t)
	base := runtime.NumGoroutine()
	addr := testutil.P2PTunnel(t, a, b, "/x/echo", echo)

	ls := p2pListeners(t, a)
	if len(ls) != 1 || ls[0].TargetAddress != "/p2p/"+b.PeerID.String() || ls[0].ListenAddress != "/ip4/"+strings.Replace(addr, ":", "/tcp/", 1) {
		t.Fatalf("A's listeners: %+v", ls)
	}
	ls = p2pListeners(t, b)
	target := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", echo.Port())
	if len(ls) != 1 || ls[0] != (commands.P2PListenerInfo{Protocol: "/x/echo", ListenAddress: "/p2p/" + b.PeerID.String(), TargetAddress: target}) {
		t.Fatalf("B's listeners: %+v", ls)
	}

	for i := range 3 {
		c := dialTunnel(t, addr)
		res, err := tcpecho.RoundTrip(c, 4<<20, uint64(i))
		if err != nil || res.Sent != res.Got {
			t.Fatalf("round trip %d: %v (sent %d, got %d bytes)", i, err, res.NSent, res.NGot)
		}
		sa, sb := p2pStreams(t, a), p2pStreams(t, b)
		if len(sa) != 1 || sa[0].Protocol != "/x/echo" || sa[0].OriginAddress != "/ip4/"+strings.Replace(c.LocalAddr().String(), ":", "/tcp/", 1) ||
			sa[0].TargetAddress != "/p2p/"+b.PeerID.String() || sa[0].HandlerID != fmt.Sprint(i) {
			t.Fatalf("A's streams: %+v", sa)
		}
		if len(sb) != 1 || sb[0].OriginAddress != "/p2p/"+a.PeerID.String() || sb[0].TargetAddress != target {
			t.Fatalf("B's streams: %+v", sb)
		}
		for _, x := range []struct {
			n   *node.Node
			dir func(network.ScopeStat) int
		}{{a, func(s network.ScopeStat) int { return s.NumStreamsOutbound }}, {b, func(s network.ScopeStat) int { return s.NumStreamsInbound }}} {
			var stat network.ScopeStat
			x.n.Net.Host.Network().ResourceManager().ViewService(p2p.StreamService, func(s network.ServiceScope) error {
				stat = s.Stat()
				return nil
			})
			if x.dir(stat) != 1 {
				t.Fatalf("resource manager, service %s: %+v", p2p.StreamService, stat)
			}
		}
		c.Close()
		waitFor(t, 10*time.Second, "streams to end", func() bool { return len(p2pStreams(t, a)) == 0 && len(p2pStreams(t, b)) == 0 })
	}

	if n := *mustCall(t, a, "p2p/close", nil, map[string]string{"all": "true"}, nil).Values[0].(*int); n != 1 {
		t.Fatalf("A closed %d", n)
	}
	if n := *mustCall(t, b, "p2p/close", nil, map[string]string{"protocol": "/x/echo"}, nil).Values[0].(*int); n != 1 {
		t.Fatalf("B closed %d", n)
	}
	if len(p2pListeners(t, a)) != 0 || len(p2pListeners(t, b)) != 0 {
		t.Fatal("listeners left after p2p/close")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("the closed forwarder still accepts connections")
	}
	settleGoroutines(t, base, 2)
}

// Ensure report-peer-id writes the remote peer's ID and a newline to
// the target before the bytes of the connection.
func TestP2P_ReportPeerID(t *testing.T) {
	a, b := p2pPair(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mustCall(t, b, "p2p/listen", []string{"/x/who", "/ip4/127.0.0.1/tcp/" + fmt.Sprint(l.Addr().(*net.TCPAddr).Port)}, map[string]string{"report-peer-id": "true"}, nil)
	mustCall(t, a, "p2p/forward", []string{"/x/who", "/ip4/127.0.0.1/tcp/0", "/p2p/" + b.PeerID.String()}, nil, nil)
	c := dialTunnel(t, strings.Replace(strings.TrimPrefix(p2pListeners(t, a)[0].ListenAddress, "/ip4/"), "/tcp/", ":", 1))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	srv, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(srv)
	for _, want := range []string{a.PeerID.String() + "\n", "hello\n"} {
		if got, err := r.ReadString('\n'); err != nil || got != want {
			t.Fatalf("target read %q, %v; want %q", got, err, want)
		}
	}
}

// Ensure the p2p commands answer Kubo's errors: disabled, offline,
// protocols outside /x/, bad and unsupported addresses, duplicates,
// close's option rules, stream/close without an id.
func TestP2P_BadInput(t *testing.T) {
	off := testutil.MustOnlineNode(t, "none", nil)
	for _, c := range [][]string{{"p2p/ls"}, {"p2p/stream/ls"}, {"p2p/listen", "/x/a", "/ip4/127.0.0.1/tcp/1"},
		{"p2p/forward", "/x/a", "/ip4/127.0.0.1/tcp/0", "/p2p/" + off.PeerID.String()}, {"p2p/stream/close", "0"}} {
		wantErr(t, callErr(t, off, c[0], c[1:], nil, nil), "libp2p stream mounting not enabled")
	}
	wantErr(t, callErr(t, off, "p2p/close", nil, map[string]string{"all": "true"}, nil), "libp2p stream mounting not enabled")
	offline := testutil.MustOpenNode(t)
	testutil.SetConfig(t, offline, map[string]any{"Experimental.Libp2pStreamMounting": true})
	wantErr(t, callErr(t, offline, "p2p/ls", nil, nil, nil), node.ErrOffline.Error())

	a, b := p2pPair(t)
	bp := "/p2p/" + b.PeerID.String()
	for _, c := range []struct {
		args []string
		opts map[string]string
		want string
	}{
		{[]string{"p2p/listen", "/y/a", "/ip4/127.0.0.1/tcp/1"}, nil, "protocol name must be within '/x/' namespace"},
		{[]string{"p2p/forward", "a", "/ip4/127.0.0.1/tcp/0", bp}, nil, "protocol name must be within '/x/' namespace"},
		{[]string{"p2p/listen", "/x/a", "ip4/127.0.0.1"}, nil, "failed to parse multiaddr \"ip4/127.0.0.1\": must begin with /"},
		{[]string{"p2p/listen", "/x/a", "/ip4/127.0.0.1"}, nil, "address does not contain tcp or udp protocol"},
		{[]string{"p2p/listen", "/x/a", "/ip4/127.0.0.1/tcp/0"}, nil, "port can not be 0"},
		{[]string{"p2p/forward", "/x/a", "/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/tcp/4001"}, nil, "fail to resolve the multiaddr:/ip4/127.0.0.1/tcp/4001"},
		{[]string{"p2p/forward", "/x/a", "/ip4/127.0.0.1/udp/0", bp}, nil, "listen udp4 127.0.0.1:0: address 127.0.0.1:0: unexpected address type"},
		{[]string{"p2p/forward", "/x/a", "/ip4/127.0.0.1/tcp/0", "/p2p/nope"}, nil, "failed to parse multiaddr \"/p2p/nope\": invalid value \"nope\" for protocol p2p: failed to parse p2p addr: nope invalid cid: selected encoding not supported"},
		{[]string{"p2p/close"}, nil, "no matching options given"},
		{[]string{"p2p/close"}, map[string]string{"all": "true", "protocol": "/x/a"}, "can't combine --all with other matching options"},
		{[]string{"p2p/close"}, map[string]string{"listen-address": "nope"}, "failed to parse multiaddr \"nope\": must begin with /"},
		{[]string{"p2p/stream/close"}, nil, "no id specified"},
		{[]string{"p2p/stream/close", "x"}, nil, "strconv.ParseUint: parsing \"x\": invalid syntax"},
	} {
		wantErr(t, callErr(t, a, c.args[0], c.args[1:], c.opts, nil), c.want)
	}

	// A custom protocol is allowed when asked; a second listener on a
	// protocol, or a forwarder on a taken address, is refused.
	mustCall(t, b, "p2p/listen", []string{"/custom/1", "/ip4/127.0.0.1/tcp/9"}, map[string]string{"allow-custom-protocol": "true"}, nil)
	wantErr(t, callErr(t, b, "p2p/listen", []string{"/custom/1", "/ip4/127.0.0.1/tcp/10"}, map[string]string{"allow-custom-protocol": "true"}, nil), "listener already registered")
	wantErr(t, callErr(t, b, "p2p/listen", []string{"/ipfs/id/1.0.0", "/ip4/127.0.0.1/tcp/10"}, map[string]string{"allow-custom-protocol": "true"}, nil), "protocol /ipfs/id/1.0.0 is already served by this node")
	mustCall(t, a, "p2p/forward", []string{"/custom/1", "/ip4/127.0.0.1/tcp/0", bp}, map[string]string{"allow-custom-protocol": "true"}, nil)
	taken := p2pListeners(t, a)[0].ListenAddress
	err := callErr(t, a, "p2p/forward", []string{"/x/other", taken, bp}, nil, nil)
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("second forwarder on %s: %v", taken, err)
	}
	if v := mustCall(t, b, "p2p/stream/close", nil, map[string]string{"all": "true"}, nil).Values; len(v) != 0 {
		t.Fatalf("stream/close answered %v", v)
	}
}

// Ensure p2p/close matches listeners by protocol, listen address and
// target address (all given must match), counts what it closed, and
// that p2p/ls (JSON over HTTP, text with --headers) reflects it.
func TestP2P_CloseAndLs(t *testing.T) {
	a, b := p2pPair(t)
	srv := testutil.StartServer(t, a)
	bp := "/p2p/" + b.PeerID.String()
	for _, p := range []string{"/x/one", "/x/two", "/x/three"} {
		mustCall(t, a, "p2p/forward", []string{p, "/ip4/127.0.0.1/tcp/0", bp}, nil, nil)
		mustCall(t, a, "p2p/listen", []string{p, "/ip4/127.0.0.1/tcp/7"}, nil, nil)
	}
	resp := rpcPost(t, srv, "p2p/ls", nil, nil, "")
	var out struct{ Listeners []map[string]string }
	if err := json.Unmarshal(readAll(t, resp.Body), &out); err != nil || resp.StatusCode != 200 || len(out.Listeners) != 6 {
		t.Fatalf("p2p/ls: %d %v %+v", resp.StatusCode, err, out)
	}
	if out.Listeners[0]["Protocol"] != "/x/one" || out.Listeners[3]["ListenAddress"] != "/p2p/"+a.PeerID.String() {
		t.Fatalf("p2p/ls order: %+v", out.Listeners)
	}
	text := string(readAll(t, rpcPost(t, srv, "p2p/ls", url.Values{"headers": {"true"}, "encoding": {"text"}}, nil, "").Body))
	if !strings.HasPrefix(text, "Protocol Listen Address") || strings.Count(text, "\n") != 7 {
		t.Fatalf("p2p/ls text:\n%s", text)
	}

	closeQ := func(q url.Values) string {
		return strings.TrimSpace(string(readAll(t, rpcPost(t, srv, "p2p/close", q, nil, "").Body)))
	}
	if got := closeQ(url.Values{"protocol": {"/x/one"}, "target-address": {bp}}); got != "1" {
		t.Fatalf("close forwarder of /x/one: %s", got)
	}
	if got := closeQ(url.Values{"listen-address": {"/p2p/" + a.PeerID.String()}, "target-address": {"/ip4/127.0.0.1/tcp/7"}}); got != "3" {
		t.Fatalf("close services: %s", got)
	}
	if got := closeQ(url.Values{"protocol": {"/x/none"}}); got != "0" {
		t.Fatalf("close nothing: %s", got)
	}
	left := p2pListeners(t, a)
	if len(left) != 2 || left[0].Protocol != "/x/three" || left[1].Protocol != "/x/two" {
		t.Fatalf("left: %+v", left)
	}
	resp = rpcPost(t, srv, "p2p/close", nil, nil, "")
	wantErrorJSON(t, resp, 500, "no matching options given")
	if got := closeQ(url.Values{"all": {"true"}}); got != "2" {
		t.Fatalf("close all: %s", got)
	}
	if text := string(readAll(t, rpcPost(t, srv, "p2p/ls", nil, nil, "").Body)); text != `{"Listeners":null}`+"\n" {
		t.Fatalf("p2p/ls of none: %q", text)
	}
}

// Ensure a connection forwarded to a listener whose target port is
// closed is closed at once, leaves no stream behind and no goroutine.
func TestP2P_ForwardToClosedPort(t *testing.T) {
	a, b := p2pPair(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	base := runtime.NumGoroutine()
	mustCall(t, b, "p2p/listen", []string{"/x/closed", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port)}, nil, nil)
	mustCall(t, a, "p2p/forward", []string{"/x/closed", "/ip4/127.0.0.1/tcp/0", "/p2p/" + b.PeerID.String()}, nil, nil)
	addr := strings.Replace(strings.TrimPrefix(p2pListeners(t, a)[0].ListenAddress, "/ip4/"), "/tcp/", ":", 1)
	for range 3 {
		c := dialTunnel(t, addr)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte("anyone?"))
		if n, err := c.Read(make([]byte, 10)); n != 0 || err == nil || strings.Contains(err.Error(), "timeout") {
			t.Fatalf("read from a tunnel to a closed port: %d, %v", n, err)
		}
		c.Close()
	}
	waitFor(t, 10*time.Second, "no streams", func() bool { return len(p2pStreams(t, a)) == 0 && len(p2pStreams(t, b)) == 0 })
	mustCall(t, a, "p2p/close", nil, map[string]string{"all": "true"}, nil)
	mustCall(t, b, "p2p/close", nil, map[string]string{"all": "true"}, nil)
	settleGoroutines(t, base, 2)
}

// Ensure stream/ls lists a live stream and stream/close (by id, then
// --all) ends it: the client's connection ends, the stream is gone.
func TestP2P_StreamClose(t *testing.T) {
	a, b := p2pPair(t)
	addr := testutil.P2PTunnel(t, a, b, "/x/sc", testutil.EchoServer(t))
	open := func() net.Conn {
		c := dialTunnel(t, addr)
		if res, err := tcpecho.RoundTrip(c, 1000, 1); err != nil || res.Sent != res.Got {
			t.Fatalf("round trip: %v", err)
		}
		return c
	}
	c1, c2, c3 := open(), open(), open()
	ss := p2pStreams(t, a)
	if len(ss) != 3 {
		t.Fatalf("A's streams: %+v", ss)
	}
	ended := func(c net.Conn) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
			t.Fatalf("connection not ended: %v", err)
		}
	}
	mustCall(t, a, "p2p/stream/close", []string{ss[1].HandlerID}, nil, nil)
	ended(c2)
	waitFor(t, 10*time.Second, "two streams left", func() bool { return len(p2pStreams(t, a)) == 2 })
	if left := p2pStreams(t, a); left[0].HandlerID != ss[0].HandlerID || left[1].HandlerID != ss[2].HandlerID {
		t.Fatalf("left: %+v", left)
	}
	// The other node's side of a closed stream goes too.
	waitFor(t, 10*time.Second, "B's side to follow", func() bool { return len(p2pStreams(t, b)) == 2 })
	mustCall(t, b, "p2p/stream/close", nil, map[string]string{"all": "true"}, nil)
	ended(c1)
	ended(c3)
	waitFor(t, 10*time.Second, "no streams", func() bool { return len(p2pStreams(t, a)) == 0 && len(p2pStreams(t, b)) == 0 })
}

// Ensure a peer that goes away in the middle of a transfer ends the
// client's connection on the other side (nothing hangs), and that what
// the tunnel started is gone afterwards.
func TestP2P_PeerVanishesMidStream(t *testing.T) {
	a := testutil.P2PNode(t)
	base := runtime.NumGoroutine()
	b := testutil.P2PNode(t)
	testutil.Connect(t, a, b)
	echo := testutil.EchoServer(t)
	addr := testutil.P2PTunnel(t, a, b, "/x/vanish", echo)
	c := dialTunnel(t, addr)
	done := make(chan error, 1)
	go func() {
		_, err := tcpecho.RoundTrip(c, 1<<40, 2) // more than will ever pass
		done <- err
	}()
	waitFor(t, 10*time.Second, "the stream", func() bool { return len(p2pStreams(t, b)) == 1 })
	time.Sleep(100 * time.Millisecond)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the transfer ended without an error")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the client's connection did not end after the peer went")
	}
	waitFor(t, 10*time.Second, "A's stream to go", func() bool { return len(p2pStreams(t, a)) == 0 })
	mustCall(t, a, "p2p/close", nil, map[string]string{"all": "true"}, nil)
	echo.Close()
	settleGoroutines(t, base, 4)
}
