//go:build !linux

// disk_other.go: cairn runs on Linux; elsewhere free space is unknown.

package board

import "errors"

func freeBytes(string) (int64, error) {
	return 0, errors.New("free disk space is only measured on Linux")
}
