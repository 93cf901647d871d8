// body.go: answers that stream after the handler returns. fasthttp copies
// a body of known length with its WriteTo, in the connection's goroutine:
// a file's bytes go from the store's read buffer into the connection's
// write buffer, with no pipe and no goroutine between them.

package gateway

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"cairn/node"

	"github.com/ipfs/go-cid"
)

// part is one span of a file, after its multipart prefix (if any).
type part struct {
	prefix string
	off, n int64
}

// readAt writes bytes [off, off+n) of some content to w.
type readAt func(ctx context.Context, off, n int64, w io.Writer) error

// unixfsReader reads the UnixFS file c from the store (or peers).
func unixfsReader(u *node.UnixFS, c cid.Cid) readAt {
	return func(ctx context.Context, off, n int64, w io.Writer) error {
		return u.WriteFile(ctx, c, off, n, w)
	}
}

// bytesReader reads data held in memory (a block).
func bytesReader(data []byte) readAt {
	return func(_ context.Context, off, n int64, w io.Writer) error {
		_, err := w.Write(data[off : off+n])
		return err
	}
}

// fileBody is parts of some content (a file, a block), then trailer.
type fileBody struct {
	ctx     context.Context
	read    readAt
	parts   []part
	trailer string
	length  int64 // of the whole body
	done    func()
}

func (b *fileBody) setDone(f func()) { b.done = f }

// errNoRead: fasthttp copies a body of known length with WriteTo.
var errNoRead = errors.New("gateway: file body is written with WriteTo")

// Read is never used by fasthttp for a body of known length; it fails
// rather than buffer.
func (b *fileBody) Read([]byte) (int, error) { return 0, errNoRead }

// WriteTo writes the parts. An error (a block that cannot be had, a
// client gone) ends the answer short, and fasthttp closes the connection,
// so the client sees a truncated body rather than wrong bytes.
func (b *fileBody) WriteTo(w io.Writer) (int64, error) {
	for _, p := range b.parts {
		if _, err := io.WriteString(w, p.prefix); err != nil {
			return 0, err
		}
		if err := b.read(b.ctx, p.off, p.n, w); err != nil {
			log.Debugf("gateway: streaming: %v", err)
			return 0, err
		}
	}
	if _, err := io.WriteString(w, b.trailer); err != nil {
		return 0, err
	}
	// Every part was written whole: the length announced.
	return b.length, nil
}

// Close ends the request (fasthttp closes the body when it is done with
// it, sent or not).
func (b *fileBody) Close() error {
	if b.done != nil {
		b.done()
		b.done = nil
	}
	return nil
}

// streamChunked answers with a chunked body that write writes after the
// handler returns, on the connection itself (fasthttp's hijack): each
// write of write is one chunk, so a CAR's 64 KiB writes go out as 64 KiB
// chunks instead of through a pipe read 4 KiB at a time. The connection
// closes after the answer. An error ends the body without its last chunk,
// so the client sees a cut answer, never a short one that looks whole.
func (rq *request) streamChunked(write func(ctx context.Context, w io.Writer) error) bool {
	ctx := rq.ctx
	h := &ctx.Response.Header
	h.SetContentLength(-1) // Transfer-Encoding: chunked
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	if name := rq.s.srv.Name; name != "" {
		h.Set("Server", name)
	}
	h.SetConnectionClose()
	head := append([]byte(nil), h.Header()...)
	sctx := rq.sctx
	body := &hijacked{}
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) {
		defer body.finish()
		bw := bufio.NewWriterSize(c, 64<<10)
		if _, err := bw.Write(head); err != nil {
			return
		}
		if err := write(sctx, chunkWriter{bw}); err != nil {
			log.Debugf("gateway: streaming: %v", err)
			_ = bw.Flush()
			return
		}
		if _, err := bw.WriteString("0\r\n\r\n"); err == nil {
			_ = bw.Flush()
		}
	})
	rq.body = body
	return true
}

// hijacked ends its request when the hijacked connection is done.
type hijacked struct{ done func() }

func (b *hijacked) setDone(f func()) { b.done = f }

func (b *hijacked) finish() {
	if b.done != nil {
		b.done()
	}
}

// chunkWriter frames each write as one HTTP/1.1 chunk.
type chunkWriter struct{ w *bufio.Writer }

func (c chunkWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if _, err := c.w.WriteString(strconv.FormatInt(int64(len(p)), 16) + "\r\n"); err != nil {
		return 0, err
	}
	if _, err := c.w.Write(p); err != nil {
		return 0, err
	}
	if _, err := c.w.WriteString("\r\n"); err != nil {
		return 0, err
	}
	return len(p), nil
}
