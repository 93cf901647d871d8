// body.go: answers that stream after the handler returns. fasthttp copies
// a body of known length with its WriteTo, in the connection's goroutine:
// a file's bytes go from the store's read buffer into the connection's
// write buffer, with no pipe and no goroutine between them.

package gateway

import (
	"context"
	"errors"
	"io"

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

// pipeBody is an answer of unknown length (a CAR, a listing): write runs
// in its own goroutine into a pipe that fasthttp reads as a chunked body.
type pipeBody struct {
	pr   *io.PipeReader
	stop context.CancelFunc
	done func()
}

func newPipeBody(ctx context.Context, write func(ctx context.Context, w io.Writer) error) *pipeBody {
	ctx, stop := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	go func() {
		err := write(ctx, pw)
		if err != nil {
			log.Debugf("gateway: streaming: %v", err)
		}
		pw.CloseWithError(err)
	}()
	return &pipeBody{pr: pr, stop: stop}
}

func (b *pipeBody) setDone(f func()) { b.done = f }

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

// Close stops the writer and ends the request.
func (b *pipeBody) Close() error {
	b.stop()
	_ = b.pr.Close()
	if b.done != nil {
		b.done()
		b.done = nil
	}
	return nil
}
