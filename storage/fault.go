// fault.go: what keeps the store from writing, for the metrics and the
// status page.

package storage

import (
	"context"
	"errors"
)

// Fault says why the store cannot write now, "" when nothing is known to
// stop it: its file system is mounted read-only (asked of the system at
// each call, so it clears once the file system is writable again), or
// the last commit failed (its error, until a commit that writes
// succeeds: a full disk, an I/O error). A store opened read-only has no fault.
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

// noteCommit records the outcome of group's commit for Fault. Only a
// commit that wrote something (a put) clears a fault: a full disk still
// takes a commit of deletes. A commit given up by its caller or the
// store's close says nothing about the disk.
func (w *writer) noteCommit(group []*request, err error) {
	switch {
	case err == nil:
		if w.fault.Load() != nil && puts(group) {
			w.fault.Store(nil)
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrClosed):
	default:
		msg := err.Error()
		w.fault.Store(&msg)
	}
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
