// response.go: the Emitter that carries a command's output onto the HTTP
// response, deciding the preamble at the first output.

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
// hands back the response's stream writer (attach). A single value's
// command (single) runs on the handler's goroutine and needs none of
// those channels: they stay nil.
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
	memBuf   memOut  // what mem points to
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

// init prepares e (the zero value, in place) for one command's output.
func (e *httpEmitter) init(cmd *Command, enc string, single bool) {
	e.enc, e.cmd, e.length, e.single = enc, cmd, -1, single
	if !single {
		e.first = make(chan struct{})
		e.attach = make(chan *bufio.Writer, 1)
		e.done = make(chan struct{})
	}
}

func (e *httpEmitter) signalFirst() {
	if e.first != nil {
		e.once.Do(func() { close(e.first) })
	}
}

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
		e.mem = &e.memBuf
		e.mem.buf = getMemBuf()
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
type memOut struct{ buf *[]byte } // from memBufs

func (m *memOut) Write(p []byte) (int, error) {
	*m.buf = append(*m.buf, p...)
	return len(p), nil
}

func (m *memOut) Flush() error { return nil }

// memBufs keeps the buffers of single answers between requests; the
// answer's body gives its buffer back once it is written (heldBody.Close).
var memBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledMem is the largest buffer kept for reuse.
const maxPooledMem = 64 << 10

func getMemBuf() *[]byte { return memBufs.Get().(*[]byte) }

func putMemBuf(b *[]byte) {
	if cap(*b) <= maxPooledMem {
		*b = (*b)[:0]
		memBufs.Put(b)
	}
}

// held is the whole answer of a single value (a buffer of memBufs) and
// true, once the command has finished, if it wrote one.
func (e *httpEmitter) held() (*[]byte, bool) {
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

// EncodedJSON is implemented by a value that keeps its own JSON encoding
// (json.Marshal's output, or nil to have it encoded), such as version's
// answer, the same for every request: the emitter writes those bytes.
type EncodedJSON interface{ EncodedJSON() []byte }

var newline = []byte{'\n'}

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
	if p, ok := v.(EncodedJSON); ok {
		if b := p.EncodedJSON(); b != nil {
			if _, err := e.w.Write(b); err != nil {
				e.gone = true
				return ErrClientGone
			}
			if _, err := e.w.Write(newline); err != nil {
				e.gone = true
				return ErrClientGone
			}
			return nil
		}
	}
	if e.mem != nil {
		// Straight into the held answer: json.Encoder writes what
		// json.Marshal returns, and the newline, in one Write.
		return json.NewEncoder(e.mem).Encode(v)
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
	if e.done != nil {
		close(e.done)
	}
}

// Header names and values every answer carries, canonical already
// (SetCanonical skips fasthttp's normalising).
var (
	hdrAllowHeaders  = []byte("Access-Control-Allow-Headers")
	hdrExposeHeaders = []byte("Access-Control-Expose-Headers")
	hdrExposed       = []byte(exposed)
	hdrChunked       = []byte("X-Chunked-Output")
	hdrStream        = []byte("X-Stream-Output")
	hdrOne           = []byte("1")
)

// commonHeaders sets the headers every answer of a command carries, value
// or error, and returns the response header. fasthttp sets Server.
func (s *Server) commonHeaders(ctx *fasthttp.RequestCtx) *fasthttp.ResponseHeader {
	h := &ctx.Response.Header
	h.SetCanonical(hdrAllowHeaders, hdrExposed)
	h.SetCanonical(hdrExposeHeaders, hdrExposed)
	if s.refusing.Load() {
		h.SetConnectionClose() // the answer to shutdown, or one running then
	}
	_ = h.AddTrailer("X-Stream-Error")
	return h
}

// preamble writes Kubo's headers for an output of the given kind.
func (s *Server) preamble(ctx *fasthttp.RequestCtx, kind OutputKind, enc string, req *Request) {
	h := s.commonHeaders(ctx)
	switch kind {
	case OutBytes:
		ct := "text/plain"
		if req != nil && req.Command.ContentType != nil {
			ct = req.Command.ContentType(req)
		}
		h.SetContentType(ct)
		h.SetCanonical(hdrStream, hdrOne)
	default:
		h.SetContentType(contentType(enc))
		if kind == OutStream || kind == OutNone {
			h.SetCanonical(hdrChunked, hdrOne)
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
	// valid HTTP; heldBody ends it with an empty trailer section (the
	// error is the body) and corks it into one write.
	ctx.Response.SetBodyStream(&heldBody{b: body, ctx: ctx, cork: corkOf(ctx.Conn())}, -1)
}
