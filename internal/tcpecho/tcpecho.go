// Package tcpecho is a TCP echo server and a client that pushes bytes
// through one and checks what comes back: the tests and the benchmark of
// p2p forwarding (node/p2p/mount.go, scripts/netbench -p2p) use it as the
// service at the end of a tunnel.
package tcpecho

import (
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Server echoes every connection's bytes back until Close.
type Server struct {
	l  net.Listener
	wg sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]bool
}

// Listen starts an echo server on 127.0.0.1 (port 0: any).
func Listen() (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{l: l, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.l.Addr().String() }

// Port is the server's port.
func (s *Server) Port() int { return s.l.Addr().(*net.TCPAddr).Port }

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_, _ = io.Copy(c, c)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// Close stops the server and ends its connections.
func (s *Server) Close() error {
	err := s.l.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Result is what RoundTrip measured.
type Result struct {
	Sent, Got   [32]byte // SHA-256 of the bytes sent and received
	NSent, NGot int64
	Elapsed     time.Duration // from the first byte sent to the last received
}

// RoundTrip sends n pseudo-random bytes (from seed) on c while reading
// the echo, and returns when n bytes came back, or on the first error
// (the connection is closed then). It leaves c open on success.
func RoundTrip(c net.Conn, n int64, seed uint64) (Result, error) {
	var res Result
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		h := sha256.New()
		src := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
		buf := make([]byte, 64<<10)
		left := n
		for left > 0 {
			k := min(int64(len(buf)), left)
			_, _ = src.Read(buf[:k])
			h.Write(buf[:k])
			if _, err := c.Write(buf[:k]); err != nil {
				res.NSent = n - left
				c.Close() // the reader must not wait for what was never sent
				errc <- err
				return
			}
			left -= k
		}
		res.NSent = n
		copy(res.Sent[:], h.Sum(nil))
		errc <- nil
	}()
	h := sha256.New()
	got, rerr := io.Copy(h, io.LimitReader(c, n))
	res.NGot = got
	copy(res.Got[:], h.Sum(nil))
	if rerr == nil && got < n {
		rerr = io.ErrUnexpectedEOF
	}
	if rerr != nil {
		c.Close()
	}
	werr := <-errc
	res.Elapsed = time.Since(start)
	return res, errors.Join(rerr, werr)
}
