// storage.go: a StorageMax that fits the disk and the word size.

package board

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
)

// Max32BitStorage caps Datastore.StorageMax on 32-bit builds and armv6
// boards (900 MB). bbolt maps the whole store file; past 1 GiB the map
// grows straight to its 32-bit limit of 2 GiB, which rarely fits beside the
// Go heap in a 32-bit address space. 900 MB of blocks keeps the file, with
// its B+tree and free pages, under the 1 GiB step.
const Max32BitStorage = 900 * 1000 * 1000

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

// Capped32 reports whether the store is capped at Max32BitStorage: on a
// 32-bit build (wordBits 32) or an armv6 board.
func Capped32(p Profile, wordBits int) bool {
	return wordBits == 32 || p.Only32Bit
}

// FitStorage returns the StorageMax init writes: 90% of what the disk
// offers, at most Max32BitStorage when capped. note explains a cap ("" if
// none). It fails when that is below MinStorage.
func FitStorage(d Disk, capped bool) (size int64, note string, err error) {
	size = d.Avail() / 100 * diskShare
	if capped && size > Max32BitStorage {
		size = Max32BitStorage
		note = fmt.Sprintf("32-bit ARM: Datastore.StorageMax capped at %s, because bbolt memory-maps the "+
			"whole store and its 32-bit map cannot safely grow past 1 GiB; use the arm64 build on a "+
			"64-bit OS for a larger store", FormatSize(Max32BitStorage))
	}
	if size < MinStorage {
		return 0, "", fmt.Errorf("%w: only %s free for the store, cairn needs at least %s", ErrDiskTooSmall,
			FormatSize(d.Avail()), FormatSize(MinStorage*100/diskShare))
	}
	return RoundSize(size), note, nil
}

// CheckStorage checks a StorageMax of max bytes against the disk and the
// 32-bit cap.
func CheckStorage(max int64, d Disk, capped bool) error {
	if capped && max > Max32BitStorage {
		return fmt.Errorf("%w: Datastore.StorageMax %s is above the %s that bbolt can memory-map on 32-bit ARM; "+
			"set it to %s or less, or use the arm64 build on a 64-bit OS", ErrStoreTooLarge32,
			FormatSize(max), FormatSize(Max32BitStorage), FormatSize(Max32BitStorage))
	}
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
