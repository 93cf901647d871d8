// cork.go: gathering the many small writes of one answer into a few large
// ones. fasthttp writes a streamed body as 4 KiB chunks and flushes the
// socket after each (three writes for even the smallest answer: its chunk,
// the last chunk, the trailer); every write is a syscall and, on loopback,
// a wake-up of the reader. The bytes on the wire are unchanged. A large
// write of a command skips fasthttp's chunks: WriteChunk frames it as one
// chunk and writes it from the pipe's buffer (bodyReader.Read).

package rpc

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"
)

// corkBytes is how much a corked connection holds before it writes: two
// loopback segments of 64 KiB. Measured on cat of 256 MiB (see
// docs/performance.md, "Where the time goes").
const corkBytes = 128 << 10

// corkListener makes every accepted connection a *corkConn, with its
// hang-up watch kept in running until it closes.
type corkListener struct {
	net.Listener
	running *sync.Map // *hangupWatch => struct{}
}

func (l corkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &corkConn{Conn: c, watch: newHangupWatch(c), running: l.running}
	l.running.Store(cc.watch, struct{}{})
	return cc, nil
}

// corkConn holds written bytes while corked (Cork) and writes them when
// the next write would not fit, at Flush, or together with the first
// write after Uncork. Only the goroutine that serves the connection calls
// Write, Cork, Uncork and Flush. An answer always ends with a write after
// Uncork (the trailer), so nothing is left held when a connection goes
// idle or is closed.
type corkConn struct {
	net.Conn
	corked bool
	held   []byte // from corkBufs while bytes are held (nil: none)
	err    error  // a write error of held bytes, reported by the next Write

	// watch serves the connection's commands, one at a time; running
	// is the server's set of watches (Shutdown stops their commands).
	watch   *hangupWatch
	running *sync.Map
}

// Close closes the connection and takes its watch out of the server's
// set.
func (c *corkConn) Close() error {
	if c.running != nil {
		c.running.Delete(c.watch)
	}
	return c.Conn.Close()
}

// Cork makes later writes wait in memory.
func (c *corkConn) Cork() { c.corked = true }

// Uncork stops holding: bytes held so far go out with the next write
// (fasthttp always writes once more at the end of an answer).
func (c *corkConn) Uncork() { c.corked = false }

// Flush writes the held bytes now (before waiting for more output).
func (c *corkConn) Flush() error {
	if c.err != nil || c.held == nil {
		return c.err
	}
	err := c.send(c.held)
	c.release()
	return err
}

func (c *corkConn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.held == nil {
		if !c.corked || len(p) > corkBytes {
			return c.Conn.Write(p)
		}
		c.held = corkBufs.get(corkBytes)
	}
	h := c.held
	switch {
	case len(h)+len(p) <= cap(h):
		// Fits: hold it, or send it all in one write.
		h = append(h, p...)
		c.held = h
		if c.corked {
			return len(p), nil
		}
		err := c.send(h)
		c.release()
		return len(p), err
	case c.corked && len(p) <= cap(h):
		// Full: send what is held and hold p.
		if err := c.send(h); err != nil {
			c.release()
			return 0, err
		}
		c.held = append(h[:0], p...)
		return len(p), nil
	default:
		bufs := net.Buffers{h, p}
		_, err := bufs.WriteTo(c.Conn)
		c.release()
		if err != nil {
			c.err = err
			return 0, err
		}
		return len(p), nil
	}
}

// WriteChunk writes the held bytes, then p framed as one chunk of a
// chunked HTTP/1.1 body (its size in hex, CRLF, p, CRLF), in one
// vectored write.
func (c *corkConn) WriteChunk(p []byte) error {
	if c.err != nil {
		return c.err
	}
	var size [18]byte
	line := append(strconv.AppendInt(size[:0], int64(len(p)), 16), '\r', '\n')
	bufs := make(net.Buffers, 0, 4)
	if c.held != nil {
		bufs = append(bufs, c.held)
	}
	bufs = append(bufs, line, p, crlf)
	_, err := bufs.WriteTo(c.Conn)
	if c.held != nil {
		c.release()
	}
	if err != nil {
		c.err = err
	}
	return err
}

var crlf = []byte("\r\n")

// send writes b; an error is kept for later writes.
func (c *corkConn) send(b []byte) error {
	if _, err := c.Conn.Write(b); err != nil {
		c.err = err
		return err
	}
	return nil
}

// release gives the held buffer back.
func (c *corkConn) release() {
	corkBufs.put(c.held)
	c.held = nil
}

// SyscallConn reaches the socket (polling for a hang-up).
func (c *corkConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, fmt.Errorf("rpc: %T has no socket", c.Conn)
}

// corkOf finds the *corkConn under c (the connection guard wraps it), or
// nil.
func corkOf(c net.Conn) *corkConn {
	for c != nil {
		switch t := c.(type) {
		case *corkConn:
			return t
		case interface{ NetConn() net.Conn }:
			c = t.NetConn()
		default:
			return nil
		}
	}
	return nil
}
