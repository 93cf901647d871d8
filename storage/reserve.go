// reserve.go: the space kept aside so that removing blocks works on a
// full disk.

package storage

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ReserveName is the file, beside the store file, that holds the
// reserve.
const ReserveName = "blocks.reserve"

// DefaultReserveBytes is Options.ReserveBytes: room for the index pages
// of one step of deletes (a commit writes the pages it changes before it
// frees the old ones; about 7 KiB per delete in a large index, so some
// 224 KiB a step), with room to spare. Each step frees pages the next
// one reuses, so this need not grow with the number of deletes.
const DefaultReserveBytes = 512 << 10

// deleteStep is how many block deletes a commit on the reserve's room
// holds (commitInSteps).
const deleteStep = 32

// reserveRetry is how often the writer tries to make the reserve again
// while it is missing.
const reserveRetry = 5 * time.Second

// reserve is a file of allocated blocks that the writer removes when a
// commit that only removes (deletes) fails for want of space, so that
// it can be tried again: on a full disk the index pages a delete
// writes must come from somewhere. A commit that stores something never
// takes it. The writer makes it again once the file system has room for
// it twice over. All its methods run on the writer goroutine.
type reserve struct {
	path    string
	size    int64
	present bool
	tried   time.Time
}

func newReserve(storePath string, size int64) *reserve {
	return &reserve{path: filepath.Join(filepath.Dir(storePath), ReserveName), size: size}
}

// make allocates the reserve when it is missing and the file system has
// room for it twice over (asked at most every reserveRetry). It reports
// whether it made it: a write the file system took.
func (r *reserve) make() bool {
	if r == nil || r.size <= 0 || r.present || time.Since(r.tried) < reserveRetry {
		return false
	}
	r.tried = time.Now()
	if fi, err := os.Stat(r.path); err == nil && allocatedBytes(fi) >= r.size {
		r.present = true // left by the last run
		return false
	}
	if room := statRoom(r.path); room < 2*r.size {
		return false
	}
	f, err := os.OpenFile(r.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	err = preallocate(f, r.size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(r.path)
		return false
	}
	r.present = true
	return true
}

// release removes the reserve and reports whether there was one to
// give back.
func (r *reserve) release() bool {
	if r == nil || !r.present {
		return false
	}
	r.present = false
	r.tried = time.Now()
	return os.Remove(r.path) == nil
}

// commitInSteps commits group, which only removes, on a full disk: each
// request in a commit of its own, and a request that removes blocks
// deleteStep of them at a time, so that each commit needs few new index
// pages and the pages it frees are there for the next. It stops at the
// first error; the steps before it stay committed (a removed block is
// removed whether or not its neighbours in the request were).
func (w *writer) commitInSteps(group []*request) error {
	for _, r := range group {
		if !blockDeletes(r) {
			if err := w.commit([]*request{r}); err != nil {
				return err
			}
			continue
		}
		for i := 0; i < len(r.muts); i += deleteStep {
			j := min(i+deleteStep, len(r.muts))
			step := &request{muts: r.muts[i:j]}
			if r.sizes != nil {
				step.sizes = r.sizes[i:j]
			}
			if err := w.commit([]*request{step}); err != nil {
				return err
			}
		}
	}
	return nil
}

// blockDeletes reports whether r only deletes blocks, which may be
// committed apart from each other.
func blockDeletes(r *request) bool {
	for _, m := range r.muts {
		if m.kind != opDel || string(m.bucket) != string(bucketBlocks) {
			return false
		}
	}
	return len(r.muts) > 0
}

// removesOnly reports whether group's commit stores nothing: no block,
// no move, no datastore value, no new segment. Only such a commit may
// take the reserve.
func removesOnly(group []*request) bool {
	for _, r := range group {
		for _, m := range r.muts {
			if m.kind != opDel {
				return false
			}
		}
	}
	return true
}

// noSpace reports whether err is the file system's "no space left on
// device" (or over a quota).
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
