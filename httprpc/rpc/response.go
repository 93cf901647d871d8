// response.go: the Emitter that carries a command's output onto the HTTP
// response, deciding the preamble at the first output (spec 3.1).

package rpc

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"sync"

	"github.com/valyala/fasthttp"
)

// ErrClientGone is returned by Emit and Write once the client has gone.
var ErrClientGone = errors.New("client disconnected")

// httpEmitter is written by the command goroutine. The first Emit or
// Write reports to the handler (first), which writes the preamble and
// hands back the response's stream writer (attach).
type httpEmitter struct {
	enc  string
	cmd  *Command
	req  *Request
	text *TextEnv

	once   sync.Once
	first  chan struct{} // closed at the first output or at the end
	attach chan *bufio.Writer
	done   chan struct{} // closed when the command has finished

	w        outWriter
	mem      *memOut // a single value's answer, held until the end
	started  bool
	finished bool
	isBytes  bool
	length   int64 // -1: not announced
	value    any   // first value, held until attach
	err      error
	gone     bool
	mu       sync.Mutex
	single   bool
	nValues  int
	textDone bool
}

func newHTTPEmitter(cmd *Command, enc string) *httpEmitter {
	return &httpEmitter{
		enc: enc, cmd: cmd, length: -1,
		first:  make(chan struct{}),
		attach: make(chan *bufio.Writer, 1),
		done:   make(chan struct{}),
		single: cmd.Output == OutSingle,
	}
}

func (e *httpEmitter) signalFirst() { e.once.Do(func() { close(e.first) }) }

// outWriter is where output goes: the response's stream writer, or the
// memory of a single value's answer.
type outWriter interface {
	io.Writer
	Flush() error
}

// start begins the output: a single value is kept in memory (memOut);
// other output blocks until the handler attached the stream writer.
func (e *httpEmitter) start(isBytes bool) error {
	if e.started {
		return nil
	}
	e.started = true
	e.isBytes = isBytes
	if e.single && !isBytes {
		e.mem = &memOut{e: e}
		e.w = e.mem
		return nil
	}
	w, err := e.stream()
	if err != nil {
		return err
	}
	e.w = w
	return nil
}

// stream reports the first output to the handler and waits for the
// response's stream writer.
func (e *httpEmitter) stream() (*bufio.Writer, error) {
	e.signalFirst()
	w, ok := <-e.attach
	if !ok || w == nil {
		e.gone = true
		return nil, ErrClientGone
	}
	return w, nil
}

// smallAnswer is how much of a single value's answer is kept in memory:
// the whole answer then goes out at the end in one write, headers and
// chunked framing included. A larger one is streamed as it is written.
const smallAnswer = 32 << 10

// memOut holds a single value's answer until the command ends, or until
// it passes smallAnswer bytes, when it moves them to the stream.
type memOut struct {
	e       *httpEmitter
	buf     []byte
	out     *bufio.Writer // the stream, once spilled
	spilled bool          // set before the handler hears of the output
}

func (m *memOut) Write(p []byte) (int, error) {
	if !m.spilled {
		if len(m.buf)+len(p) <= smallAnswer {
			m.buf = append(m.buf, p...)
			return len(p), nil
		}
		m.spilled = true
		w, err := m.e.stream()
		if err != nil {
			return 0, err
		}
		m.out = w
		if _, err := w.Write(m.buf); err != nil {
			return 0, err
		}
		m.buf = nil
	}
	if m.out == nil {
		return 0, ErrClientGone
	}
	return m.out.Write(p)
}

func (m *memOut) Flush() error {
	if m.out == nil {
		return nil
	}
	return m.out.Flush()
}

// held is the whole answer when it stayed in memory (nil otherwise). The
// handler calls it after first, once the command has finished.
func (e *httpEmitter) held() []byte {
	if e.mem == nil || e.mem.spilled {
		return nil
	}
	return e.mem.buf
}

// StartStream sends the answer's headers now, before any value
// (pubsub/sub: the client learns at once that it is subscribed).
func (e *httpEmitter) StartStream() error {
	if e.gone {
		return ErrClientGone
	}
	return e.start(false)
}

// SetLength announces X-Content-Length; it must come before any output.
func (e *httpEmitter) SetLength(n uint64) {
	if !e.started {
		e.length = int64(n)
	}
}

// Emit writes one value: one JSON document and a newline, flushed.
func (e *httpEmitter) Emit(v any) error {
	if e.gone {
		return ErrClientGone
	}
	if err := e.start(false); err != nil {
		return err
	}
	e.nValues++
	if err := e.encode(v); err != nil {
		return err
	}
	if err := e.w.Flush(); err != nil {
		e.gone = true
		return ErrClientGone
	}
	return nil
}

func (e *httpEmitter) encode(v any) error {
	switch e.enc {
	case "text":
		if e.cmd.Text != nil {
			if e.text == nil {
				e.text = &TextEnv{Out: e.w, Err: e.w, Req: e.req}
			}
			return e.cmd.Text(e.text, v)
		}
	case "xml":
		b, err := xml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = e.w.Write(b)
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := e.w.Write(b); err != nil {
		e.gone = true
		return ErrClientGone
	}
	return nil
}

// Write writes raw bytes of a byte stream.
func (e *httpEmitter) Write(p []byte) (int, error) {
	if e.gone {
		return 0, ErrClientGone
	}
	if err := e.start(true); err != nil {
		return 0, err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.gone = true
		return n, ErrClientGone
	}
	return n, nil
}

// Flush sends what was written so far to the client (a stream that
// writes a little at a time, such as log/tail).
func (e *httpEmitter) Flush() error {
	if e.gone {
		return ErrClientGone
	}
	if e.w == nil {
		return nil
	}
	if err := e.w.Flush(); err != nil {
		e.gone = true
		return ErrClientGone
	}
	return nil
}

// finish records the command's result and wakes whoever waits.
func (e *httpEmitter) finish(err error) {
	if e.w != nil && !e.gone {
		if e.enc == "text" && e.cmd.TextDone != nil && e.text != nil {
			_ = e.cmd.TextDone(e.text)
		}
		if ferr := e.w.Flush(); ferr != nil && err == nil {
			err = ErrClientGone
		}
	}
	e.mu.Lock()
	e.err = err
	e.finished = true
	e.mu.Unlock()
	e.signalFirst()
	close(e.done)
}

// commonHeaders sets the headers every answer of a command carries, value
// or error, and returns the response header.
func (s *Server) commonHeaders(ctx *fasthttp.RequestCtx) *fasthttp.ResponseHeader {
	h := &ctx.Response.Header
	h.Set("Access-Control-Allow-Headers", exposed)
	h.Set("Access-Control-Expose-Headers", exposed)
	if s.serverHdr != "" {
		h.Set("Server", s.serverHdr)
	}
	if s.refusing.Load() {
		h.SetConnectionClose() // the answer to shutdown, or one running then
	}
	_ = h.AddTrailer("X-Stream-Error")
	return h
}

// preamble writes the headers of spec 3.1 for an output of the given kind.
func (s *Server) preamble(ctx *fasthttp.RequestCtx, kind OutputKind, enc string, req *Request) {
	h := s.commonHeaders(ctx)
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
	h := s.commonHeaders(ctx)
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
