// pipe.go: a pipe that moves whole writes to the reader, so that fasthttp's
// small reads (4 KiB) need no goroutine hand-off each.

package rpc

import (
	"io"
	"sync"
	"sync/atomic"
)

// chunkPipe carries copies of written slices through a bounded channel:
// at most depth writes are in flight, which bounds its memory. A buffer
// the reader has emptied goes back to the writer (free), so a steady
// stream copies into the same few buffers instead of allocating one per
// write (a 256 MiB cat was 256 MiB of garbage). free holds every buffer
// that can exist (depth queued, one being read, one being filled), so
// none is dropped when the writer runs ahead and then waits.
type chunkPipe struct {
	ch     chan []byte
	free   chan []byte // emptied buffers, for Write to reuse
	cur    []byte
	curBuf []byte        // the buffer cur is a part of
	done   chan struct{} // closed by CloseRead
	once   sync.Once
	wclose sync.Once
	ended  atomic.Bool // CloseWrite was called
}

func newChunkPipe(depth int) *chunkPipe {
	return &chunkPipe{ch: make(chan []byte, depth), free: make(chan []byte, depth+2), done: make(chan struct{})}
}

// Write copies p and queues it; it blocks while the queue is full and
// fails once the reader has gone.
func (p *chunkPipe) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var c []byte
	select {
	case c = <-p.free:
	default:
	}
	if cap(c) < len(b) {
		c = pipeBufs.get(len(b))
	}
	c = append(c[:0], b...)
	select {
	case p.ch <- c:
		return len(b), nil
	case <-p.done:
		return 0, ErrClientGone
	}
}

// CloseWrite ends the stream: the reader gets io.EOF after the queue.
func (p *chunkPipe) CloseWrite() {
	p.wclose.Do(func() {
		p.ended.Store(true)
		close(p.ch)
	})
}

// ready tells whether Read would return at once (bytes or the end)
// rather than wait for the writer.
func (p *chunkPipe) ready() bool {
	return len(p.cur) > 0 || len(p.ch) > 0 || p.ended.Load()
}

// CloseRead makes pending and later writes fail.
func (p *chunkPipe) CloseRead() { p.once.Do(func() { close(p.done) }) }

// Read serves from the current chunk, taking the next when it is empty.
func (p *chunkPipe) Read(b []byte) (int, error) {
	c, ok := p.next()
	if !ok {
		return 0, io.EOF
	}
	n := copy(b, c)
	p.consume(n)
	return n, nil
}

// next returns what is left of the current chunk, waiting for the next
// one when it is empty; ok is false at the end of the stream. The slice
// is valid until the next call of next or Read.
func (p *chunkPipe) next() (c []byte, ok bool) {
	for len(p.cur) == 0 {
		if p.curBuf != nil {
			select {
			case p.free <- p.curBuf:
			default:
			}
			p.curBuf = nil
		}
		c, ok := <-p.ch
		if !ok {
			p.recycle()
			return nil, false
		}
		p.cur, p.curBuf = c, c
	}
	return p.cur, true
}

// recycle gives the pipe's buffers to pipeBufs once the writer has
// closed and the reader has met the end: nothing uses them any more.
func (p *chunkPipe) recycle() {
	for {
		select {
		case b := <-p.free:
			pipeBufs.put(b)
		default:
			return
		}
	}
}

// consume marks the first n bytes of next's slice as read.
func (p *chunkPipe) consume(n int) { p.cur = p.cur[n:] }
