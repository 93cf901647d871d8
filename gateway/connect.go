// connect.go: CONNECT to the gateway itself. A client that uses the
// gateway as its HTTP proxy through a tunnel (curl --proxytunnel, the
// suite's proxy client) asks CONNECT <host>:<port> and then sends its
// requests on the same connection. Kubo's gateway answers those requests
// as its own; so does this one, but only when the target is the gateway
// itself: its own address and port, localhost or a loopback address at
// its port, or a host it serves (a configured gateway host or a subdomain
// of one). The tunnel is then the connection itself, read on as requests
// to this server, under the same bounds as any connection; nothing is
// ever dialled, so the gateway is no proxy to anywhere else, and CONNECT
// to any other target is 403 and closes the connection.

package gateway

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/valyala/fasthttp"
)

// connect answers a CONNECT request.
func (s *Server) connect(ctx *fasthttp.RequestCtx) {
	target := string(ctx.Request.Header.RequestURI())
	if !s.isSelf(ctx, target) {
		ctx.SetConnectionClose()
		plainError(ctx, http.StatusForbidden, "CONNECT is answered for this gateway's own hosts only")
		return
	}
	// 200 opens the tunnel: no body (clients ignore the length a 2xx
	// answer to CONNECT carries), and the connection stays open for the
	// requests to come.
	ctx.SetStatusCode(http.StatusOK)
	ctx.Response.SkipBody = true
}

// isSelf reports whether a CONNECT target (host:port) names this gateway.
func (s *Server) isSelf(ctx *fasthttp.RequestCtx, target string) bool {
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" {
		return false
	}
	if _, ok := s.hosts.known(target); ok && !isLocalName(host) {
		return true
	}
	if _, _, _, _, ok := s.hosts.subdomain(host); ok {
		return true
	}
	local, ok := ctx.LocalAddr().(*net.TCPAddr)
	if !ok || port != strconv.Itoa(local.Port) {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	la, _ := netip.AddrFromSlice(local.IP)
	return ip.IsLoopback() || ip.Unmap() == la.Unmap()
}

// isLocalName reports a name of a machine rather than of a gateway
// (localhost, an IP address): there, only the gateway's own port is the
// gateway.
func isLocalName(host string) bool {
	_, err := netip.ParseAddr(host)
	return host == "localhost" || err == nil
}
