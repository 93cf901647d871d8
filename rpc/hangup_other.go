//go:build !linux

// hangup_other.go: without POLLRDHUP a hang-up is noticed only when the
// answer is written; the watch only knows the running command (Shutdown).

package rpc

import (
	"context"
	"net"
	"sync"
)

type hangupWatch struct {
	mu     sync.Mutex
	cancel context.CancelFunc
}

func newHangupWatch(net.Conn) *hangupWatch { return &hangupWatch{} }

func (w *hangupWatch) start(cancel context.CancelFunc) {
	w.mu.Lock()
	w.cancel = cancel
	w.mu.Unlock()
}

func (w *hangupWatch) stop() {
	w.mu.Lock()
	w.cancel = nil
	w.mu.Unlock()
}
