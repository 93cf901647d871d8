package benchutil

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"
)

// DirectWriteSpeed writes size bytes to a file in dir with O_DIRECT, in
// 4 MiB writes from one aligned buffer, then fdatasyncs it, and returns
// MiB/s: the device's own durable write rate, without the page cache (on a
// VM whose page cache is backed lazily by the host, the buffered figure of
// SyncWriteSpeed swings with the cache's recent history; this one does not
// go through it).
func DirectWriteSpeed(dir string, size int64) (float64, error) {
	p := filepath.Join(dir, "direct.bin")
	defer os.Remove(p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_DIRECT, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	const chunk, align = 4 << 20, 4096
	raw := make([]byte, chunk+align)
	off := align - int(uintptr(unsafe.Pointer(&raw[0]))%align)
	buf := raw[off : off+chunk]
	t0 := time.Now()
	for n := int64(0); n < size; n += chunk {
		if _, err := f.Write(buf); err != nil {
			return 0, err
		}
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return MiBs(size, time.Since(t0)), nil
}
