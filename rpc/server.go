// server.go: the /api/v0/ server on fasthttp: lifecycle, and the request
// checks in Kubo's processing order (auth.go,
// origin.go), before dispatch.go runs the command.

package rpc

import (
	"context"
	"errors"
	"math"
	"net"
	"net/netip"
	"net/url"
	pathpkg "path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cairn/internal/connlimit"
	"cairn/node"
	"cairn/node/config"

	logging "github.com/ipfs/go-log/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
)

const (
	apiPrefix = "/api/v0/"
	// maxBodyArgBytes caps the first part read as argument lines.
	maxBodyArgBytes = 16 << 20
	exposed         = "X-Stream-Output, X-Chunked-Output, X-Content-Length"
	deniedAuth      = "Kubo RPC Access Denied: Please provide a valid authorization token as defined in the API.Authorizations configuration."
)

// Server serves the command table over HTTP.
type Server struct {
	Table   *Table
	Node    *node.Node
	Env     *Env
	srv     *fasthttp.Server
	ctx     context.Context
	cancel  context.CancelFunc
	headers map[string][]string
	origins []string // configured allowed origins
	methods []string
	creds   bool
	auth    Auth // API.Authorizations; nil: none

	metrics *serverMetrics
	// running holds the hang-up watch of every open connection (and of
	// a command on another kind of connection while it runs): Shutdown
	// stops their commands through them.
	running sync.Map // *hangupWatch => struct{}

	guard *connlimit.Guard
	idle  time.Duration // IdleTimeout

	afterLong func()        // ServerOptions.AfterLong
	long      time.Duration // ServerOptions.LongRequest

	mu        sync.Mutex
	listeners []net.Listener
	refusing  atomic.Bool // set by Refuse
}

// ServerOptions size the server; zero values mean defaults.
type ServerOptions struct {
	// Concurrency caps simultaneous connections (default 256); a quarter
	// of it is kept for loopback clients, and one other client address
	// may hold an eighth (at least 16). See package connlimit.
	Concurrency int
	// HeaderTimeout bounds the wait for a request's first byte and then
	// for the rest of its head (default 10s); IdleTimeout the wait for
	// the next request on a kept-alive connection and for each read of a
	// body (default 2m).
	HeaderTimeout, IdleTimeout time.Duration
	// IsLocal says which client addresses get the loopback share and no
	// per-address limit (nil: loopback addresses).
	IsLocal func(netip.Addr) bool
	// MaxHeaderBytes caps the request line and headers; larger requests
	// get 431 (default 256 KiB).
	MaxHeaderBytes int
	// ServerHeader is the value of the Server header.
	ServerHeader string
	// Collectors are served on MetricsPath beside the node's metrics.
	Collectors []prometheus.Collector
	// AfterLong is called when a command that ran LongRequest or longer
	// (default 200ms) has returned, before its answer's last bytes go
	// out: the daemon returns the memory the command left (memtarget's
	// Settle), so that the client finds it back near idle.
	AfterLong   func()
	LongRequest time.Duration
}

// NewServer prepares a server for n's config.
func NewServer(n *node.Node, t *Table, env *Env, o ServerOptions) *Server {
	if o.Concurrency <= 0 {
		o.Concurrency = 256
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 256 << 10
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.LongRequest <= 0 {
		o.LongRequest = 200 * time.Millisecond
	}
	if env != nil && env.Requests == nil {
		env.Requests = &ReqLog{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{Table: t, Node: n, Env: env, ctx: ctx, cancel: cancel,
		methods: []string{"POST"}, idle: o.IdleTimeout, afterLong: o.AfterLong, long: o.LongRequest,
		guard: connlimit.New(connlimit.Limits{Capacity: o.Concurrency, FirstByte: o.HeaderTimeout, IsLocal: o.IsLocal})}
	s.metrics = newServerMetrics(append([]prometheus.Collector{n.Collector()}, o.Collectors...)...)
	s.configure(n.Config().API)
	s.srv = &fasthttp.Server{
		Handler: s.handle,
		Name:    o.ServerHeader,
		// The guard admits at most Concurrency; fasthttp counts a
		// connection a moment longer than the guard does.
		Concurrency:                   2 * o.Concurrency,
		ReadBufferSize:                o.MaxHeaderBytes,
		WriteBufferSize:               32 << 10,
		StreamRequestBody:             true,
		MaxRequestBodySize:            math.MaxInt, // bodies stream; 1<<62 overflows int on 32-bit ARM
		DisablePreParseMultipartForm:  true,
		DisableHeaderNamesNormalizing: false,
		NoDefaultContentType:          true,
		NoDefaultDate:                 false,
		ReduceMemoryUsage:             true,
		// A request head must arrive within HeaderTimeout of its first
		// byte (the guard bounds the wait for that byte); its body is
		// then read with IdleTimeout per read (handle: ReadIdle).
		ReadTimeout: o.HeaderTimeout,
		HeaderReceived: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			if cl := h.ContentLength(); cl == 0 || cl == -2 {
				// No body (-2: neither Content-Length nor
				// chunked, which fasthttp reads as none): the
				// next read is the next request's, under its
				// own deadline.
				return fasthttp.RequestConfig{}
			}
			return fasthttp.RequestConfig{ReadTimeout: o.IdleTimeout}
		},
		IdleTimeout: o.IdleTimeout,
		Logger:      quietLogger{},
	}
	return s
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

func (s *Server) configure(api config.API) {
	s.headers = map[string][]string{}
	for k, v := range api.HTTPHeaders {
		switch strings.ToLower(k) {
		case "access-control-allow-origin":
			s.origins = append(s.origins, v...)
		case "access-control-allow-methods":
			if len(v) > 0 {
				s.methods = v
			}
		case "access-control-allow-credentials":
			for _, x := range v {
				if strings.EqualFold(x, "true") {
					s.creds = true
				}
			}
		default:
			s.headers[k] = v
		}
	}
	s.auth = NewAuth(api.Authorizations)
}

// Serve serves on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	err := s.srv.Serve(s.guard.Listener(corkListener{Listener: l, running: &s.running}))
	if s.ctx.Err() != nil || s.refusing.Load() {
		return nil
	}
	return err
}

// Refuse makes the server refuse new requests from now on, as Kubo's
// does once a shutdown is acknowledged: the listeners close (a new
// connection is refused), a request on a kept-alive connection gets 503,
// and every answer closes its connection. Requests already running go on
// until Shutdown.
func (s *Server) Refuse() {
	s.refusing.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		_ = l.Close()
	}
}

// Shutdown stops accepting, cancels running commands and waits up to
// timeout for open requests.
func (s *Server) Shutdown(timeout time.Duration) error {
	s.cancel()
	s.running.Range(func(w, _ any) bool {
		w.(*hangupWatch).cancelRunning()
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.srv.ShutdownWithContext(ctx)
}

func textError(ctx *fasthttp.RequestCtx, status int, msg string) {
	ctx.Response.Header.Set("Content-Type", "text/plain; charset=utf-8")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.SetStatusCode(status)
	ctx.SetBodyString(msg + "\n")
}

// log is the server's logger, named as go-ipfs-cmds' HTTP server's.
var log = logging.Logger("cmds/http")

func (s *Server) logf(format string, a ...any) { log.Errorf(format, a...) }

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	// The body may take its time, as long as it keeps coming.
	connlimit.ReadIdle(ctx.Conn(), s.idle)
	if s.refusing.Load() {
		ctx.SetConnectionClose()
		textError(ctx, 503, "the daemon is shutting down")
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.logf("rpc: panic serving %s: %v", ctx.Path(), r)
			ctx.Response.Reset()
			s.writeErrorJSON(ctx, "json", errors.New("an error occurred"))
		}
	}()
	tr := &tracking{start: ctx.Time()} // fasthttp's clock reading as the handler starts
	defer func() {
		if !tr.streamed {
			end := tr.end
			if end.IsZero() {
				end = time.Now()
			}
			s.metrics.observe(methodLabel(ctx.Method()), ctx.Response.StatusCode(), tr.command, end.Sub(tr.start), end)
		}
	}()
	// fasthttp normalises Path(); read the original to answer
	// non-canonical paths with a redirect, as Go's mux does.
	path := string(ctx.URI().PathOriginal())
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	if path == "/api/v0" {
		redirect(ctx, "/api/v0/")
		return
	}
	if path == MetricsPath {
		if s.auth != nil && !s.authorized(ctx, path) {
			textError(ctx, 403, deniedAuth)
			return
		}
		s.serveMetrics(ctx)
		return
	}
	if !strings.HasPrefix(path, apiPrefix) {
		textError(ctx, 404, "404 page not found")
		return
	}
	if clean := cleanPath(path); clean != path {
		redirect(ctx, clean)
		return
	}
	if s.auth != nil && !s.authorized(ctx, path) {
		textError(ctx, 403, deniedAuth)
		return
	}
	origin := string(ctx.Request.Header.Peek("Origin"))
	var port string // the listener's, for the origin checks
	if origin != "" || ctx.IsOptions() || len(ctx.Request.Header.Peek("Referer")) > 0 {
		port = localPort(ctx)
	}
	if ctx.IsOptions() {
		if len(ctx.Request.Header.Peek("Access-Control-Request-Method")) > 0 {
			s.preflight(ctx, origin, port)
			return
		}
		ctx.Response.Header.Set("Allow", "OPTIONS, POST")
		ctx.SetStatusCode(204)
		return
	}
	ctx.Response.Header.Add("Vary", "Origin")
	if origin != "" && s.originAllowed(origin, port) {
		s.setACAO(ctx, origin, port)
	}
	if !ctx.IsPost() {
		ctx.Response.Header.Set("Allow", "OPTIONS, POST")
		textError(ctx, 405, "405 - Method Not Allowed")
		return
	}
	if !s.gate(ctx, origin, port) {
		textError(ctx, 403, "403 - Forbidden")
		return
	}
	s.dispatch(ctx, strings.TrimPrefix(path, apiPrefix), tr)
}

// tracking is what the metrics need of one request; a streamed answer
// is recorded when it ends (streamed), not when the handler returns.
type tracking struct {
	start, end time.Time // end: when the command's answer was done (zero: not yet)
	command    string
	streamed   bool
}

// cleanPath returns the canonical form of p (Go's mux rules).
func cleanPath(p string) string {
	np := pathpkg.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

func redirect(ctx *fasthttp.RequestCtx, to string) {
	if q := ctx.URI().QueryString(); len(q) > 0 {
		to += "?" + string(q)
	}
	// 307 as Kubo 0.42 (Go's mux): unlike a 301, clients repeat the POST
	// with its body. Go's redirect writes a body for GET only.
	ctx.Response.Header.Set("Location", to)
	ctx.SetStatusCode(307)
	if ctx.IsGet() || ctx.IsHead() {
		ctx.Response.Header.Set("Content-Type", "text/html; charset=utf-8")
	}
	if ctx.IsGet() {
		ctx.SetBodyString("<a href=\"" + to + "\">Temporary Redirect</a>.\n\n")
	}
}
