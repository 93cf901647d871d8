package gateway_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cairn/gateway"
	"cairn/internal/testutil"
	"cairn/node/config"

	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"
)

// Ensure /p2p/ proxies HTTP to a peer's p2p listen service while
// Experimental.P2pHttpProxy is on, as Kubo's gateway does: the path after
// /http/ and the query reach the service, with the peer's ID as Host and
// the X-Forwarded headers; the answer's status, headers and body come
// back; a bad path is 400, a peer without the service 502, and without
// the flag /p2p/ is 404.
func TestGateway_P2PHttpProxy(t *testing.T) {
	type seen struct {
		method, uri, host, fwdFor, fwdHost, body string
	}
	got := make(chan seen, 4)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Host"), string(b)}
		w.Header().Set("X-Service", "yes")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "from the service: "+r.URL.Path)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	service := testutil.MustOnlineNode(t, "none", nil)
	target, err := ma.NewMultiaddr("/ip4/127.0.0.1/tcp/" + strings.Split(l.Addr().String(), ":")[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []protocol.ID{"/x/app/http", "/http"} {
		if _, err := service.Net.P2P.Listen(proto, target, false); err != nil {
			t.Fatal(err)
		}
	}
	proxy := testutil.MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Experimental.P2pHttpProxy", true)
	})
	testutil.Connect(t, proxy, service)
	s := &site{n: proxy, url: serve(t, proxy, gateway.Options{})}
	id := service.PeerID.String()

	resp, body := s.do(t, "GET", "/p2p/"+id+"/x/app/http/some/page?q=1")
	if resp.StatusCode != http.StatusTeapot || string(body) != "from the service: /some/page" || resp.Header.Get("X-Service") != "yes" {
		t.Fatalf("proxied GET: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("the gateway's CORS header on the service's answer: %q", v)
	}
	select {
	case r := <-got:
		if r.method != "GET" || r.uri != "/some/page?q=1" || r.host != id || r.fwdFor != "127.0.0.1" || !strings.HasPrefix(r.fwdHost, "127.0.0.1:") {
			t.Errorf("the service saw %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the service saw no request")
	}
	resp, body = s.send(t, "POST", "/p2p/"+id+"/http/form", []byte("a=b"))
	if resp.StatusCode != http.StatusTeapot || string(body) != "from the service: /form" {
		t.Errorf("proxied POST: %d %q", resp.StatusCode, body)
	}
	if r := <-got; r.method != "POST" || r.body != "a=b" {
		t.Errorf("the service saw %+v", r)
	}

	resp, body = s.do(t, "GET", "/p2p/"+id+"/nothttp/x")
	wantAnswer(t, "a bad path", resp, body, 400, "failed to parse request: invalid request path '/p2p/"+id+"/nothttp/x'\n")
	resp, body = s.do(t, "GET", "/p2p/notapeer/http/x")
	wantAnswer(t, "a bad peer ID", resp, body, 400, "failed to parse request: invalid request path '/p2p/notapeer/http/x'\n")
	resp, body = s.do(t, "GET", "/p2p/"+id+"/x/other/http/x")
	if resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(string(body), "cannot reach "+id+" over /x/other/http: ") {
		t.Errorf("a service the peer lacks: %d %q", resp.StatusCode, body)
	}

	plain := &site{n: service, url: serve(t, service, gateway.Options{})}
	resp, body = plain.do(t, "GET", "/p2p/"+proxy.PeerID.String()+"/http/x")
	wantAnswer(t, "without the flag", resp, body, 404, "404 page not found\n")
}
