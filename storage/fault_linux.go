// fault_linux.go: asking the system whether the repo's file system is
// mounted read-only, and how much room it has.

package storage

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// mountedReadOnly reports whether the file system holding path is
// mounted read-only.
func mountedReadOnly(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}

// roomOn returns the bytes the file system holding path has free for
// the store's user, -1 when it cannot tell.
func roomOn(path string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(filepath.Dir(path), &st) != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
