// dispatch.go: routing a path to its command, decoding options, arguments
// and the multipart body, and running the command with its output piped
// to the response.

package rpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"
	"sync"
	"time"

	"cairn/node"

	"github.com/ipfs/boxo/files"
	"github.com/valyala/fasthttp"
)

// route finds the command for the path below /api/v0/. It returns the
// command (nil for a pure parent) and the path-segment argument, if any.
func (s *Server) route(rest string) (cmd *Command, pathArg []string, found bool) {
	n := s.Table.Root
	for more := true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		ch := n.Children[seg]
		if ch != nil {
			if ch.Cmd != nil && ch.Cmd.NoRemote {
				return nil, nil, false
			}
			n = ch
			continue
		}
		if !more && n.Cmd != nil && n != s.Table.Root {
			return n.Cmd, []string{seg}, true
		}
		return nil, nil, false
	}
	if n == s.Table.Root {
		return nil, nil, false
	}
	return n.Cmd, nil, true
}

// call is one command's request from dispatch to the end of its answer,
// in one allocation.
type call struct {
	s       *Server
	em      httpEmitter
	req     Request
	held    heldBody
	body    bodyReader
	tr      *tracking
	watch   *hangupWatch
	cancel  context.CancelFunc // the command's context
	cancelT context.CancelFunc // its timeout's, if any
	entry   *ReqLogEntry       // in the request log; nil without one
	method  string             // of a streamed answer, for the metrics
	adhoc   bool               // watch is the call's own, in the server's set until stop
	stopped bool
	ended   bool
}

// cancelRunning stops the command running on w's connection, if one is
// (Shutdown).
func (w *hangupWatch) cancelRunning() {
	w.mu.Lock()
	cancel := w.cancel
	w.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// stop ends the command's context and the watch for a hang-up.
func (c *call) stop() {
	if c.stopped {
		return
	}
	c.stopped = true
	c.watch.stop()
	if c.adhoc {
		c.s.running.Delete(c.watch)
	}
	if c.cancelT != nil {
		c.cancelT()
	}
	c.cancel()
}

// end marks the request finished in the log and, for a streamed answer,
// records its metrics (the handler has returned long before).
func (c *call) end() {
	if c.ended {
		return
	}
	c.ended = true
	c.tr.end = time.Now()
	if c.entry != nil {
		c.s.Env.Requests.finish(c.entry, c.tr.end)
	}
	if c.tr.streamed {
		c.s.metrics.observe(c.method, 200, c.tr.command, c.tr.end.Sub(c.tr.start), c.tr.end)
	}
}

func (s *Server) dispatch(ctx *fasthttp.RequestCtx, rest string, tr *tracking) {
	cmd, pathArg, found := s.route(rest)
	if !found {
		textError(ctx, 404, "404 page not found")
		return
	}
	if cmd != nil {
		tr.command = cmd.Path
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
			mr = multipart.NewReader(requestBody(ctx), b)
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
	c := &call{s: s, tr: tr}
	// A client that hangs up stops its command, as in Kubo (net/http
	// cancels the request's context); so does Shutdown, through the
	// server's set of watches. The context is not a child of a context
	// every request would share: registering with it costs each request
	// a lock and a map entry that all cores contend for.
	cctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	if cc := corkOf(ctx.Conn()); cc != nil && cc.watch != nil {
		c.watch = cc.watch
	} else {
		c.watch = newHangupWatch(ctx.Conn())
		c.adhoc = true
		s.running.Store(c.watch, struct{}{})
	}
	c.watch.start(cancel)
	if s.ctx.Err() != nil {
		cancel() // Shutdown has begun: it may have missed this watch
	}
	owned := true // false once the body reader stops the command
	defer func() {
		if owned {
			c.stop()
		}
	}()
	if t := stringOpt(opts, "timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			textError(ctx, 400, fmt.Sprintf("invalid timeout %q: %v", t, err))
			return
		}
		cctx, c.cancelT = context.WithTimeout(cctx, d)
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
	req := &c.req
	*req = Request{Ctx: cctx, Node: s.Node, Command: cmd, Args: args, Opts: opts, Files: dir, Env: s.Env}
	if s.Env != nil && s.Env.Requests != nil {
		c.entry = s.Env.Requests.add(tr.start, cmd.Path, opts, enc, loggedArgs(cmd, args))
	}
	kind := cmd.Output
	if cmd.OutputFor != nil {
		kind = cmd.OutputFor(req)
	}
	em := &c.em
	em.init(cmd, enc, kind == OutSingle)
	em.req = req
	run := func() {
		var err error
		defer func() {
			if r := recover(); r != nil {
				s.logf("rpc: panic in %s: %v", cmd.Path, r)
				err = errors.New("an error occurred")
			}
			em.finish(err)
		}()
		err = cmd.Run(req, em)
		if mr != nil {
			drainBody(ctx)
		}
		if s.afterLong != nil && time.Since(tr.start) >= s.long {
			s.afterLong()
		}
	}
	if em.single {
		// Its answer waits in memory for the end: no goroutine needed.
		run()
	} else {
		go run()
		<-em.first
	}
	if !em.started {
		defer c.end()
		// Finished without output.
		if em.err != nil {
			s.writeErrorJSON(ctx, enc, em.err)
			return
		}
		if kind != OutBytes {
			kind = OutNone
		}
		// A byte command that wrote nothing is still a byte stream,
		// as Kubo's empty reader is (a zero-byte cat: text/plain,
		// X-Stream-Output, X-Content-Length: 0).
		s.preamble(ctx, kind, enc, req)
		s.contentLength(ctx, em)
		ctx.SetBody(nil)
		return
	}
	if em.isBytes {
		kind = OutBytes
	}
	if b, ok := em.held(); ok {
		// A single value, whole in memory, the command done: the
		// answer keeps its chunked framing and trailer and goes out
		// in one write.
		defer c.end()
		s.preamble(ctx, kind, enc, req)
		s.contentLength(ctx, em)
		c.held = heldBody{buf: b, b: *b, err: em.err, ctx: ctx, cork: corkOf(ctx.Conn())}
		ctx.Response.SetBodyStream(&c.held, -1)
		return
	}
	s.preamble(ctx, kind, enc, req)
	// A stream's headers go out at once: a client learns that its
	// command runs before the first value (log/tail may wait long).
	ctx.Response.ImmediateHeaderFlush = kind == OutStream || kind == OutBytes
	s.contentLength(ctx, em)
	// The command writes into a pipe; fasthttp reads it from its own
	// goroutine after writing the headers. The trailer is set by that
	// reader goroutine when it meets the end, so no header is touched
	// while fasthttp writes them.
	c.method = methodLabel(ctx.Method())
	tr.streamed = true
	pipe := newChunkPipe(4)
	em.attach <- bufio.NewWriterSize(pipe, 32<<10)
	go func() {
		<-em.done
		pipe.CloseWrite()
	}()
	c.body = bodyReader{pipe: pipe, em: em, ctx: ctx, call: c, cork: corkOf(ctx.Conn())}
	ctx.Response.SetBodyStream(&c.body, -1)
	owned = false // the body reader stops the command
}

// contentLength sets X-Content-Length when the command announced one.
func (s *Server) contentLength(ctx *fasthttp.RequestCtx, em *httpEmitter) {
	if em.length >= 0 {
		ctx.Response.Header.Set("X-Content-Length", strconv.FormatInt(em.length, 10))
	}
}

// drainBody reads what a command left of a multipart body (the epilogue
// after the closing boundary, a chunked body's last chunk; at most 256
// KiB, for at most a second) before the connection is closed: closing a
// socket with unread input resets it, and the client may then lose the
// end of the answer (seen with large add answers sent at once).
func drainBody(ctx *fasthttp.RequestCtx) {
	if c := ctx.Conn(); c != nil {
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
	}
	if body := ctx.RequestBodyStream(); body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(body, 256<<10))
	}
}

// bodyReader hands a command's output to fasthttp.
type bodyReader struct {
	pipe *chunkPipe
	em   *httpEmitter
	ctx  *fasthttp.RequestCtx
	call *call // stopped and ended at Close
	cork *corkConn
	once sync.Once
}

// heldBody hands fasthttp an answer that is whole in memory.
type heldBody struct {
	buf  *[]byte // from memBufs, given back at Close
	b    []byte  // what is left to read of *buf
	err  error   // the command's, sent as the trailer
	ctx  *fasthttp.RequestCtx
	cork *corkConn
}

func (h *heldBody) Read(p []byte) (int, error) {
	if h.cork != nil {
		h.cork.Cork() // headers, chunks and the last chunk wait for Close
	}
	if len(h.b) == 0 {
		streamError(h.ctx, h.err)
		return 0, io.EOF
	}
	n := copy(p, h.b)
	h.b = h.b[n:]
	return n, nil
}

func (h *heldBody) Close() error {
	if h.cork != nil {
		h.cork.Uncork() // all goes with fasthttp's last write
	}
	if h.buf != nil {
		putMemBuf(h.buf)
		h.buf, h.b = nil, nil
	}
	return nil
}

// streamError sets the X-Stream-Error trailer for a command's error after
// output (none when the client went away). Without an error the answer
// ends with an empty trailer section ("0\r\n\r\n"), as Kubo's does:
// fasthttp would write the declared trailer with an empty value.
func streamError(ctx *fasthttp.RequestCtx, err error) {
	if err != nil && !errors.Is(err, ErrClientGone) {
		msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(err.Error())
		ctx.Response.Header.Set("X-Stream-Error", msg)
		return
	}
	_ = ctx.Response.Header.SetTrailer("") // the headers are out: only the trailer section changes
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.cork != nil {
		// fasthttp writes each read as a chunk and flushes it: the
		// connection holds those while more output is ready, and
		// sends them before waiting for the command.
		if !b.pipe.ready() {
			_ = b.cork.Flush() // an error comes back on fasthttp's next write
		}
		defer b.cork.Cork()
	}
	c, ok := b.pipe.next()
	if !ok {
		<-b.em.done
		streamError(b.ctx, b.em.err)
		return 0, io.EOF
	}
	if b.cork != nil && len(c) >= directChunk {
		// A large write goes to the connection as one chunk of its
		// own, from the pipe's buffer: fasthttp would copy it through
		// its 4 KiB buffer and its writer, 4 KiB a chunk. Its chunked
		// writer has flushed everything before asking (the headers go
		// out at once for a stream, and every chunk is flushed), and it
		// asks again after an empty read.
		if err := b.cork.WriteChunk(c); err != nil {
			return 0, err
		}
		b.pipe.consume(len(c))
		return 0, nil
	}
	n := copy(p, c)
	b.pipe.consume(n)
	return n, nil
}

// directChunk is the smallest write of a command that bodyReader sends as
// a chunk itself rather than through fasthttp's 4 KiB reads.
const directChunk = 16 << 10

// Close is called by fasthttp when the response ends or the client goes:
// it stops the command.
func (b *bodyReader) Close() error {
	b.once.Do(func() {
		if b.cork != nil {
			b.cork.Uncork() // the rest goes with fasthttp's last write
		}
		b.pipe.CloseRead()
		b.call.stop()
		b.call.end()
	})
	return nil
}

func stringOpt(opts map[string]any, name string) string { v, _ := opts[name].(string); return v }

// requestBody is the request's body as a stream. fasthttp has no stream
// for a request without a body (no Content-Length, not chunked): that
// one reads as empty, so that the multipart reader answers Kubo's
// "multipart: NextPart: EOF".
func requestBody(ctx *fasthttp.RequestCtx) io.Reader {
	if r := ctx.RequestBodyStream(); r != nil {
		return r
	}
	return bytes.NewReader(ctx.Request.Body())
}

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
