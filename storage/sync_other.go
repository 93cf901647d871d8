//go:build !linux

// sync_other.go: the portable forms of sync_linux.go (one write per
// slice, a full fsync, no holes, no preallocation).

package storage

import (
	"errors"
	"os"
)

func pwritevAll(f *os.File, iov [][]byte, off int64) error {
	for _, b := range iov {
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

func fdatasync(f *os.File) error { return f.Sync() }

// punchHole is not done here: the free pages of the index file stay
// allocated until Compact.
func punchHole(*os.File, int64, int64) (bool, error) { return false, nil }

func allocatedBytes(fi os.FileInfo) int64 { return fi.Size() }

// preallocate is not done here: there is no reserve (reserve.go).
func preallocate(*os.File, int64) error { return errors.ErrUnsupported }
