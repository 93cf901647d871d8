package commands_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/valyala/fasthttp/fasthttputil"
)

// BenchmarkRPC_Version measures the whole request path of POST
// /api/v0/version on kept-alive connections, one per goroutine, as
// `make bench` drives it with wrk; allocs/op are the server's (the client
// reuses its buffers). "tcp" is loopback TCP (the write and read syscalls
// are most of it); "mem" is fasthttp's in-memory listener, which leaves
// the server's own work (no socket: no hang-up checks either).
func BenchmarkRPC_Version(b *testing.B) {
	b.Run("tcp", func(b *testing.B) {
		srv := testutil.StartServer(b, testutil.MustOpenNode(b))
		benchVersion(b, func() (net.Conn, error) { return net.Dial("tcp", srv.Addr) })
	})
	b.Run("mem", func(b *testing.B) {
		n := testutil.MustOpenNode(b)
		l := fasthttputil.NewInmemoryListener()
		env := &rpc.Env{Table: commands.DefaultTable, Shutdown: func() {}}
		srv := rpc.NewServer(n, commands.DefaultTable, env, rpc.ServerOptions{ServerHeader: "cairn/" + node.Version})
		go srv.Serve(l)
		b.Cleanup(func() { srv.Shutdown(2 * time.Second) })
		benchVersion(b, l.Dial)
	})
}

func benchVersion(b *testing.B, dial func() (net.Conn, error)) {
	req := []byte("POST /api/v0/version HTTP/1.1\r\nHost: 127.0.0.1:5001\r\n\r\n") // as wrk sends it
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, err := dial()
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		for pb.Next() {
			if _, err := c.Write(req); err != nil {
				b.Error(err)
				return
			}
			if err := readAnswer(c, buf); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// readAnswer reads one chunked answer: up to the end of the trailer
// section after the last chunk.
func readAnswer(c net.Conn, buf []byte) error {
	n := 0
	for {
		m, err := c.Read(buf[n:])
		if err != nil {
			return err
		}
		n += m
		if !bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 200 ")) {
			return io.ErrUnexpectedEOF
		}
		if i := bytes.Index(buf[:n], []byte("\r\n0\r\n")); i >= 0 && bytes.HasSuffix(buf[i+3:n], []byte("\r\n\r\n")) {
			return nil
		}
		if n == len(buf) {
			return io.ErrShortBuffer
		}
	}
}
