package files

import (
	"io/fs"
	"syscall"
)

// changeTime is st's inode change time in seconds, 0 when unknown.
func changeTime(st fs.FileInfo) int64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int64(sys.Ctim.Sec)
	}
	return 0
}
