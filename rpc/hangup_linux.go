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

// hangupWatch calls the running command's cancel once the peer of its
// connection has closed its side (or reset the connection). It only polls
// the socket (POLLRDHUP), never reads, so a pipelined request stays
// intact. Go's net/http cancels a request's context on the same event.
//
// A connection runs one command at a time, so it keeps one watch (in its
// corkConn) for all of them, with a timer that stays armed while commands
// keep coming: a request costs two uncontended locks, not a timer,
// closures and a handle on the socket. A check may then come sooner than
// hangupEvery after a command starts, which only notices a hang-up
// earlier; once no command runs, the timer is left to lapse.
type hangupWatch struct {
	mu     sync.Mutex
	rc     syscall.RawConn // nil: not a socket, never checked
	t      *time.Timer
	armed  bool               // t will call check
	cancel context.CancelFunc // the running command's; nil when none runs
}

func newHangupWatch(c net.Conn) *hangupWatch {
	w := &hangupWatch{}
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			w.rc = rc
		}
	}
	return w
}

// start watches for a command that cancel stops, until stop.
func (w *hangupWatch) start(cancel context.CancelFunc) {
	w.mu.Lock()
	w.cancel = cancel
	if !w.armed && w.rc != nil {
		w.armed = true
		if w.t == nil {
			w.t = time.AfterFunc(hangupEvery, w.check)
		} else {
			w.t.Reset(hangupEvery)
		}
	}
	w.mu.Unlock()
}

// stop ends the watch of the running command.
func (w *hangupWatch) stop() {
	w.mu.Lock()
	w.cancel = nil
	w.mu.Unlock()
}

func (w *hangupWatch) check() {
	w.mu.Lock()
	cancel := w.cancel
	if cancel == nil {
		w.armed = false // idle: the next start arms it again
	}
	w.mu.Unlock()
	if cancel == nil {
		return
	}
	gone := false
	err := w.rc.Control(func(fd uintptr) {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		n, err := unix.Poll(p, 0)
		gone = err == nil && n > 0 && p[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
	})
	if err != nil || gone {
		cancel() // at worst that of a command that has just ended: a no-op
	}
	w.mu.Lock()
	if w.cancel != nil && err == nil && !gone {
		w.t.Reset(hangupEvery)
	} else {
		w.armed = false
	}
	w.mu.Unlock()
}
