// hangup_linux.go: noticing a client that hung up while its command runs.

package rpc

import (
	"context"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// hangupEvery is how often a running command's connection is checked.
const hangupEvery = 100 * time.Millisecond

// watchHangup calls cancel once the peer of c has closed its side (or
// reset the connection), until stop is called. It only polls the socket
// (POLLRDHUP), never reads, so a pipelined request stays intact. Go's
// net/http cancels a request's context on the same event.
func watchHangup(c net.Conn, cancel context.CancelFunc) (stop func()) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return func() {}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(hangupEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			gone := false
			err := rc.Control(func(fd uintptr) {
				p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
				n, err := unix.Poll(p, 0)
				gone = err == nil && n > 0 && p[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
			})
			if err != nil || gone {
				cancel()
				return
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}
