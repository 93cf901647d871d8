//go:build !linux

package files

import "io/fs"

// changeTime is 0 where Stat_t has no Ctim (macOS names it Ctimespec):
// ETags then come from size and mtime alone.
func changeTime(fs.FileInfo) int64 { return 0 }
