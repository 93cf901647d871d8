// server.go: the /api/v0/ server on fasthttp, in the processing order of
// spec/rpc-wire.md 1.2.

package httprpc

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"mime"
	"mime/multipart"
	"net"
	"net/url"
	pathpkg "path"
	"strconv"
	"strings"
	"sync"
	"time"

	"cairn/node"

	"github.com/ipfs/boxo/files"
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
	Table *Table
	Node  *node.Node
	Env   *Env
	// Log receives one line per panic or internal error; nil means the
	// standard logger.
	Log *log.Logger

	srv       *fasthttp.Server
	ctx       context.Context
	cancel    context.CancelFunc
	headers   map[string][]string
	origins   []string // configured allowed origins
	methods   []string
	creds     bool
	auth      map[string][]string // expected Authorization value => allowed path prefixes
	serverHdr string

	mu        sync.Mutex
	listeners []net.Listener
}

// ServerOptions size the server; zero values mean defaults.
type ServerOptions struct {
	// Concurrency caps simultaneous connections (default 256).
	Concurrency int
	// MaxHeaderBytes caps the request line and headers; larger requests
	// get 431 (default 256 KiB).
	MaxHeaderBytes int
	// ServerHeader is the value of the Server header.
	ServerHeader string
}

// NewServer prepares a server for n's config.
func NewServer(n *node.Node, t *Table, env *Env, o ServerOptions) *Server {
	if o.Concurrency <= 0 {
		o.Concurrency = 256
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 256 << 10
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{Table: t, Node: n, Env: env, ctx: ctx, cancel: cancel, serverHdr: o.ServerHeader,
		methods: []string{"POST"}}
	s.configure(n.Config.API)
	s.srv = &fasthttp.Server{
		Handler:                       s.handle,
		Name:                          o.ServerHeader,
		Concurrency:                   o.Concurrency,
		ReadBufferSize:                o.MaxHeaderBytes,
		WriteBufferSize:               32 << 10,
		StreamRequestBody:             true,
		MaxRequestBodySize:            math.MaxInt, // bodies stream; 1<<62 overflows int on 32-bit ARM
		DisablePreParseMultipartForm:  true,
		DisableHeaderNamesNormalizing: false,
		NoDefaultContentType:          true,
		NoDefaultDate:                 false,
		ReduceMemoryUsage:             true,
		IdleTimeout:                   2 * time.Minute,
		Logger:                        quietLogger{},
	}
	return s
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

func (s *Server) configure(api node.APIConfig) {
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
	if len(api.Authorizations) > 0 {
		s.auth = map[string][]string{}
		for _, scope := range api.Authorizations {
			if scope == nil {
				continue
			}
			if hv, ok := AuthHeaderValue(scope.AuthSecret); ok {
				s.auth[hv] = append(s.auth[hv], scope.AllowedPaths...)
			}
		}
	}
}

// AuthHeaderValue turns an AuthSecret ("bearer:T", "basic:u:p",
// "basic:<b64>", or a bare token) into the Authorization header it expects.
func AuthHeaderValue(secret string) (string, bool) {
	typ, val, ok := strings.Cut(secret, ":")
	if !ok {
		return "Bearer " + secret, true
	}
	switch strings.ToLower(typ) {
	case "bearer":
		return "Bearer " + val, true
	case "basic":
		if strings.Contains(val, ":") {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(val)), true
		}
		return "Basic " + val, true
	}
	return "", false
}

// Serve serves on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	err := s.srv.Serve(l)
	if s.ctx.Err() != nil {
		return nil
	}
	return err
}

// Shutdown stops accepting, cancels running commands and waits up to
// timeout for open requests.
func (s *Server) Shutdown(timeout time.Duration) error {
	s.cancel()
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

func (s *Server) logf(format string, a ...any) {
	if s.Log != nil {
		s.Log.Printf(format, a...)
		return
	}
	log.Printf(format, a...)
}

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	defer func() {
		if r := recover(); r != nil {
			s.logf("rpc: panic serving %s: %v", ctx.Path(), r)
			ctx.Response.Reset()
			s.writeErrorJSON(ctx, "json", errors.New("an error occurred"))
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
	port := localPort(ctx)
	origin := string(ctx.Request.Header.Peek("Origin"))
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
	s.dispatch(ctx, strings.TrimPrefix(path, apiPrefix))
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
	ctx.Response.Header.Set("Location", to)
	ctx.Response.Header.Set("Content-Type", "text/html; charset=utf-8")
	ctx.SetStatusCode(301)
	ctx.SetBodyString("<a href=\"" + to + "\">Moved Permanently</a>.\n\n")
}

func localPort(ctx *fasthttp.RequestCtx) string {
	if a, ok := ctx.LocalAddr().(*net.TCPAddr); ok {
		return strconv.Itoa(a.Port)
	}
	return ""
}

func (s *Server) authorized(ctx *fasthttp.RequestCtx, path string) bool {
	prefixes, ok := s.auth[string(ctx.Request.Header.Peek("Authorization"))]
	if !ok {
		return false
	}
	if path == "/api/v0/version" || strings.HasPrefix(path, "/api/v0/version/") {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// allowedOrigins is the configured list plus the localhost origins of the
// listener's port (0.42 behaviour: always appended).
func (s *Server) allowedOrigins(port string) []string {
	out := make([]string, 0, len(s.origins)+6)
	for _, o := range s.origins {
		out = append(out, strings.ReplaceAll(o, "<port>", port))
	}
	for _, h := range []string{"127.0.0.1", "[::1]", "localhost"} {
		out = append(out, "http://"+h+":"+port, "https://"+h+":"+port)
	}
	return out
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

// gate is the Origin / Referer / User-Agent check of spec 5.1.
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

// route finds the command for the path below /api/v0/. It returns the
// command (nil for a pure parent) and the path-segment argument, if any.
func (s *Server) route(rest string) (cmd *Command, pathArg []string, found bool) {
	segs := strings.Split(rest, "/")
	n := s.Table.Root
	for i, seg := range segs {
		ch := n.Children[seg]
		if ch != nil {
			if ch.Cmd != nil && ch.Cmd.NoRemote {
				return nil, nil, false
			}
			n = ch
			continue
		}
		if i == len(segs)-1 && n.Cmd != nil && n != s.Table.Root {
			return n.Cmd, []string{seg}, true
		}
		return nil, nil, false
	}
	if n == s.Table.Root {
		return nil, nil, false
	}
	return n.Cmd, nil, true
}

func (s *Server) dispatch(ctx *fasthttp.RequestCtx, rest string) {
	cmd, pathArg, found := s.route(rest)
	if !found {
		textError(ctx, 404, "404 page not found")
		return
	}
	if cmd == nil {
		// Kubo quirk: a parent without a run function answers an empty
		// value stream.
		s.preamble(ctx, OutStream, "json", nil)
		ctx.SetBody(nil)
		return
	}
	var pairs []KV
	ctx.QueryArgs().VisitAll(func(k, v []byte) {
		pairs = append(pairs, KV{string(k), string(v)})
	})
	values := append([]string{}, pathArg...)
	for _, p := range pairs {
		if p.Key == "arg" {
			values = append(values, p.Value)
		}
	}
	opts, err := DecodeOptions(s.Table.OptionsFor(cmd.Path), pairs)
	if err != nil {
		textError(ctx, 400, err.Error())
		return
	}
	// Multipart body.
	var mr *multipart.Reader
	ct := string(ctx.Request.Header.ContentType())
	if ct != "" {
		mt, params, err := mime.ParseMediaType(ct)
		if err == nil && mt == "multipart/form-data" {
			b := params["boundary"]
			if b == "" {
				textError(ctx, 400, "no multipart boundary param in Content-Type")
				return
			}
			mr = multipart.NewReader(ctx.RequestBodyStream(), b)
			ctx.SetConnectionClose()
		}
	}
	var bodyLines []string
	var dir files.Directory
	if mr != nil {
		switch {
		case takesBodyArgs(cmd):
			lines, err := readBodyLines(mr)
			if err != nil {
				textError(ctx, 400, err.Error())
				return
			}
			bodyLines = lines
		case hasFileArg(cmd):
			d, err := files.NewFileFromPartReader(mr, "multipart/form-data")
			if err != nil {
				textError(ctx, 400, err.Error())
				return
			}
			dir = d
		}
	}
	args, err := BindArgs(cmd, values, bodyLines, mr != nil)
	if err != nil {
		textError(ctx, 400, err.Error())
		return
	}
	s.applyHeaders(ctx)
	cctx, cancel := context.WithCancel(s.ctx)
	defer func() {
		if cancel != nil {
			cancel()
		}
	}()
	if t := stringOpt(opts, "timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			textError(ctx, 400, fmt.Sprintf("invalid timeout %q: %v", t, err))
			return
		}
		var c2 context.CancelFunc
		cctx, c2 = context.WithTimeout(cctx, d)
		prev := cancel
		cancel = func() { c2(); prev() }
	}
	if v, _ := opts["offline"].(bool); v {
		cctx = node.OfflineContext(cctx) // no fetching from peers
	}
	enc := stringOpt(opts, "encoding")
	if enc == "" {
		enc = "json"
	}
	switch enc {
	case "json", "text", "xml":
	default:
		textError(ctx, 400, "invalid encoding: "+enc)
		return
	}
	req := &Request{Ctx: cctx, Node: s.Node, Command: cmd, Args: args, Opts: opts, Files: dir, Env: s.Env}
	em := newHTTPEmitter(cmd, enc)
	em.req = req
	go func() {
		var err error
		defer func() {
			if r := recover(); r != nil {
				s.logf("rpc: panic in %s: %v", cmd.Path, r)
				err = errors.New("an error occurred")
			}
			em.finish(err)
		}()
		err = cmd.Run(req, em)
	}()
	<-em.first
	if !em.started {
		// Finished without output.
		if em.err != nil {
			s.writeErrorJSON(ctx, enc, em.err)
			return
		}
		s.preamble(ctx, OutNone, enc, req)
		ctx.SetBody(nil)
		return
	}
	kind := cmd.Output
	if cmd.OutputFor != nil {
		kind = cmd.OutputFor(req)
	}
	if em.isBytes {
		kind = OutBytes
	}
	s.preamble(ctx, kind, enc, req)
	if em.length >= 0 {
		ctx.Response.Header.Set("X-Content-Length", strconv.FormatInt(em.length, 10))
	}
	// The command writes into a pipe; fasthttp reads it from its own
	// goroutine after writing the headers. The trailer is set by that
	// reader goroutine when it meets the end, so no header is touched
	// while fasthttp writes them.
	pipe := newChunkPipe(4)
	em.attach <- bufio.NewWriterSize(pipe, 32<<10)
	go func() {
		<-em.done
		pipe.CloseWrite()
	}()
	ctx.Response.SetBodyStream(&bodyReader{pipe: pipe, em: em, ctx: ctx, stop: cancel}, -1)
	cancel = nil // the body reader owns the context now
}

// bodyReader hands a command's output to fasthttp.
type bodyReader struct {
	pipe *chunkPipe
	em   *httpEmitter
	ctx  *fasthttp.RequestCtx
	stop context.CancelFunc
	once sync.Once
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.pipe.Read(p)
	if err == io.EOF {
		<-b.em.done
		if e := b.em.err; e != nil && !errors.Is(e, errClientGone) {
			msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(e.Error())
			b.ctx.Response.Header.Set("X-Stream-Error", msg)
		}
	}
	return n, err
}

// Close is called by fasthttp when the response ends or the client goes:
// it stops the command.
func (b *bodyReader) Close() error {
	b.once.Do(func() {
		b.pipe.CloseRead()
		b.stop()
	})
	return nil
}

func stringOpt(opts map[string]any, name string) string { v, _ := opts[name].(string); return v }

// readBodyLines reads the first part of a multipart body as argument
// lines; other parts are ignored.
func readBodyLines(mr *multipart.Reader) ([]string, error) {
	p, err := mr.NextPart()
	if err == io.EOF {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(p, maxBodyArgBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBodyArgBytes {
		return nil, fmt.Errorf("argument body larger than %d bytes", maxBodyArgBytes)
	}
	return SplitBodyLines(b), nil
}

func (s *Server) applyHeaders(ctx *fasthttp.RequestCtx) {
	for k, vs := range s.headers {
		for _, v := range vs {
			ctx.Response.Header.Add(k, v)
		}
	}
}

// preamble writes the headers of spec 3.1 for an output of the given kind.
func (s *Server) preamble(ctx *fasthttp.RequestCtx, kind OutputKind, enc string, req *Request) {
	h := &ctx.Response.Header
	h.Set("Access-Control-Allow-Headers", exposed)
	h.Set("Access-Control-Expose-Headers", exposed)
	if s.serverHdr != "" {
		h.Set("Server", s.serverHdr)
	}
	_ = h.AddTrailer("X-Stream-Error")
	switch kind {
	case OutBytes:
		ct := "text/plain"
		if req != nil && req.Command.ContentType != nil {
			ct = req.Command.ContentType(req)
		}
		h.Set("Content-Type", ct)
		h.Set("X-Stream-Output", "1")
	default:
		h.Set("Content-Type", contentType(enc))
		if kind == OutStream || kind == OutNone {
			h.Set("X-Chunked-Output", "1")
		}
	}
	ctx.SetStatusCode(200)
}

func contentType(enc string) string {
	switch enc {
	case "text":
		return "text/plain"
	case "xml":
		return "application/xml"
	}
	return "application/json"
}

func (s *Server) writeErrorJSON(ctx *fasthttp.RequestCtx, enc string, err error) {
	h := &ctx.Response.Header
	h.Set("Access-Control-Allow-Headers", exposed)
	h.Set("Access-Control-Expose-Headers", exposed)
	if s.serverHdr != "" {
		h.Set("Server", s.serverHdr)
	}
	_ = h.AddTrailer("X-Stream-Error")
	we := toWire(err)
	ctx.SetStatusCode(statusOf(err))
	var body []byte
	switch enc {
	case "text":
		h.Set("Content-Type", "text/plain")
		body = []byte(we.Message)
	case "xml":
		h.Set("Content-Type", "application/xml")
		body, _ = xml.Marshal(struct {
			XMLName xml.Name `xml:"Error"`
			Message string
			Code    int
		}{Message: we.Message, Code: we.Code})
	default:
		h.Set("Content-Type", "application/json")
		body, _ = json.Marshal(we)
		body = append(body, '\n')
	}
	// Chunked, like every RPC answer, so that the declared trailer is
	// valid HTTP.
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) { w.Write(body) })
}
