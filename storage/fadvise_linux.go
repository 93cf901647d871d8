package storage

import (
	"os"

	"golang.org/x/sys/unix"
)

// adviseSequential tells the kernel that f is read mostly forward (the
// blocks of a file are stored in sequence), so it reads ahead further.
func adviseSequential(f *os.File) {
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL)
}
