//go:build !linux

// fault_other.go: elsewhere, no such question (fault.go).

package storage

// mountedReadOnly is not asked elsewhere: a read-only file system shows
// as the failed commit's error.
func mountedReadOnly(string) bool { return false }

// roomOn cannot tell here (-1): a commit that succeeds clears a fault,
// and the reserve is not made (reserve.go).
func roomOn(string) int64 { return -1 }
