// server.go: the gateway's HTTP server on fasthttp: lifecycle, the
// per-address connection guard, the cap on requests in flight, the
// headers every answer carries, and the routes (/ipfs/, /ipns/,
// /routing/v1/, /version, the root redirect; everything else is 404,
// /api/v0/ included).

package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"cairn/internal/connlimit"
	"cairn/node"
	"cairn/node/config"

	logging "github.com/ipfs/go-log/v2"
	"github.com/valyala/fasthttp"
)

var log = logging.Logger("gateway")

// Defaults of the Gateway keys, as Kubo 0.43 has them.
const (
	DefaultMaxRequestDuration = time.Hour
	DefaultRetrievalTimeout   = 30 * time.Second
)

// Options size the server; zero values mean defaults.
type Options struct {
	// Concurrency caps simultaneous connections (256) and, unless
	// Gateway.MaxConcurrentRequests is lower, requests in flight. The
	// daemon passes the board budget's HTTPConcurrency. One non-local
	// client address may hold an eighth of it (at least 16).
	Concurrency int
	// HeaderTimeout bounds the wait for a request's head (10s),
	// IdleTimeout the wait for the next request on a kept-alive
	// connection (2m); WriteTimeout bounds each write of an answer (2m),
	// so a client that stops reading is dropped while one that reads
	// slowly may take as long as Gateway.MaxRequestDuration.
	HeaderTimeout, IdleTimeout, WriteTimeout time.Duration
	// IsLocal says which client addresses get the loopback share and no
	// per-address limit (nil: loopback addresses).
	IsLocal func(netip.Addr) bool
	// Offline serves only blocks in the store (the daemon's --offline;
	// Gateway.NoFetch does the same).
	Offline bool
	// ServerHeader is the value of the Server header.
	ServerHeader string
}

// Server serves the node's content read-only over HTTP.
type Server struct {
	n       *node.Node
	cfg     config.Gateway
	headers [][2]string // Gateway.HTTPHeaders with Kubo's CORS defaults
	hosts   *hostGateways
	offline bool
	maxDur  time.Duration
	// retrieval bounds the work before an answer's first byte (resolving
	// the path, the first block): Gateway.RetrievalTimeout.
	retrieval time.Duration
	maxFile   int64 // Gateway.MaxRangeRequestFileSize; 0: no cap
	slots     chan struct{}
	srv       *fasthttp.Server
	guard     *connlimit.Guard
	ctx       context.Context
	cancel    context.CancelFunc

	mu        sync.Mutex
	listeners []net.Listener

	// routingAPI serves /routing/v1/ (Gateway.ExposeRoutingAPI).
	routingAPI bool
	// p2pProxy serves /p2p/ (Experimental.P2pHttpProxy).
	p2pProxy bool
}

// New prepares a gateway for n's config (its Gateway section).
func New(n *node.Node, o Options) (*Server, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 256
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 2 * time.Minute
	}
	cfg := n.Config().Gateway
	s := &Server{n: n, cfg: cfg, offline: o.Offline || cfg.NoFetch,
		maxDur: cfg.MaxRequestDuration.WithDefault(DefaultMaxRequestDuration)}
	if s.maxDur <= 0 {
		return nil, fmt.Errorf("config Gateway.MaxRequestDuration %s: want a positive duration", s.maxDur)
	}
	s.routingAPI = cfg.ExposeRoutingAPI.WithDefault(true)
	s.p2pProxy = n.Config().Experimental.P2pHttpProxy
	s.retrieval = cfg.RetrievalTimeout.WithDefault(DefaultRetrievalTimeout)
	if s.retrieval <= 0 {
		s.retrieval = s.maxDur
	}
	if v := cfg.MaxRangeRequestFileSize; v != nil && !v.IsDefault() {
		b, err := config.ParseSize("Gateway.MaxRangeRequestFileSize", v.WithDefault(""))
		if err != nil {
			return nil, err
		}
		s.maxFile = int64(b)
	}
	slots := o.Concurrency
	if m := cfg.MaxConcurrentRequests.WithDefault(0); m > 0 && int(m) < slots {
		slots = int(m)
	}
	s.slots = make(chan struct{}, slots)
	s.headers = corsHeaders(cfg.HTTPHeaders)
	s.hosts = newHostGateways(cfg)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.guard = connlimit.New(connlimit.Limits{Capacity: o.Concurrency, FirstByte: o.HeaderTimeout, IsLocal: o.IsLocal, WriteIdle: o.WriteTimeout})
	s.srv = &fasthttp.Server{
		Handler:         s.handle,
		Name:            o.ServerHeader,
		Concurrency:     2 * o.Concurrency,
		ReadBufferSize:  16 << 10,
		WriteBufferSize: 64 << 10,
		// Writes are bounded one by one (the guard's WriteIdle), not as
		// a whole: a video may take an hour to send.
		ReadTimeout:                   o.HeaderTimeout,
		IdleTimeout:                   o.IdleTimeout,
		MaxRequestBodySize:            64 << 10, // a read-only gateway takes no uploads
		DisablePreParseMultipartForm:  true,
		DisableHeaderNamesNormalizing: false,
		NoDefaultContentType:          true,
		ReduceMemoryUsage:             true,
		Logger:                        quietLogger{},
	}
	return s, nil
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// Serve serves on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	err := s.srv.Serve(s.guard.Listener(l))
	if s.ctx.Err() != nil {
		return nil
	}
	return err
}

// Shutdown stops accepting, cancels the requests in flight and waits up
// to timeout for their connections to close.
func (s *Server) Shutdown(timeout time.Duration) error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.srv.ShutdownWithContext(ctx)
}

// corsHeaders are Gateway.HTTPHeaders with the CORS headers Kubo's
// gateway adds unless configured: any origin, the read-only methods, and
// the request and exposed headers a browser needs for Range and the
// X-Ipfs-* headers (configured names are added to those two lists).
func corsHeaders(conf map[string][]string) [][2]string {
	m := map[string][]string{}
	for k, v := range conf {
		m[http.CanonicalHeaderKey(k)] = v
	}
	setDefault := func(k string, v ...string) {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	union := func(k string, v ...string) {
		set := map[string]bool{}
		for _, h := range append(v, m[k]...) {
			set[http.CanonicalHeaderKey(h)] = true
		}
		out := make([]string, 0, len(set))
		for h := range set {
			out = append(out, h)
		}
		sort.Strings(out)
		m[k] = out
	}
	setDefault("Access-Control-Allow-Origin", "*")
	setDefault("Access-Control-Allow-Methods", "GET", "HEAD", "OPTIONS")
	union("Access-Control-Allow-Headers", "Content-Type", "User-Agent", "Range", "X-Requested-With")
	union("Access-Control-Expose-Headers", "Content-Length", "Content-Range", "X-Chunked-Output", "X-Stream-Output", "Ipfs-Uri", "X-Ipfs-Roots")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][2]string
	for _, k := range keys {
		for _, v := range m[k] {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// handle answers one request. A panic becomes a 500, never a dropped
// connection with a half-written answer the client cannot tell apart.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	defer recoverPanic(ctx)
	if ctx.IsConnect() {
		s.connect(ctx)
		return
	}
	s.addHeaders(ctx)
	if protocolHandler(ctx, string(ctx.Path())) {
		return
	}
	hr := s.route(ctx, string(ctx.Path()))
	if hr.path == "" {
		return // answered from the Host alone
	}
	p := hr.path
	switch {
	case strings.HasPrefix(p, "/ipns/") && p == string(ctx.Path()) && canonicalIPNS(ctx, p):
		return
	case strings.HasPrefix(p, "/ipfs/"), strings.HasPrefix(p, "/ipns/"):
	case s.routingAPI && strings.HasPrefix(p, routingPrefix):
		s.serveRouting(ctx, p)
		return
	case s.p2pProxy && strings.HasPrefix(p, "/p2p/"):
		s.serveP2PProxy(ctx, p)
		return
	case p == "/version":
		fmt.Fprintf(ctx, "Commit: %s\nClient Version: %s\n", node.Commit, node.AgentVersion())
		ctx.SetContentType("text/plain; charset=utf-8")
		return
	case p == "/" && s.cfg.RootRedirect != "":
		ctx.Response.Header.Set("Location", s.cfg.RootRedirect)
		ctx.SetStatusCode(http.StatusFound)
		return
	default:
		// As Kubo's gateway mux: no route, and so no RPC either.
		plainError(ctx, http.StatusNotFound, "404 page not found")
		return
	}
	s.serveContent(ctx, hr)
}

// ServePath answers ctx for the content path p (/ipfs/<cid>[/path] or
// /ipns/<name>[/path]) as the path gateway does, whatever the request's
// Host and URL path: the entry of the gateway mounted inside another
// server (the http_ipfs module app). Methods, the cap on requests in
// flight, formats, Range, ETags and errors are the gateway's own; links
// of listings and redirects are made from the request's own URL path.
func (s *Server) ServePath(ctx *fasthttp.RequestCtx, p string) {
	defer recoverPanic(ctx)
	s.addHeaders(ctx)
	if !strings.HasPrefix(p, "/ipfs/") && !strings.HasPrefix(p, "/ipns/") {
		plainError(ctx, http.StatusNotFound, "404 page not found")
		return
	}
	s.serveContent(ctx, hostRoute{path: p})
}

// recoverPanic turns a handler's panic into a 500.
func recoverPanic(ctx *fasthttp.RequestCtx) {
	if r := recover(); r != nil {
		log.Errorf("gateway: panic serving %s: %v\n%s", ctx.Path(), r, debug.Stack())
		ctx.Response.Reset()
		ctx.SetStatusCode(http.StatusInternalServerError)
	}
}

// addHeaders adds the headers every answer carries (CORS and
// Gateway.HTTPHeaders).
func (s *Server) addHeaders(ctx *fasthttp.RequestCtx) {
	for _, h := range s.headers {
		ctx.Response.Header.Add(h[0], h[1])
	}
}

// serveContent answers a request for the content path hr.path: the
// method, a slot among the requests in flight, then the request itself.
func (s *Server) serveContent(ctx *fasthttp.RequestCtx, hr hostRoute) {
	switch string(ctx.Method()) {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		// The CORS headers above are the whole answer, as Kubo's.
		return
	default:
		addAllow(ctx)
		plainError(ctx, http.StatusMethodNotAllowed, "Method "+string(ctx.Method())+" not allowed: read only access")
		return
	}
	if !s.takeSlot(ctx) {
		return
	}
	sctx, cancel := context.WithTimeout(s.ctx, s.maxDur)
	if s.offline {
		sctx = node.OfflineContext(sctx)
	}
	rctx, cancelResolve := context.WithTimeout(sctx, s.retrieval)
	done := func() { cancelResolve(); cancel(); <-s.slots }
	rq := &request{s: s, ctx: ctx, rctx: rctx, sctx: sctx, path: hr.path, host: hr}
	if !rq.serve() {
		done()
		return
	}
	// The answer's body is being streamed: its reader ends the request.
	rq.body.setDone(done)
}

// takeSlot takes one of the request slots, or answers 429 when none is
// free; the caller gives it back (<-s.slots) when its request ends.
func (s *Server) takeSlot(ctx *fasthttp.RequestCtx) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
		ctx.Response.Header.Set("Retry-After", "60")
		plainError(ctx, http.StatusTooManyRequests, "Too Many Requests")
		return false
	}
}

func addAllow(ctx *fasthttp.RequestCtx) {
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodOptions} {
		ctx.Response.Header.Add("Allow", m)
	}
}

// plainError answers as Go's http.Error does (Kubo's gateway errors when
// the client does not ask for HTML).
func plainError(ctx *fasthttp.RequestCtx, code int, msg string) {
	ctx.Response.Header.Del("Content-Length")
	ctx.Response.Header.Set("Content-Type", "text/plain; charset=utf-8")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.SetStatusCode(code)
	ctx.SetBodyString(msg + "\n")
}

// errShutdown is the error of requests cut by Shutdown.
var errShutdown = errors.New("gateway shutting down")
