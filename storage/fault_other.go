//go:build !linux

// fault_other.go: elsewhere, no such question (fault.go).

package storage

// mountedReadOnly is not asked elsewhere: a read-only file system shows
// as the failed commit's error.
func mountedReadOnly(string) bool { return false }
