// fault.go: what keeps the store from writing, for the metrics and the
// status page.

package storage

import (
	"context"
	"errors"
	"sync/atomic"
)

// Fault says why the store cannot write now, "" when nothing is known to
// stop it: its file system is mounted read-only (asked of the system at
// each call, so it clears once the file system is writable again), or
// the last commit failed (its error, until a commit succeeds that wrote
// something or found room on the file system: a full disk, an I/O
// error; see noteCommit). A store opened read-only has no fault.
func (s *Store) Fault() string {
	if s.w == nil {
		return ""
	}
	if mountedReadOnly(s.path) {
		return "read-only file system"
	}
	if p := s.w.fault.Load(); p != nil {
		return *p
	}
	return ""
}

// noteCommit records the outcome of group's commit for Fault. A commit
// that succeeds clears a fault when it wrote something (a put), when the
// writer could make its reserve again (a write the file system took), or
// when the file system has room for the index file's next growth step:
// a full disk still takes a commit of deletes, which alone says nothing.
// A commit given up by its caller or the store's close says nothing
// about the disk.
func (w *writer) noteCommit(group []*request, err error) {
	switch {
	case err == nil:
		made := w.res.make()
		if w.fault.Load() != nil && (made || puts(group) || w.hasRoom()) {
			w.fault.Store(nil)
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrClosed):
	default:
		msg := err.Error()
		w.fault.Store(&msg)
	}
}

// statRoom is roomOn, a variable for tests.
var statRoom = roomOn

// commitRoom, when set (by tests), is asked before each commit and may
// refuse it as a full disk would.
var commitRoom atomic.Pointer[func(group []*request) error]

// hasRoom reports whether the store's file system has room for
// GrowStep and the reserve, when that was given up, or cannot tell.
func (w *writer) hasRoom() bool {
	need := int64(GrowStep)
	if !w.res.present {
		need += w.res.size
	}
	room := statRoom(w.res.path)
	return room < 0 || room >= need
}

// puts reports whether group writes a value.
func puts(group []*request) bool {
	for _, r := range group {
		for _, m := range r.muts {
			if m.kind == opPut {
				return true
			}
		}
	}
	return false
}
