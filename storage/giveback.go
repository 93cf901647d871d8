// giveback.go: giving the index file's free pages back to the file
// system, without rewriting the file.

package storage

import (
	"context"
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"
)

// giveBack punches holes over the index file's free pages (Linux; file
// systems that cannot, and other systems, keep them until Compact
// rewrites the file at daemon start) and returns the bytes the file
// takes on disk less than before. It writes no byte. It runs on the
// writer goroutine between commits, so that no commit allocates a page
// meanwhile, and only when bbolt holds no pending page (one freed while
// a read transaction that may still read it was open): every free page
// is then unreachable from any transaction, old or new. bbolt never
// reads a free page, and writes a whole page before it uses it again.
func (w *writer) giveBack() (int64, error) {
	// A write transaction that commits nothing releases the pending pages
	// no read transaction holds, and updates the counts. A reader that
	// began after the last commit still holds that commit's freed pages
	// (bbolt releases them once every reader is newer), so wait a little
	// for a moment without readers.
	for try := 0; ; try++ {
		if err := w.db.Update(func(*bolt.Tx) error { return errRolledBack }); !errors.Is(err, errRolledBack) {
			return 0, err
		}
		if w.db.Stats().PendingPageN == 0 {
			break
		}
		if try == giveBackTries {
			return 0, nil // readers all along: the next Reclaim
		}
		time.Sleep(giveBackWait)
	}
	ps := int64(w.db.Info().PageSize)
	var spans [][2]int64 // [from, to) in bytes
	err := w.db.Update(func(tx *bolt.Tx) error {
		hwm := int(tx.Size() / ps)
		for id := 2; id < hwm; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil || info.Type != "free" {
				continue
			}
			if n := len(spans); n > 0 && spans[n-1][1] == int64(id)*ps {
				spans[n-1][1] += ps
			} else {
				spans = append(spans, [2]int64{int64(id) * ps, int64(id+1) * ps})
			}
		}
		return errRolledBack
	})
	if !errors.Is(err, errRolledBack) {
		return 0, err
	}
	return punchSpans(w.db.Path(), spans)
}

// serveGiveBack answers a GiveBackIndex request on the writer goroutine.
func (w *writer) serveGiveBack(r *request) {
	if r.punch {
		var err error
		r.gaveBack, err = w.punchRemoved()
		r.done <- err
		return
	}
	err := w.compactRuns()
	if err == nil {
		r.gaveBack, err = w.giveBack()
	}
	r.done <- err
}

// compactRuns finishes the merge in progress, then merges the runs that
// deletes left sparse (runs.go, planSparse), a full step per commit, so
// that their pages are free for giveBack.
func (w *writer) compactRuns() error {
	w.compacting = true
	defer func() { w.compacting, w.planSparse = false, false }()
	if err := w.mergeToEnd(); err != nil {
		return err
	}
	w.planSparse = true
	err := w.commit(nil) // plans the sparse runs' merge, takes its first step
	w.planSparse = false
	if err != nil {
		return err
	}
	return w.mergeToEnd()
}

// mergeToEnd takes merge steps, a commit each, until no merge is left.
func (w *writer) mergeToEnd() error {
	for w.merging.Load() {
		if err := w.commit(nil); err != nil {
			return err
		}
	}
	return nil
}

// giveBackTries and giveBackWait bound the wait for a moment without
// readers: 20 ms at most, during which the writer waits too.
const (
	giveBackTries = 20
	giveBackWait  = time.Millisecond
)

// GiveBackIndex merges the index runs deletes left sparse, then gives
// the index file's free pages back to the file system (see
// writer.giveBack), and returns the bytes the file now takes less on
// disk. Reclaim calls it last.
func (s *Store) GiveBackIndex() (int64, error) {
	if s.w == nil {
		return 0, errors.New("storage: store is read-only")
	}
	r := &request{giveBack: true, done: make(chan error, 1)}
	if err := s.w.submit(context.Background(), r); err != nil {
		return 0, err
	}
	err := <-r.done
	return r.gaveBack, err
}
