//go:build !linux

package benchutil

import "errors"

// DirectWriteSpeed needs Linux's O_DIRECT (the benchmarks run on Linux).
func DirectWriteSpeed(string, int64) (float64, error) {
	return 0, errors.New("O_DIRECT: Linux only")
}
