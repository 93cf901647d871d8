// disk_linux.go: free space on Linux.

package board

import "syscall"

// freeBytes is the space an unprivileged user may still write under path.
func freeBytes(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
