// Package connlimit guards a server's listener against clients that hold
// connections without using them (slowloris, silent sockets): it bounds
// the connections served at once, the connections of one client address,
// keeps a share of the capacity for local (loopback) clients, and gives
// every connection a deadline for its first request bytes. A connection
// reading a request body can be switched to an idle deadline (ReadIdle):
// each read may then wait at most that long for data.
//
// Connections over a limit are answered at once (429 for the address
// limit, 503 for the capacity) and closed, before any request is read; the
// RPC and the module ports (package httpapp) use it the same way.
//
// # Concurrency
//
// A Guard serves any number of listeners at once; a listener's Accept is
// called by one goroutine (the server's accept loop); its connections may
// be read, written and closed from any.
package connlimit

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits size a Guard; zero values mean the defaults in brackets.
type Limits struct {
	// Capacity caps the connections open at once (256).
	Capacity int
	// LocalReserve is the part of Capacity only local clients may use:
	// other clients are refused once Capacity-LocalReserve connections
	// are open (Capacity/4).
	LocalReserve int
	// PerAddr caps the connections of one non-local client address
	// (Capacity/8, at least 16). Local clients have no such cap.
	PerAddr int
	// FirstByte is how long a new connection may stay silent before its
	// first request byte arrives (10s).
	FirstByte time.Duration
	// IsLocal says which client addresses are local (nil: loopback).
	IsLocal func(netip.Addr) bool
	// WriteIdle, when set, bounds each write: a client that stops reading
	// for that long is dropped, however long the whole answer takes (0:
	// writes are bounded only by the server's own deadlines).
	WriteIdle time.Duration
}

func (l *Limits) setDefaults() {
	if l.Capacity <= 0 {
		l.Capacity = 256
	}
	if l.LocalReserve <= 0 {
		l.LocalReserve = l.Capacity / 4
	}
	if l.LocalReserve >= l.Capacity {
		l.LocalReserve = l.Capacity - 1
	}
	if l.PerAddr <= 0 {
		l.PerAddr = max(l.Capacity/8, 16)
	}
	if l.FirstByte <= 0 {
		l.FirstByte = 10 * time.Second
	}
	if l.IsLocal == nil {
		l.IsLocal = netip.Addr.IsLoopback
	}
}

// Guard counts the connections of one server, over all its listeners.
type Guard struct {
	lim Limits

	mu     sync.Mutex
	open   int                // connections admitted and not closed
	byAddr map[netip.Addr]int // open connections of non-local addresses
	// refused counts connections turned away (tests, benchmarks).
	refused atomic.Int64
}

// New returns a Guard of lim.
func New(lim Limits) *Guard {
	lim.setDefaults()
	return &Guard{lim: lim, byAddr: map[netip.Addr]int{}}
}

// Limits are the limits in force (defaults filled in).
func (g *Guard) Limits() Limits { return g.lim }

// Refused is the number of connections turned away so far.
func (g *Guard) Refused() int64 { return g.refused.Load() }

// Open is the number of connections admitted and not yet closed.
func (g *Guard) Open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// Listener guards l: its Accept returns only connections within the
// limits.
func (g *Guard) Listener(l net.Listener) net.Listener { return &listener{Listener: l, g: g} }

type listener struct {
	net.Listener
	g *Guard
}

// Accept returns the next connection within the limits; others are
// answered and closed here, before any of their bytes is read.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		gc, status, msg := l.g.admit(c)
		if gc == nil {
			l.g.refused.Add(1)
			refuse(c, status, msg)
			continue
		}
		if err := c.SetReadDeadline(time.Now().Add(l.g.lim.FirstByte)); err != nil {
			gc.Close()
			continue
		}
		return gc, nil
	}
}

func (g *Guard) admit(c net.Conn) (*Conn, int, string) {
	addr := remoteAddr(c)
	local := addr.IsValid() && g.lim.IsLocal(addr)
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.open >= g.lim.Capacity:
		return nil, 503, fmt.Sprintf("The server is serving its limit of %d connections; try again later.", g.lim.Capacity)
	case !local && g.open >= g.lim.Capacity-g.lim.LocalReserve:
		return nil, 503, fmt.Sprintf("The server is serving its limit of %d connections from other hosts; try again later.",
			g.lim.Capacity-g.lim.LocalReserve)
	case !local && g.byAddr[addr] >= g.lim.PerAddr:
		return nil, 429, fmt.Sprintf("Too many connections from %s: at most %d at once.", addr, g.lim.PerAddr)
	}
	g.open++
	if !local {
		g.byAddr[addr]++
	}
	return &Conn{Conn: c, g: g, addr: addr, local: local}, 0, ""
}

func (g *Guard) release(c *Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open--
	if !c.local {
		if g.byAddr[c.addr]--; g.byAddr[c.addr] <= 0 {
			delete(g.byAddr, c.addr)
		}
	}
}

func remoteAddr(c net.Conn) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		a, _ := netip.AddrFromSlice(ta.IP)
		return a.Unmap()
	}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// refuse answers a connection over a limit and closes it. The write
// cannot wait: a fresh socket's send buffer is empty, and the deadline
// covers a peer that never reads.
func refuse(c net.Conn, status int, msg string) {
	text := "Too Many Requests"
	if status == 503 {
		text = "Service Unavailable"
	}
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		status, text, len(msg)+1, msg)
	_ = c.Close()
}

// Conn is an admitted connection; Close gives its slot back.
type Conn struct {
	net.Conn
	g     *Guard
	addr  netip.Addr
	local bool
	once  sync.Once
	idle  atomic.Int64 // > 0: every Read waits at most this long (ReadIdle)
	// stalled: a write waited WriteIdle for a peer that did not read.
	stalled atomic.Bool
}

// Read reads, with the idle deadline renewed first when ReadIdle set one.
func (c *Conn) Read(p []byte) (int, error) {
	if d := c.idle.Load(); d > 0 {
		if err := c.Conn.SetReadDeadline(time.Now().Add(time.Duration(d))); err != nil {
			return 0, err
		}
	}
	return c.Conn.Read(p)
}

// Write writes, with the write deadline renewed first under WriteIdle. A
// write that times out marks the connection stalled: its Close then
// resets it (SO_LINGER 0), so that what its peer left unread does not
// stay queued in the kernel, up to the socket's send buffer, long after
// the server dropped it.
func (c *Conn) Write(p []byte) (int, error) {
	d := c.g.lim.WriteIdle
	if d > 0 {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(d)); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Write(p)
	if err != nil && d > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		c.stalled.Store(true)
	}
	return n, err
}

// SetReadDeadline sets a fixed deadline, ending a ReadIdle.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.idle.Store(0)
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline sets fixed deadlines, ending a ReadIdle.
func (c *Conn) SetDeadline(t time.Time) error {
	c.idle.Store(0)
	return c.Conn.SetDeadline(t)
}

// Close closes the connection and frees its slot (once); a stalled one
// (see Write) is reset rather than left to drain.
func (c *Conn) Close() error {
	c.once.Do(func() { c.g.release(c) })
	if l, ok := c.Conn.(interface{ SetLinger(int) error }); ok && c.stalled.Load() {
		_ = l.SetLinger(0) // TCP, also inside a multiaddr wrapper
	}
	return c.Conn.Close()
}

// SyscallConn reaches the socket (polling for a hang-up).
func (c *Conn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, fmt.Errorf("connlimit: %T has no socket", c.Conn)
}

// NetConn is the connection c wraps (as tls.Conn's).
func (c *Conn) NetConn() net.Conn { return c.Conn }

// ReadIdle makes every later read of c (a *Conn; others are left alone)
// wait at most d for data, until a fixed deadline is set again (a server
// does, before it waits for the next request). A server calls it when a
// request body starts, so that a long upload may take its time while a
// client that stops sending is dropped.
func ReadIdle(c net.Conn, d time.Duration) {
	if gc, ok := c.(*Conn); ok && d > 0 {
		gc.idle.Store(int64(d))
	}
}
