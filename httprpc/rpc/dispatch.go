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
	cctx, cancel := context.WithCancel(s.ctx)
	// A client that hangs up stops its command, as in Kubo (net/http
	// cancels the request's context).
	stopWatch, base := watchHangup(ctx.Conn(), cancel), cancel
	cancel = func() { stopWatch(); base() }
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
	logged := func() {}
	if s.Env != nil && s.Env.Requests != nil {
		entry := s.Env.Requests.add(cmd.Path, opts, enc, loggedArgs(cmd, args))
		var once sync.Once
		logged = func() { once.Do(func() { s.Env.Requests.finish(entry) }) }
	}
	kind := cmd.Output
	if cmd.OutputFor != nil {
		kind = cmd.OutputFor(req)
	}
	em := newHTTPEmitter(cmd, enc)
	em.req = req
	em.single = kind == OutSingle
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
	}
	if em.single {
		// Its answer waits in memory for the end: no goroutine needed.
		run()
	} else {
		go run()
	}
	<-em.first
	if !em.started {
		defer logged()
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
		defer logged()
		s.preamble(ctx, kind, enc, req)
		s.contentLength(ctx, em)
		ctx.Response.SetBodyStream(&heldBody{b: b, err: em.err, ctx: ctx, cork: corkOf(ctx.Conn())}, -1)
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
	method := string(ctx.Method())
	tr.streamed = true
	ended := logged
	logged = func() {
		ended()
		s.metrics.observe([]byte(method), 200, tr.command, time.Since(tr.start))
	}
	pipe := newChunkPipe(4)
	em.attach <- bufio.NewWriterSize(pipe, 32<<10)
	go func() {
		<-em.done
		pipe.CloseWrite()
	}()
	ctx.Response.SetBodyStream(&bodyReader{pipe: pipe, em: em, ctx: ctx, stop: cancel, logged: logged, cork: corkOf(ctx.Conn())}, -1)
	cancel = nil // the body reader owns the context now
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
	pipe   *chunkPipe
	em     *httpEmitter
	ctx    *fasthttp.RequestCtx
	stop   context.CancelFunc
	logged func() // marks the request's log entry finished
	cork   *corkConn
	once   sync.Once
}

// heldBody hands fasthttp an answer that is whole in memory.
type heldBody struct {
	b    []byte
	err  error // the command's, sent as the trailer
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
	return nil
}

// streamError sets the X-Stream-Error trailer for a command's error after
// output (none when the client went away).
func streamError(ctx *fasthttp.RequestCtx, err error) {
	if err != nil && !errors.Is(err, ErrClientGone) {
		msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(err.Error())
		ctx.Response.Header.Set("X-Stream-Error", msg)
	}
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
	n, err := b.pipe.Read(p)
	if err == io.EOF {
		<-b.em.done
		streamError(b.ctx, b.em.err)
	}
	return n, err
}

// Close is called by fasthttp when the response ends or the client goes:
// it stops the command.
func (b *bodyReader) Close() error {
	b.once.Do(func() {
		if b.cork != nil {
			b.cork.Uncork() // the rest goes with fasthttp's last write
		}
		b.pipe.CloseRead()
		b.stop()
		b.logged()
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
