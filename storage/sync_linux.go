// sync_linux.go: vectored writes and data-only syncs of segment files;
// holes punched in the index file.

package storage

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pwritevAll writes every byte of iov at off, with as few pwritev calls
// as the kernel takes.
func pwritevAll(f *os.File, iov [][]byte, off int64) error {
	total := 0
	for _, b := range iov {
		total += len(b)
	}
	for total > 0 {
		n, err := unix.Pwritev(int(f.Fd()), iov, off)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return &os.PathError{Op: "pwritev", Path: f.Name(), Err: err}
		}
		total -= n
		off += int64(n)
		for n > 0 && len(iov) > 0 {
			if n >= len(iov[0]) {
				n -= len(iov[0])
				iov = iov[1:]
			} else {
				iov[0] = iov[0][n:]
				n = 0
			}
		}
		for len(iov) > 0 && len(iov[0]) == 0 {
			iov = iov[1:]
		}
	}
	return nil
}

// fdatasync makes f's data durable (its metadata only where reading the
// data back needs it, as the file's size).
func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
		return nil
	}
}

// punchHole gives the bytes [off, off+n) of f back to the file system,
// keeping the file's size; reads of them return zeros. It reports false
// where the file system cannot.
func punchHole(f *os.File, off, n int64) (bool, error) {
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			return false, nil
		}
		return false, &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
}

// allocatedBytes is what fi's file takes on disk (holes excluded).
func allocatedBytes(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}

// preallocate allocates the first n bytes of f (fallocate), so that
// they take their blocks now.
func preallocate(f *os.File, n int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), 0, 0, n)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
