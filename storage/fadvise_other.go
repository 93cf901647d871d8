//go:build !linux

package storage

import "os"

// adviseSequential does nothing where there is no posix_fadvise (macOS):
// reads still work, with the kernel's default readahead.
func adviseSequential(*os.File) {}
