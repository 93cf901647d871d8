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
	mem      *memOut // a single value's answer (single), held until the end
	started  bool
	finished bool
	isBytes  bool
	length   int64 // -1: not announced
	value    any   // first value, held until attach
	err      error
	gone     bool
	mu       sync.Mutex
	single   bool // one value: kept in memory, the command run inline
	nValues  int
	textDone bool
}

func newHTTPEmitter(cmd *Command, enc string) *httpEmitter {
	return &httpEmitter{
		enc: enc, cmd: cmd, length: -1,
		first:  make(chan struct{}),
		attach: make(chan *bufio.Writer, 1),
		done:   make(chan struct{}),
	}
}

func (e *httpEmitter) signalFirst() { e.once.Do(func() { close(e.first) }) }

// outWriter is where output goes: the response's stream writer, or the
// memory of a single value's answer.
type outWriter interface {
	io.Writer
	Flush() error
}

// start begins the output. A single value's answer (single) is kept in
// memory until the command ends; other output blocks until the handler
// attached the response's stream writer.
func (e *httpEmitter) start(isBytes bool) error {
	if e.started {
		return nil
	}
	e.started = true
	e.isBytes = isBytes
	if e.single {
		e.mem = &memOut{}
		e.w = e.mem
		return nil
	}
	e.signalFirst()
	w, ok := <-e.attach
	if !ok || w == nil {
		e.gone = true
		return ErrClientGone
	}
	e.w = w
	return nil
}

// memOut holds a single value's answer. The value is whole in memory
// already when it is emitted (and json.Marshal encodes it whole), so this
// bounds nothing less than before; it lets the answer go out in one write
// and the command run on the handler's goroutine.
type memOut struct{ buf []byte }

func (m *memOut) Write(p []byte) (int, error) {
	m.buf = append(m.buf, p...)
	return len(p), nil
}

func (m *memOut) Flush() error { return nil }

// held is the whole answer of a single value and true, once the command
// has finished, if it wrote one.
func (e *httpEmitter) held() ([]byte, bool) {
	if e.mem == nil {
		return nil, false
	}
	return e.mem.buf, true
}

// StartStream sends the answer's headers now, before any value
// (pubsub/sub: the client learns at once that it is subscribed).
func (e *httpEmitter) StartStream() error {
	if e.gone {
		return ErrClientGone
	}
	if e.single {
		return nil // its one answer goes out at the end
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
