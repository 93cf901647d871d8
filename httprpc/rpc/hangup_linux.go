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
	// A timer rather than a goroutine: most commands end before the
	// first check, and then cost one timer, not a goroutine and a ticker.
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	check := func() {
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
		mu.Lock()
		if !stopped {
			t.Reset(hangupEvery)
		}
		mu.Unlock()
	}
	mu.Lock()
	t = time.AfterFunc(hangupEvery, check)
	mu.Unlock()
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
}
