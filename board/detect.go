// detect.go: which profile fits the machine, from /proc/device-tree/model
// and /proc/meminfo.

package board

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Detection is what Detect found.
type Detection struct {
	Profile Profile
	// Model is the device-tree model string ("" when there is none).
	Model string
	// MemTotalMiB is MemTotal from /proc/meminfo (0 when unreadable).
	MemTotalMiB int
	// MemoryMiB is the budget for this machine (BudgetFor).
	MemoryMiB int
	// Reason says in one line why this profile was chosen.
	Reason string
}

// families maps device-tree model prefixes to the largest profile of the
// family; smaller-memory boards of a family step down (see fits). Order
// matters: longer prefixes first.
var families = []struct{ prefix, profile string }{
	{"Raspberry Pi 500", "pi5"},
	{"Raspberry Pi 5", "pi5"},
	{"Raspberry Pi Compute Module 5", "pi5"},
	{"Raspberry Pi 400", "pi4-8g"},
	{"Raspberry Pi 4", "pi4-8g"},
	{"Raspberry Pi Compute Module 4", "pi4-8g"},
	{"Raspberry Pi Zero 2", "pi-zero-2w"},
	{"Raspberry Pi 3", "pi3"},
	{"Raspberry Pi Compute Module 3", "pi3"},
	{"Raspberry Pi 2", "pi3"},
	{"Raspberry Pi Zero", "pi-zero-w"},
	{"Raspberry Pi Model", "pi-zero-w"},
	{"Raspberry Pi Compute Module Rev", "pi-zero-w"},
}

// stepDown is the order in which a 64-bit family gives way to a smaller
// profile when the board has less memory than the family's largest.
var stepDown = []string{"pi5", "pi4-8g", "pi4-4g", "pi4-2g", "pi3", "pi-zero-2w"}

// fits reports whether a board with memTotalMiB is big enough for p. The
// kernel reports less than the RAM on the box (firmware and GPU take some),
// so three quarters of it is enough.
func fits(p Profile, memTotalMiB int) bool {
	return memTotalMiB <= 0 || memTotalMiB >= p.RAMMiB*3/4
}

// Detect chooses a profile for the machine whose root file system is fsys
// (os.DirFS("/") for this one). It reads proc/device-tree/model and
// proc/meminfo; a missing or unknown model gives generic.
func Detect(fsys fs.FS) Detection {
	d := Detection{MemTotalMiB: memTotalMiB(fsys)}
	if b, err := fs.ReadFile(fsys, "proc/device-tree/model"); err == nil {
		d.Model = strings.TrimSpace(string(bytes.TrimRight(b, "\x00")))
	}
	name := "generic"
	for _, f := range families {
		if strings.HasPrefix(d.Model, f.prefix) {
			name = f.profile
			break
		}
	}
	p, _ := Lookup(name)
	switch {
	case name == "generic" && d.Model == "":
		d.Reason = "no device-tree model"
	case name == "generic":
		d.Reason = fmt.Sprintf("model %q is not a known board", d.Model)
	default:
		d.Reason = fmt.Sprintf("model %q", d.Model)
		if !fits(p, d.MemTotalMiB) {
			for i, n := range stepDown {
				if n != name {
					continue
				}
				for _, smaller := range stepDown[i+1:] {
					q, _ := Lookup(smaller)
					if q.RAMMiB < p.RAMMiB && fits(q, d.MemTotalMiB) {
						d.Reason += fmt.Sprintf(" with %d MiB: the %s budget", d.MemTotalMiB, q.Name)
						p = q
						break
					}
				}
				break
			}
		}
	}
	d.Profile = p
	d.MemoryMiB = BudgetFor(p, d.MemTotalMiB)
	return d
}

// memTotalMiB reads MemTotal (kB) from proc/meminfo; 0 when it cannot.
func memTotalMiB(fsys fs.FS) int {
	f, err := fsys.Open("proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return int(kb / 1024)
		}
	}
	return 0
}
