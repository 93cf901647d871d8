// p2pproxy.go: the libp2p HTTP proxy under /p2p/ (Kubo's
// Experimental.P2pHttpProxy): a request to /p2p/<peer>/http/<path> or
// /p2p/<peer>/x/<name>/http/<path> goes to that peer over a libp2p stream
// of protocol /http or /x/<name>/http (a service the peer runs with
// `p2p listen`), and its answer comes back.

package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/valyala/fasthttp"
)

// p2pTarget is what a /p2p/ path names.
type p2pTarget struct {
	peer  peer.ID
	proto protocol.ID
	path  string // the path to ask the peer for, without its leading /
}

// parseP2PPath reads /p2p/<peer>/http/<path> or
// /p2p/<peer>/x/<name>/http/<path>, as Kubo's proxy does.
func parseP2PPath(p string) (p2pTarget, error) {
	bad := fmt.Errorf("invalid request path '%s'", p)
	split := strings.SplitN(p, "/", 5)
	if len(split) < 5 {
		return p2pTarget{}, bad
	}
	id, err := peer.Decode(split[2])
	if err != nil {
		return p2pTarget{}, bad
	}
	if split[3] == "http" {
		return p2pTarget{id, "/http", split[4]}, nil
	}
	split = strings.SplitN(p, "/", 7)
	if len(split) < 7 || split[3] != "x" || split[5] != "http" {
		return p2pTarget{}, bad
	}
	return p2pTarget{id, protocol.ID("/x/" + split[4] + "/http"), split[6]}, nil
}

// hopHeaders are not passed on by a proxy (RFC 9110, 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// serveP2PProxy passes the request on to the peer its path names and
// streams the peer's answer back. The request's Host becomes the peer's
// ID and X-Forwarded-For, -Host and -Proto say where it came from, as
// Go's reverse proxy (Kubo's) sets them. A peer that cannot be reached,
// or does not answer HTTP, is 502 with the reason (Kubo's is empty).
func (s *Server) serveP2PProxy(ctx *fasthttp.RequestCtx, p string) {
	// The answer is the service's: none of the gateway's own headers
	// (its CORS headers would double the service's), as in Kubo.
	ctx.Response.Header.Reset()
	t, err := parseP2PPath(p)
	if err != nil {
		plainError(ctx, http.StatusBadRequest, "failed to parse request: "+err.Error())
		return
	}
	nt := s.n.Net
	if nt == nil {
		plainError(ctx, http.StatusBadGateway, "the node is offline: no peer can be reached")
		return
	}
	if !s.takeSlot(ctx) {
		return
	}
	qctx, cancel := context.WithTimeout(s.ctx, s.maxDur)
	done := func() { cancel(); <-s.slots }
	st, err := nt.CappedHost().NewStream(qctx, t.peer, t.proto)
	if err != nil {
		done()
		log.Infof("gateway: p2p proxy to %s %s: %v", t.peer, t.proto, err)
		plainError(ctx, http.StatusBadGateway, fmt.Sprintf("cannot reach %s over %s: %v", t.peer, t.proto, err))
		return
	}
	// The stream ends with the request: at the maximum duration, at
	// Shutdown, or when the answer has been sent.
	stop := context.AfterFunc(qctx, func() { st.Reset() })
	end := func() { stop(); st.Close(); done() }
	resp, err := s.proxyExchange(ctx, st, t)
	if err != nil {
		end()
		log.Infof("gateway: p2p proxy to %s %s: %v", t.peer, t.proto, err)
		plainError(ctx, http.StatusBadGateway, fmt.Sprintf("no HTTP answer from %s over %s: %v", t.peer, t.proto, err))
		return
	}
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			ctx.Response.Header.Add(k, v)
		}
	}
	ctx.SetStatusCode(resp.StatusCode)
	if ctx.IsHead() {
		resp.Body.Close()
		end()
		return
	}
	ctx.Response.SetBodyStream(&proxiedBody{body: resp.Body, end: end}, int(resp.ContentLength))
}

// proxyExchange writes the request to the stream and reads the head of
// the answer.
func (s *Server) proxyExchange(ctx *fasthttp.RequestCtx, st network.Stream, t p2pTarget) (*http.Response, error) {
	req := &fasthttp.Request{}
	ctx.Request.CopyTo(req)
	req.Header.DisableNormalizing()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	uri := "/" + t.path
	if q := ctx.URI().QueryString(); len(q) > 0 {
		uri += "?" + string(q)
	}
	req.SetRequestURI(uri)
	req.Header.SetHost(t.peer.String())
	req.Header.Set("X-Forwarded-Host", string(ctx.Host()))
	req.Header.Set("X-Forwarded-Proto", "http")
	if ip := ctx.RemoteIP(); ip != nil {
		req.Header.Set("X-Forwarded-For", ip.String())
	}
	req.SetConnectionClose()
	w := bufio.NewWriter(st)
	if err := req.Write(w); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	_ = st.CloseWrite()
	return http.ReadResponse(bufio.NewReader(st), nil)
}

// proxiedBody is the peer's answer as fasthttp reads it; closing it ends
// the stream and the request.
type proxiedBody struct {
	body io.ReadCloser
	end  func()
}

// Read passes the peer's body on; a peer that stops mid-answer cuts it
// (an error, not a short complete body).
func (b *proxiedBody) Read(p []byte) (int, error) { return b.body.Read(p) }

func (b *proxiedBody) Close() error {
	err := b.body.Close()
	b.end()
	return err
}
