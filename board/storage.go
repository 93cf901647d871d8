// storage.go: a StorageMax that fits the disk.

package board

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
)

// MinStorage is the smallest StorageMax init accepts (100 MB).
const MinStorage = 100 * 1000 * 1000

// diskShare is the part of the free space StorageMax takes, leaving the
// rest to the OS, its logs and updates.
const diskShare = 90

// WordBits is the word size of this build (32 on GOARCH=arm).
const WordBits = bits.UintSize

// Disk is what the store may grow into.
type Disk struct {
	// Free is the space left on the file system (for unprivileged users).
	Free int64
	// Used is what the store's files already take (they may be rewritten).
	Used int64
}

// Avail is the most the store can grow to: what it has plus what is free.
func (d Disk) Avail() int64 { return d.Free + d.Used }

// StatDisk measures the file system that holds dir (or, when dir does not
// exist yet, its nearest existing parent); used is what the store's files
// take (storage.DiskBytes).
func StatDisk(dir string, used int64) (Disk, error) {
	var d Disk
	p := dir
	for {
		if _, err := os.Stat(p); err == nil {
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	free, err := freeBytes(p)
	if err != nil {
		return d, fmt.Errorf("disk space of %s: %w", p, err)
	}
	d.Free = free
	d.Used = used
	return d, nil
}

// FitStorage returns the StorageMax init writes: 90% of what the disk
// offers. It fails when that is below MinStorage. (A 32-bit build is not
// capped here: its store bounds its index file instead, see
// storage.Options.MaxIndexBytes.)
func FitStorage(d Disk) (size int64, err error) {
	size = d.Avail() / 100 * diskShare
	if size < MinStorage {
		return 0, fmt.Errorf("%w: only %s free for the store, cairn needs at least %s", ErrDiskTooSmall,
			FormatSize(d.Avail()), FormatSize(MinStorage*100/diskShare))
	}
	return RoundSize(size), nil
}

// CheckStorage checks a StorageMax of max bytes against the disk.
func CheckStorage(max int64, d Disk) error {
	if max > d.Avail() {
		return fmt.Errorf("%w: Datastore.StorageMax %s is larger than the disk offers (%s free, %s used by the store); "+
			"lower Datastore.StorageMax or free some space", ErrDiskTooSmall, FormatSize(max), FormatSize(d.Free), FormatSize(d.Used))
	}
	return nil
}

// RoundSize rounds down to two significant decimal digits, so configs
// read "47GB" and "850MB" rather than byte counts.
func RoundSize(n int64) int64 {
	unit := int64(1)
	for n/unit >= 100 {
		unit *= 10
	}
	return n / unit * unit
}

// FormatSize writes n in Kubo's decimal units: "10GB", "850MB", "1.5GB"
// (one decimal when n is not a whole number of the largest unit).
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if n >= u.size {
			if n%u.size == 0 {
				return fmt.Sprintf("%d%s", n/u.size, u.name)
			}
			return strconv.FormatFloat(math.Round(float64(n)*10/float64(u.size))/10, 'f', -1, 64) + u.name
		}
	}
	return fmt.Sprintf("%dB", n)
}
