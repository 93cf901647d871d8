// server.go: the Server: apps, listeners, and dispatch of one request
// through the route candidates, from the request object to the handler's
// return value.

package httpapp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cairn/internal/connlimit"
	"cairn/modules/events"

	"github.com/valyala/fasthttp"
)

// Options configure a Server; zero values mean the defaults in brackets.
type Options struct {
	// MaxBodySize caps a buffered request body (10 MiB). Larger bodies
	// get 413 and the connection is closed. Streaming apps read any size.
	MaxBodySize int64
	// ReadTimeout bounds reading one request (30s), WriteTimeout writing
	// one response (5m), IdleTimeout a kept-alive idle connection (2m),
	// HandlerTimeout the context of one handler chain (60s).
	ReadTimeout, WriteTimeout, IdleTimeout, HandlerTimeout time.Duration
	// UploadTimeout replaces ReadTimeout and HandlerTimeout for requests
	// to streaming apps (30m).
	UploadTimeout time.Duration
	// TrustedProxies are IPs or CIDRs whose X-Forwarded-For and
	// X-Forwarded-Proto are believed (127.0.0.1, ::1). An empty non-nil
	// slice trusts nobody.
	TrustedProxies []string
	// CORS adds Access-Control-* headers and answers OPTIONS preflights
	// on route paths (off).
	CORS bool
	// Paths maps app names to base paths, overriding DefaultPath.
	Paths map[string]string
	// Hosts are the names, besides "localhost" and IP literals, that a
	// request's Host may carry; any other gets 403 before a handler runs.
	// A page on a DNS-rebinding name (evil.example resolving to
	// 127.0.0.1) sends its own name as Host, so it never reaches an app.
	Hosts []string
	// Authorizations maps an Authorization header value ("Basic <b64>",
	// "Bearer <token>") to the URL path prefixes it may use. When it is
	// non-nil every request needs one: none or an unknown one gets 401
	// with a Basic challenge (browsers prompt for a login), a known one
	// outside its prefixes 403.
	Authorizations map[string][]string
	// AppLogin, when Authorizations is nil, is a login that the apps of
	// some modules need (see AppLogin); other apps need none.
	AppLogin *AppLogin
	// Concurrency caps simultaneous connections (64); a quarter of it is
	// kept for loopback clients, and one other client address may hold
	// 16 (package connlimit).
	Concurrency int
	// FirstByteTimeout bounds the wait for a new connection's first
	// request byte (10s); ReadTimeout then bounds the request.
	FirstByteTimeout time.Duration
	// IsLocal says which client addresses get the loopback share and no
	// per-address limit (nil: loopback addresses).
	IsLocal func(netip.Addr) bool
	// Log receives load errors and handler failures (slog.Default()).
	Log *slog.Logger
	// Events is the server's event bus (net.http.server's): every error
	// page comes from its "http-error" event (a new bus when nil).
	Events *events.Bus
	// Errors are mod_http_errors' options for the built-in pages.
	Errors ErrorPages
}

// AppLogin guards the apps of some modules: a request that a route of
// such an app could answer (for HEAD, a GET route too) needs an
// Authorization header that Accept takes. None, or one it refuses, gets
// 401 with a Basic challenge before the body is read and before any
// handler runs.
type AppLogin struct {
	Modules []string                        // modules whose apps need the login
	Accept  func(authorization string) bool // whether a header value is a login
	Source  string                          // where the logins are set, named on the 401 page
}

// guards reports whether one of the routes belongs to a guarded app.
func (l *AppLogin) guards(routes []*route) bool {
	for _, r := range routes {
		if slices.Contains(l.Modules, r.app.Module) {
			return true
		}
	}
	return false
}

// ErrorPages are mod_http_errors' options (Prosody's http_errors_*).
type ErrorPages struct {
	// Messages replace or add the message of a code: a template whose
	// "%" is replaced by one of the alternatives that follow it
	// (http_errors_messages).
	Messages map[int][]string
	// DefaultMessage is the message of codes that have none ("That's all
	// I know."; http_errors_default_message).
	DefaultMessage string
	// SkipUnlisted leaves codes without a message of their own to the
	// plain-text fallback (http_errors_always_show = false).
	SkipUnlisted bool
	// Detailed shows a failed handler's error on its 500 page
	// (http_errors_detailed).
	Detailed bool
}

func (o *Options) setDefaults() {
	if o.MaxBodySize <= 0 {
		o.MaxBodySize = 10 << 20
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 5 * time.Minute
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.HandlerTimeout <= 0 {
		o.HandlerTimeout = 60 * time.Second
	}
	if o.UploadTimeout <= 0 {
		o.UploadTimeout = 30 * time.Minute
	}
	if o.TrustedProxies == nil {
		o.TrustedProxies = []string{"127.0.0.1", "::1"}
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
}

// AppInfo describes a mounted app.
type AppInfo struct {
	Name   string
	Module string
	Base   string
	// Home is the path a browser should open: the first GET route that
	// answers a plain GET (see homePath). Printed at start and linked
	// from the root page.
	Home string
}

type appEntry struct {
	AppInfo
	streaming bool
	routes    []*route
}

// Listener is one bound listener.
type Listener struct {
	Addr   net.Addr
	Secure bool
	l      net.Listener
}

// URL returns scheme://host:port.
func (l Listener) URL() string {
	scheme := "http"
	if l.Secure {
		scheme = "https"
	}
	return scheme + "://" + l.Addr.String()
}

// Server is the http provider. Apps can be added and removed while it
// serves; each request sees one consistent route table.
type Server struct {
	opts    Options
	log     *slog.Logger
	trusted []netip.Prefix
	hosts   map[string]bool // lower-case names Host may carry
	srv     *fasthttp.Server
	guard   *connlimit.Guard
	ctx     context.Context
	cancel  context.CancelFunc
	events  *events.Bus

	mu        sync.Mutex
	apps      []*appEntry
	seq       int
	listeners []Listener
	ix        atomic.Pointer[index]
	wg        sync.WaitGroup
}

// NewServer prepares a server with no apps and no listeners.
func NewServer(o Options) (*Server, error) {
	o.setDefaults()
	s := &Server{opts: o, log: o.Log, hosts: map[string]bool{"localhost": true}, events: o.Events}
	if s.events == nil {
		s.events = &events.Bus{}
	}
	s.hookErrorPages()
	for _, h := range o.Hosts {
		s.hosts[hostName(h)] = true
	}
	for _, p := range o.TrustedProxies {
		pfx, err := parsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", p, err)
		}
		s.trusted = append(s.trusted, pfx)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.ix.Store(newIndex(nil))
	s.guard = connlimit.New(connlimit.Limits{Capacity: o.Concurrency, FirstByte: o.FirstByteTimeout, IsLocal: o.IsLocal})
	s.srv = &fasthttp.Server{
		Handler:                       s.handle,
		Name:                          "",
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: false,
		DisablePreParseMultipartForm:  true,
		StreamRequestBody:             true,
		MaxRequestBodySize:            64 << 10, // prefetched; the rest is a stream
		ReadTimeout:                   o.ReadTimeout,
		WriteTimeout:                  o.WriteTimeout,
		IdleTimeout:                   o.IdleTimeout,
		// The guard admits at most Concurrency; fasthttp counts a
		// connection a moment longer than the guard does.
		Concurrency:    2 * o.Concurrency,
		ReadBufferSize: 16 << 10,
		HeaderReceived: s.headerReceived,
		Logger:         fasthttpLogger{o.Log},
		ErrorHandler: func(c *fasthttp.RequestCtx, err error) {
			s.writePage(c, newID(), 400, "")
			c.SetConnectionClose()
		},
	}
	return s, nil
}

// headerReceived gives requests to streaming apps the upload timeout.
func (s *Server) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	t := splitTarget(string(h.RequestURI()))
	p, err := CleanPath(t.rawPath)
	if err != nil {
		return fasthttp.RequestConfig{}
	}
	if anyStreaming(s.ix.Load().candidates(string(h.Method()), matchKey(p))) {
		return fasthttp.RequestConfig{ReadTimeout: s.opts.UploadTimeout}
	}
	return fasthttp.RequestConfig{}
}

// fasthttpLogger sends fasthttp's connection errors to the debug log.
type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	f.l.Debug(fmt.Sprintf(format, args...))
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

func (s *Server) isTrusted(ip string) bool {
	a, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Listen binds addr (host:port) and serves on it; with tlsConf the
// listener speaks TLS.
func (s *Server) Listen(addr string, tlsConf *tls.Config) (Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return Listener{}, err
	}
	li := Listener{Addr: l.Addr(), Secure: tlsConf != nil, l: l}
	l = s.guard.Listener(l)
	if tlsConf != nil {
		l = tls.NewListener(l, tlsConf)
	}
	s.mu.Lock()
	s.listeners = append(s.listeners, li)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, net.ErrClosed) {
			s.log.Warn("http listener stopped", "addr", li.Addr.String(), "err", err)
		}
	}()
	return li, nil
}

// Events is the server's event bus (http-error, directory-index).
func (s *Server) Events() *events.Bus { return s.events }

// Listeners returns the bound listeners.
func (s *Server) Listeners() []Listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Listener(nil), s.listeners...)
}

// Close stops the listeners, waits up to 5s for requests in flight and
// cancels handler contexts.
func (s *Server) Close() error {
	err := s.srv.ShutdownWithContext(timeoutCtx(5 * time.Second))
	s.cancel()
	// A listener whose Serve had not started yet when Shutdown ran is not
	// known to fasthttp: close it here, or Serve would wait forever.
	for _, l := range s.Listeners() {
		_ = l.l.Close()
	}
	s.wg.Wait()
	return err
}

func timeoutCtx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	time.AfterFunc(d, cancel)
	return ctx
}

// Add mounts app. Every route key is parsed first; a bad key or two keys
// meaning the same event fail the whole app and nothing is mounted.
func (s *Server) Add(app *App) (AppInfo, error) {
	if app == nil || app.Routes == nil {
		return AppInfo{}, fmt.Errorf("module %s: http provider has no route table", app.Module)
	}
	name := app.Name
	if name == "" {
		name = AppName(app.Module)
	}
	base := app.DefaultPath
	if p, ok := s.opts.Paths[name]; ok && p != "" {
		base = p
	}
	if base == "" {
		base = "/" + name
	}
	e := &appEntry{AppInfo: AppInfo{Name: name, Module: app.Module, Base: normalizeBase(base)}, streaming: app.StreamingUploads}

	keys := make([]string, 0, len(app.Routes))
	for k := range app.Routes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seen := map[string]string{}
	redirects := map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := s.seq
	for _, k := range keys {
		rk, err := parseRouteKey(k)
		if err != nil {
			return AppInfo{}, fmt.Errorf("module %s: %w", app.Module, err)
		}
		r := &route{method: rk.method, path: joinBase(e.Base, rk.sub), wild: rk.wild, prio: prioHandler, app: e, key: k}
		ev := r.method + " " + r.path
		if r.wild {
			ev += "*"
		}
		if prev, dup := seen[ev]; dup {
			return AppInfo{}, fmt.Errorf("module %s: route keys %q and %q name the same route %s", app.Module, prev, k, ev)
		}
		seen[ev] = k
		switch h := app.Routes[k].(type) {
		case Handler:
			r.h = h
		case func(*Event) any:
			r.h = h
		case nil:
			return AppInfo{}, fmt.Errorf("module %s: route %q has no handler", app.Module, k)
		default:
			r.value = h
		}
		seq++
		r.seq = seq
		r.depth = strings.Count(r.path, "/")
		e.routes = append(e.routes, r)
		// Function routes ending in "/" or "/*" also redirect the path
		// without that slash.
		if r.h != nil && strings.HasSuffix(r.path, "/") && len(r.path) > 1 {
			rp := r.path[:len(r.path)-1]
			if !redirects[r.method+" "+rp] {
				redirects[r.method+" "+rp] = true
				seq++
				e.routes = append(e.routes, &route{method: r.method, path: rp, prio: prioRedirect, seq: seq,
					depth: strings.Count(rp, "/"), app: e, key: k + " (redirect)", h: redirectSlash, redirect: true})
			}
		}
	}
	s.seq = seq
	e.Home = homePath(e.Base, e.routes)
	s.apps = append(s.apps, e)
	s.rebuild()
	return e.AppInfo, nil
}

// homePath picks the path of an app that answers a GET: "<base>/" when a
// "GET /" or "GET /*" route exists, else the base path for a "GET" route,
// else the first exact GET sub path (sorted), else the first GET wildcard
// prefix; the base path when the app has no GET route at all.
func homePath(base string, routes []*route) string {
	var exact, wild []string
	for _, r := range routes {
		if r.method != "GET" || r.redirect {
			continue
		}
		if r.path == joinBase(base, "/") {
			return r.path
		}
		if r.wild {
			wild = append(wild, r.path)
		} else {
			exact = append(exact, r.path)
		}
	}
	sort.Strings(exact)
	sort.Strings(wild)
	if slices.Contains(exact, base) {
		return base
	}
	if len(exact) > 0 {
		return exact[0]
	}
	if len(wild) > 0 {
		return wild[0]
	}
	return base
}

// redirectSlash answers "<path>" with 301 to "<path>/", keeping the query.
func redirectSlash(ev *Event) any {
	loc := ev.Request.Path + "/"
	if ev.Request.URL.HasQuery {
		loc += "?" + ev.Request.URL.Query
	}
	ev.Response.Headers["location"] = loc
	ev.Response.Body = nil
	return 301
}

// Remove unmounts every app of module; later requests fall through to
// other apps or 404.
func (s *Server) Remove(module string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.apps[:0]
	for _, a := range s.apps {
		if a.Module != module {
			kept = append(kept, a)
		}
	}
	s.apps = kept
	s.rebuild()
}

// rebuild publishes a new index; s.mu is held.
func (s *Server) rebuild() {
	var all []*route
	for _, a := range s.apps {
		all = append(all, a.routes...)
	}
	s.ix.Store(newIndex(all))
}

// Apps lists the mounted apps in the order they were added.
func (s *Server) Apps() []AppInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]AppInfo, len(s.apps))
	for i, a := range s.apps {
		out[i] = a.AppInfo
	}
	return out
}

var idEnc = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return idEnc.EncodeToString(b[:])
}

// handle is the fasthttp handler.
func (s *Server) handle(c *fasthttp.RequestCtx) {
	id := newID()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("http: panic while serving", "id", id, "panic", p)
			s.writeFailure(c, id, fmt.Sprint("panic: ", p))
		}
	}()
	t := splitTarget(string(c.Request.Header.RequestURI()))
	host := t.host
	if host == "" {
		host = string(c.Request.Header.Host())
	}
	if !s.ownHost(host) {
		s.refuse(c, id, 403, "Unknown host: "+host)
		return
	}
	p, err := CleanPath(t.rawPath)
	if err != nil {
		s.writePage(c, id, 400, "Invalid path")
		return
	}
	if s.opts.Authorizations != nil {
		prefixes, ok := s.opts.Authorizations[string(c.Request.Header.Peek("Authorization"))]
		if !ok {
			c.Response.Header.Set("WWW-Authenticate", `Basic realm="cairn modules", charset="UTF-8"`)
			s.refuse(c, id, 401, "This server needs a login (Modules.Authorizations).")
			return
		}
		if !pathAllowed(prefixes, p) {
			s.refuse(c, id, 403, "This login may not use "+p+".")
			return
		}
	}
	key := matchKey(p)
	method := string(c.Method())
	ix := s.ix.Load()
	cands := ix.candidates(method, key)
	var getCands []*route
	if method == "HEAD" {
		getCands = ix.candidates("GET", key)
	}
	if l := s.opts.AppLogin; l != nil && s.opts.Authorizations == nil && (l.guards(cands) || l.guards(getCands)) &&
		!l.Accept(string(c.Request.Header.Peek("Authorization"))) {
		c.Response.Header.Set("WWW-Authenticate", `Basic realm="cairn modules", charset="UTF-8"`)
		s.refuse(c, id, 401, "This app needs a login ("+l.Source+").")
		return
	}
	req := s.newRequest(c, t, p, id, method)
	timeout := s.opts.HandlerTimeout
	if anyStreaming(cands) || anyStreaming(getCands) {
		timeout = s.opts.UploadTimeout
		req.BodyStream = c.RequestBodyStream()
		if req.BodyStream == nil {
			req.BodyStream = bytes.NewReader(c.Request.Body())
		}
	} else {
		body, ok := s.readBody(c)
		if !ok {
			s.writePage(c, id, 413, fmt.Sprintf("The body limit is %d bytes.", s.opts.MaxBodySize))
			c.SetConnectionClose()
			drainBody(c)
			return
		}
		req.Body = body
	}
	hctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	ev := &Event{Request: req, Response: &Response{StatusCode: 200, Headers: map[string]string{}}, Ctx: hctx}
	res, done := s.run(cands, ev)
	if !done && method == "HEAD" {
		res, done = s.run(getCands, ev)
	}
	if !done && method == "OPTIONS" && s.opts.CORS && ix.hasPath(key) {
		res, done = &Reply{StatusCode: 200}, true
	}
	if !done {
		res = 404 // "/" gets the root page from its http-error hook
	}
	s.finish(c, ev, res)
	if req.BodyStream != nil {
		// Unread body bytes would be parsed as the next request.
		if _, err := io.CopyN(io.Discard, req.BodyStream, 64<<10+1); err != io.EOF {
			c.SetConnectionClose()
		}
	}
}

// hostName is the lower-case name of a Host value, without port,
// brackets or trailing dot.
func hostName(h string) string {
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// ownHost reports whether a request's Host names this server: empty (an
// HTTP/1.0 client, never a browser), an IP literal (a DNS-rebinding page
// can only make the browser send a name it resolved), "localhost", or a
// name in Options.Hosts.
func (s *Server) ownHost(h string) bool {
	if h == "" {
		return true
	}
	name := hostName(h)
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	return s.hosts[name]
}

// pathAllowed reports whether the decoded path p is under one of the
// prefixes, segment by segment ("/a" covers "/a" and "/a/x", not "/ab").
func pathAllowed(prefixes []string, p string) bool {
	for _, pre := range prefixes {
		pre = strings.TrimSuffix(pre, "/")
		if pre == "" || p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// refuse answers a request that no handler may see; the body, if any,
// is left unread, so the connection is closed after the answer.
func (s *Server) refuse(c *fasthttp.RequestCtx, id string, code int, extra string) {
	s.writePage(c, id, code, extra)
	c.SetConnectionClose()
}

func anyStreaming(rs []*route) bool {
	for _, r := range rs {
		if r.app.streaming {
			return true
		}
	}
	return false
}

// readBody reads the whole body up to MaxBodySize; false if it is larger.
// drainMax is how much of a refused body is read and dropped before the
// connection closes (Go's net/http reads as much): a client still sending
// a body a little over the cap then reads the 413 instead of a reset,
// which closing a socket with unread data would send.
const drainMax = 256 << 10

// drainBody reads and drops up to drainMax bytes of what is left of the
// request's body, within the connection's read deadline.
func drainBody(c *fasthttp.RequestCtx) {
	if rd := c.RequestBodyStream(); rd != nil {
		_, _ = io.CopyN(io.Discard, rd, drainMax)
	}
}

func (s *Server) readBody(c *fasthttp.RequestCtx) ([]byte, bool) {
	max := s.opts.MaxBodySize
	if cl := c.Request.Header.ContentLength(); cl > 0 && int64(cl) > max {
		return nil, false
	}
	rd := c.RequestBodyStream()
	if rd == nil {
		b := c.Request.Body()
		if int64(len(b)) > max {
			return nil, false
		}
		return append([]byte(nil), b...), true
	}
	b, err := io.ReadAll(io.LimitReader(rd, max+1))
	if err != nil || int64(len(b)) > max {
		return nil, false
	}
	return b, true
}

func (s *Server) newRequest(c *fasthttp.RequestCtx, t target, p, id, method string) *Request {
	req := &Request{
		Method: method, Path: p, ID: id,
		URL:     URL{Path: t.rawPath, Query: t.rawQuery, HasQuery: t.hasQuery},
		Version: "1.1",
		Headers: map[string]string{},
		Conn:    ConnInfo{RemoteAddr: c.RemoteAddr().String(), LocalAddr: c.LocalAddr().String(), TLS: c.IsTLS()},
	}
	if !c.Request.Header.IsHTTP11() {
		req.Version = "1.0"
	}
	for k, v := range c.Request.Header.All() {
		hk := HeaderKey(string(k))
		if old, ok := req.Headers[hk]; ok {
			req.Headers[hk] = old + "," + string(v)
		} else {
			req.Headers[hk] = string(v)
		}
	}
	if t.host != "" {
		req.Headers["host"] = t.host
	}
	peer := c.RemoteIP().String()
	req.IP, req.Secure = peer, c.IsTLS()
	if s.isTrusted(peer) {
		if xff := req.Headers["x_forwarded_for"]; xff != "" {
			list := append(strings.Split(xff, ","), peer)
			for i := len(list) - 1; i >= 0; i-- {
				if e := strings.TrimSpace(list[i]); !s.isTrusted(e) {
					if _, err := netip.ParseAddr(e); err == nil {
						req.IP = e
					}
					break
				}
			}
		}
		if strings.EqualFold(strings.TrimSpace(req.Headers["x_forwarded_proto"]), "https") {
			req.Secure = true
		}
	}
	return req
}

// run calls the candidates in order until one answers.
func (s *Server) run(cands []*route, ev *Event) (any, bool) {
	for _, r := range cands {
		if r.h == nil {
			return r.value, true
		}
		ev.App, ev.Base = r.app.Name, r.app.Base
		ev.Wildcard, ev.Arg = r.wild, ""
		if r.wild {
			ev.Arg = ev.Request.Path[len(r.path):]
		}
		res := s.call(r, ev)
		if ev.Response.sent {
			return true, true
		}
		if res != nil {
			return res, true
		}
	}
	return nil, false
}

// call runs one handler, turning a panic into an error.
func (s *Server) call(r *route, ev *Event) (res any) {
	defer func() {
		if p := recover(); p != nil {
			res = fmt.Errorf("panic in %s route %q: %v", r.app.Module, r.key, p)
		}
	}()
	return r.h(ev)
}

// finish applies a handler's return value (see Handler) and writes the
// response.
func (s *Server) finish(c *fasthttp.RequestCtx, ev *Event, res any) {
	resp := ev.Response
	switch v := res.(type) {
	case bool:
		if !v {
			resp.StatusCode, resp.Status, resp.Body, resp.stream = 200, "", nil, nil
		} else if !resp.sent {
			s.log.Error("http: handler returned true without sending", "id", ev.Request.ID, "app", ev.App)
			s.writeFailure(c, ev.Request.ID, "handler returned true without sending")
			return
		}
	case string:
		resp.Body = []byte(v)
	case []byte:
		resp.Body = v
	case int:
		s.statusResult(ev, v, nil)
	case *Reply:
		if v.StatusCode != 0 {
			resp.StatusCode = v.StatusCode
		}
		if v.Status != "" {
			resp.Status = v.Status
		}
		for k, hv := range v.Headers {
			resp.Headers[k] = hv
		}
		resp.Body = v.Body
	case *Error:
		code := v.Code
		if code == 0 {
			code = 500
		}
		s.statusResult(ev, code, v)
	case error:
		s.log.Error("http: handler failed", "id", ev.Request.ID, "app", ev.App, "path", ev.Request.Path, "err", v)
		s.writeFailure(c, ev.Request.ID, v.Error())
		return
	case Raw:
		c.Response.Header.Set("X-Request-Id", ev.Request.ID)
		v(c)
		return
	default:
		s.log.Error("http: handler returned an unsupported value", "id", ev.Request.ID, "app", ev.App, "type", fmt.Sprintf("%T", res))
		s.writeFailure(c, ev.Request.ID, fmt.Sprintf("handler returned an unsupported value (%T)", res))
		return
	}
	s.write(c, ev)
}

// statusResult sets a numeric result (or an error object's code): the
// http-error page at >= 400.
func (s *Server) statusResult(ev *Event, code int, e *Error) {
	resp := ev.Response
	resp.StatusCode = code
	if code >= 400 {
		resp.Body = s.errorBody(ev.Ctx, &ErrorEvent{Code: code, Request: ev.Request, Response: resp, Err: e})
	}
}

// errorBody fires http-error for e and returns the first string a hook
// answers, else the plain-text fallback.
func (s *Server) errorBody(ctx context.Context, e *ErrorEvent) []byte {
	if e.Response == nil {
		e.Response = &Response{StatusCode: e.Code, Headers: map[string]string{}}
	}
	switch v := s.events.Fire(ctx, EventHTTPError, e).(type) {
	case string:
		return []byte(v)
	case []byte:
		return v
	}
	return fallbackBody(e.Code)
}

// write sends ev.Response.
func (s *Server) write(c *fasthttp.RequestCtx, ev *Event) {
	resp := ev.Response
	setStatus(c, resp.StatusCode, resp.Status)
	if resp.StatusCode == 304 && resp.stream == nil {
		// fasthttp's SetContentLength skips a 304; Prosody's send() sends
		// Content-Length: 0. Setting the header by name keeps it.
		c.Response.Header.Set("Content-Length", "0")
		resp.Body = nil
	}
	for k, v := range resp.Headers {
		c.Response.Header.Set(HeaderName(k), v)
	}
	c.Response.Header.Set("X-Request-Id", ev.Request.ID)
	s.cors(c, ev)
	switch {
	case resp.stream != nil:
		c.SetBodyStream(resp.stream, resp.streamSize)
	default:
		c.SetBody(resp.Body)
	}
}

func (s *Server) cors(c *fasthttp.RequestCtx, ev *Event) {
	if !s.opts.CORS {
		return
	}
	origin := ev.Request.Headers["origin"]
	if origin == "" {
		origin = "*"
	}
	c.Response.Header.Set("Access-Control-Allow-Origin", origin)
	c.Response.Header.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
	c.Response.Header.Set("Access-Control-Allow-Headers", "Content-Type")
	c.Response.Header.Set("Access-Control-Max-Age", "7200")
}

// setStatus sets the status line: the request's HTTP version (1.0 or
// 1.1, as Prosody echoes it), the code, and text (a "299 Whatever" or
// "Whatever" override) or the registered reason, "Unassigned" otherwise.
func setStatus(c *fasthttp.RequestCtx, code int, text string) {
	c.SetStatusCode(code)
	if !c.Request.Header.IsHTTP11() {
		c.Response.Header.SetProtocol([]byte("HTTP/1.0"))
	}
	msg := StatusLineText(code)
	if text != "" {
		msg = text
		if num, rest, ok := strings.Cut(text, " "); ok && num == strconv.Itoa(code) {
			msg = rest
		}
	}
	c.Response.Header.SetStatusMessage([]byte(msg))
}

// writePage sends an error page outside any handler, with message as
// its extra line.
func (s *Server) writePage(c *fasthttp.RequestCtx, id string, code int, message string) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.HandlerTimeout)
	defer cancel()
	resp := &Response{StatusCode: code, Headers: map[string]string{}}
	body := s.errorBody(ctx, &ErrorEvent{Code: code, Response: resp, Message: message})
	setStatus(c, resp.StatusCode, resp.Status)
	for k, v := range resp.Headers {
		c.Response.Header.Set(HeaderName(k), v)
	}
	c.Response.Header.Set("X-Request-Id", id)
	c.SetBody(body)
}

// writeFailure sends the 500 page of a failed handler and closes the
// connection afterwards (never a dropped connection). As in Prosody the
// page's event has no request, cause is its private message, and the
// Content-Type is text/plain unless a hook sets another.
func (s *Server) writeFailure(c *fasthttp.RequestCtx, id string, cause string) {
	c.Response.Reset()
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.HandlerTimeout)
	defer cancel()
	resp := &Response{StatusCode: 500, Headers: map[string]string{"content_type": "text/plain"}}
	body := s.errorBody(ctx, &ErrorEvent{Code: 500, Response: resp, PrivateMessage: cause})
	setStatus(c, 500, "")
	c.Response.Header.Set("Content-Type", resp.Headers["content_type"])
	c.Response.Header.Set("X-Request-Id", id)
	c.Response.Header.Set("X-Content-Type-Options", "nosniff")
	c.SetBody(body)
	c.SetConnectionClose()
}
