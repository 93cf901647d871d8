// origin.go: the Origin / Referer / User-Agent gate and CORS preflight.

package rpc

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
)

func localPort(ctx *fasthttp.RequestCtx) string {
	if a, ok := ctx.LocalAddr().(*net.TCPAddr); ok {
		return strconv.Itoa(a.Port)
	}
	return ""
}

// companionOrigins are the ipfs-companion browser extension (release and
// beta), which Kubo 0.42 always allows.
var companionOrigins = []string{
	"chrome-extension://nibjojkomfdiaoajekhjakgkdhaomnch",
	"chrome-extension://hjoieblefckbooibpepigmacodalfndh",
}

// allowedOrigins is the configured list plus the localhost origins of the
// listener's port and the companion origins (0.42 behaviour: always
// appended).
func (s *Server) allowedOrigins(port string) []string {
	out := make([]string, 0, len(s.origins)+6+len(companionOrigins))
	for _, o := range s.origins {
		out = append(out, strings.ReplaceAll(o, "<port>", port))
	}
	for _, h := range []string{"127.0.0.1", "[::1]", "localhost"} {
		out = append(out, "http://"+h+":"+port, "https://"+h+":"+port)
	}
	return append(out, companionOrigins...)
}

func (s *Server) originAllowed(origin, port string) bool {
	for _, o := range s.allowedOrigins(port) {
		if o == "*" || o == origin {
			return true
		}
	}
	return false
}

func (s *Server) setACAO(ctx *fasthttp.RequestCtx, origin, port string) {
	v := origin
	for _, o := range s.allowedOrigins(port) {
		if o == "*" {
			v = "*"
		}
	}
	ctx.Response.Header.Set("Access-Control-Allow-Origin", v)
	if s.creds {
		ctx.Response.Header.Set("Access-Control-Allow-Credentials", "true")
	}
}

// gate is the Origin / Referer / User-Agent check.
func (s *Server) gate(ctx *fasthttp.RequestCtx, origin, port string) bool {
	if origin != "" && !s.originAllowed(origin, port) {
		return false
	}
	ref := string(ctx.Request.Header.Peek("Referer"))
	if ref != "" {
		u, err := url.Parse(ref)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return false
		}
		if !s.originAllowed(u.Scheme+"://"+u.Host, port) {
			return false
		}
	}
	if origin == "" && ref == "" {
		ua := string(ctx.Request.Header.UserAgent())
		if strings.HasPrefix(ua, "Mozilla") && !strings.Contains(ua, "Electron") {
			return false
		}
	}
	return true
}

func (s *Server) preflight(ctx *fasthttp.RequestCtx, origin, port string) {
	h := &ctx.Response.Header
	h.Set("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	ctx.SetStatusCode(204)
	if origin == "" || !s.originAllowed(origin, port) {
		return
	}
	method := strings.ToUpper(string(ctx.Request.Header.Peek("Access-Control-Request-Method")))
	ok := false
	for _, m := range s.methods {
		if strings.EqualFold(m, method) {
			ok = true
		}
	}
	if !ok {
		return
	}
	reqHeaders := string(ctx.Request.Header.Peek("Access-Control-Request-Headers"))
	for _, rh := range strings.Split(reqHeaders, ",") {
		rh = strings.TrimSpace(rh)
		if rh == "" {
			continue
		}
		switch strings.ToLower(rh) {
		case "origin", "accept", "content-type", "x-requested-with":
		default:
			return
		}
	}
	s.setACAO(ctx, origin, port)
	h.Set("Access-Control-Allow-Methods", method)
	if reqHeaders != "" {
		h.Set("Access-Control-Allow-Headers", reqHeaders)
	}
}
