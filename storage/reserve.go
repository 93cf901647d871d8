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
// of a few thousand deletes (a commit writes the pages it changes
// before it frees the old ones), 0.03% of a 32 GB card.
const DefaultReserveBytes = 8 << 20

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
