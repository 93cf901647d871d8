// fault_linux.go: asking the system whether the repo's file system is
// mounted read-only.

package storage

import "golang.org/x/sys/unix"

// mountedReadOnly reports whether the file system holding path is
// mounted read-only.
func mountedReadOnly(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}
