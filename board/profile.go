// profile.go: the named board profiles.

package board

import (
	"fmt"
	"sort"
	"strings"
)

// Profile describes one kind of board.
type Profile struct {
	// Name is what `cairn init --board=NAME` takes.
	Name string
	// Description names the boards it is for.
	Description string
	// RAMMiB is the board's memory; 0 for generic (read from /proc/meminfo).
	RAMMiB int
	// MemoryMiB is the daemon's memory budget (systemd MemoryMax); 0 for
	// generic, whose budget is half of MemTotal (see BudgetFor).
	MemoryMiB int
	// Only32Bit marks boards that have no 64-bit OS (armv6): they run a
	// 32-bit build, whose store bounds its index file.
	Only32Bit bool
	// Binary is the dist/ build to put on the board.
	Binary string
}

// GenericDefaultMiB is generic's budget when /proc/meminfo cannot be read.
const GenericDefaultMiB = 1024

// GenericMaxMiB caps generic's budget: cairn has no use for more.
const GenericMaxMiB = 4096

var profiles = []Profile{
	{Name: "pi-zero-w", Description: "Raspberry Pi Zero W, Zero, 1 (armv6, 512 MiB)",
		RAMMiB: 512, MemoryMiB: 256, Only32Bit: true, Binary: "cairn-linux-armv6"},
	{Name: "pi-zero-2w", Description: "Raspberry Pi Zero 2 W, 3 A+ (512 MiB)",
		RAMMiB: 512, MemoryMiB: 256, Binary: "cairn-linux-arm64"},
	{Name: "pi3", Description: "Raspberry Pi 3 B/B+, 2, 4 with 1 GiB (1 GiB)",
		RAMMiB: 1024, MemoryMiB: 512, Binary: "cairn-linux-arm64"},
	{Name: "pi4-2g", Description: "Raspberry Pi 4 / 400 / CM4 / 5 with 2 GiB",
		RAMMiB: 2048, MemoryMiB: 1024, Binary: "cairn-linux-arm64"},
	{Name: "pi4-4g", Description: "Raspberry Pi 4 / CM4 / 5 with 4 GiB",
		RAMMiB: 4096, MemoryMiB: 2048, Binary: "cairn-linux-arm64"},
	{Name: "pi4-8g", Description: "Raspberry Pi 4 / CM4 with 8 GiB",
		RAMMiB: 8192, MemoryMiB: 3072, Binary: "cairn-linux-arm64"},
	{Name: "pi5", Description: "Raspberry Pi 5 / 500 / CM5 with 8 GiB or more",
		RAMMiB: 8192, MemoryMiB: 3072, Binary: "cairn-linux-arm64"},
	{Name: "generic", Description: "any other Linux machine: budget is half of MemTotal, at most 4 GiB",
		Binary: "cairn-linux-<arch>"},
}

// Profiles returns every profile, smallest board first.
func Profiles() []Profile {
	return append([]Profile(nil), profiles...)
}

// Names returns the profile names, sorted.
func Names() []string {
	names := make([]string, 0, len(profiles))
	for _, p := range profiles {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the profile called name.
func Lookup(name string) (Profile, error) {
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("%w %q (known: %s, or auto to detect)", ErrUnknownBoard, name, strings.Join(Names(), ", "))
}

// BudgetFor returns p's memory budget in MiB. For generic it is half of
// memTotalMiB (GenericDefaultMiB when unknown, 0), clamped to
// [MinMemoryMiB, GenericMaxMiB].
func BudgetFor(p Profile, memTotalMiB int) int {
	if p.MemoryMiB > 0 {
		return p.MemoryMiB
	}
	if memTotalMiB <= 0 {
		return GenericDefaultMiB
	}
	return clamp(memTotalMiB/2, MinMemoryMiB, GenericMaxMiB)
}
