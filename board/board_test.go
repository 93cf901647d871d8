package board_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"cairn/board"
)

// Ensure every profile's budget derives limits that keep the documented
// order: resource manager < GOMEMLIMIT < MemoryHigh < MemoryMax, with the
// derived consumers fitting under GOMEMLIMIT.
func TestDerive_EveryProfile_Consistent(t *testing.T) {
	for _, p := range board.Profiles() {
		for _, memTotal := range []int{0, 430, 7800, 64000} {
			m := board.BudgetFor(p, memTotal)
			l, err := board.Derive(m)
			if err != nil {
				t.Fatalf("%s (MemTotal %d): %v", p.Name, memTotal, err)
			}
			if !(l.NetMemoryMiB < l.GoMemLimitMiB && l.GoMemLimitMiB < l.MemoryHighMiB && l.MemoryHighMiB < l.MemoryMiB) {
				t.Fatalf("%s: order broken: %+v", p.Name, l)
			}
			if l.HeapNeedMiB() > l.GoMemLimitMiB {
				t.Fatalf("%s: consumers need %d MiB > GOMEMLIMIT %d", p.Name, l.HeapNeedMiB(), l.GoMemLimitMiB)
			}
			if p.RAMMiB > 0 && m > p.RAMMiB/2 {
				t.Fatalf("%s: budget %d MiB is more than half of the board's %d MiB", p.Name, m, p.RAMMiB)
			}
		}
	}
}

// Ensure a budget below the floor is refused with a message naming it.
func TestDerive_BelowFloor(t *testing.T) {
	if _, err := board.Derive(board.MinMemoryMiB); err != nil {
		t.Fatalf("floor itself: %v", err)
	}
	_, err := board.Derive(board.MinMemoryMiB - 1)
	if !errors.Is(err, board.ErrBudgetTooSmall) || !strings.Contains(err.Error(), "below the floor of 128 MiB") {
		t.Fatalf("got %v", err)
	}
}

// Ensure Fill keeps overrides, derives the rest, and rejects overrides
// that break the budget.
func TestBudget_Fill_Overrides(t *testing.T) {
	l, err := board.Budget{MemoryMiB: 512, HTTPConcurrency: 40}.Fill()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := board.Derive(512)
	if l.HTTPConcurrency != 40 || l.GoMemLimitMiB != d.GoMemLimitMiB || l.StorePendingMiB != d.StorePendingMiB {
		t.Fatalf("got %+v", l)
	}
	for _, tc := range []struct {
		name string
		l    board.Budget
		want string
	}{
		{"gomemlimit above high", board.Budget{MemoryMiB: 512, GoMemLimitMiB: 500}, "GOMEMLIMIT 500 MiB must be below MemoryHigh"},
		{"high above max", board.Budget{MemoryMiB: 512, MemoryHighMiB: 600}, "MemoryHigh 600 MiB must be below the budget"},
		{"http buffers", board.Budget{MemoryMiB: 256, HTTPConcurrency: 2000}, "more than GOMEMLIMIT"},
		{"network memory", board.Budget{MemoryMiB: 512, NetMemoryMiB: 400}, "resource manager memory 400 MiB must be below GOMEMLIMIT"},
		{"queue", board.Budget{MemoryMiB: 512, StoreBatchMiB: 8, StorePendingMiB: 4}, "at least one batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.l.Fill()
			if !errors.Is(err, board.ErrInconsistent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// Ensure Lookup names the known boards when it fails.
func TestLookup_Unknown(t *testing.T) {
	_, err := board.Lookup("pi9")
	if !errors.Is(err, board.ErrUnknownBoard) || !strings.Contains(err.Error(), "pi-zero-2w") || !strings.Contains(err.Error(), "auto") {
		t.Fatalf("got %v", err)
	}
	for _, n := range board.Names() {
		if _, err := board.Lookup(n); err != nil {
			t.Fatal(err)
		}
	}
}

func meminfo(mib int) string {
	return "MemTotal:       " + strconv.Itoa(mib*1024) + " kB\nMemFree:         1000 kB\n"
}

// Ensure detection maps device-tree models and MemTotal to profiles,
// stepping down for smaller-memory variants of a family.
func TestDetect_Models(t *testing.T) {
	for _, tc := range []struct {
		model    string // "" = no device tree
		memMiB   int    // 0 = no meminfo
		want     string
		wantBudg int
	}{
		{"Raspberry Pi Zero 2 W Rev 1.0\x00", 427, "pi-zero-2w", 256},
		{"Raspberry Pi Zero W Rev 1.1\x00", 432, "pi-zero-w", 256},
		{"Raspberry Pi Model B Rev 2\x00", 432, "pi-zero-w", 256},
		{"Raspberry Pi 3 Model B Plus Rev 1.3\x00", 921, "pi3", 512},
		{"Raspberry Pi 3 Model A Plus Rev 1.1\x00", 432, "pi-zero-2w", 256},
		{"Raspberry Pi 4 Model B Rev 1.4\x00", 7812, "pi4-8g", 3072},
		{"Raspberry Pi 4 Model B Rev 1.4\x00", 3797, "pi4-4g", 2048},
		{"Raspberry Pi 4 Model B Rev 1.2\x00", 1848, "pi4-2g", 1024},
		{"Raspberry Pi 4 Model B Rev 1.1\x00", 925, "pi3", 512},
		{"Raspberry Pi 400 Rev 1.0\x00", 3797, "pi4-4g", 2048},
		{"Raspberry Pi 5 Model B Rev 1.0\x00", 8052, "pi5", 3072},
		{"Raspberry Pi 5 Model B Rev 1.0\x00", 4044, "pi4-4g", 2048},
		{"Raspberry Pi 4 Model B Rev 1.4\x00", 0, "pi4-8g", 3072},
		{"Pine64 RockPro64\x00", 3900, "generic", 1950},
		{"", 24000, "generic", board.GenericMaxMiB},
		{"", 200, "generic", board.MinMemoryMiB},
		{"", 0, "generic", board.GenericDefaultMiB},
	} {
		fsys := fstest.MapFS{}
		if tc.model != "" {
			fsys["proc/device-tree/model"] = &fstest.MapFile{Data: []byte(tc.model)}
		}
		if tc.memMiB != 0 {
			fsys["proc/meminfo"] = &fstest.MapFile{Data: []byte(meminfo(tc.memMiB))}
		}
		d := board.Detect(fsys)
		if d.Profile.Name != tc.want || d.MemoryMiB != tc.wantBudg || d.MemTotalMiB != tc.memMiB {
			t.Fatalf("%q %d MiB: got %s budget %d (MemTotal %d, %s), want %s budget %d",
				tc.model, tc.memMiB, d.Profile.Name, d.MemoryMiB, d.MemTotalMiB, d.Reason, tc.want, tc.wantBudg)
		}
		if tc.model != "" && !strings.Contains(d.Reason, strings.TrimRight(tc.model, "\x00")) {
			t.Fatalf("reason %q does not name the model", d.Reason)
		}
	}
}

// Ensure the StorageMax init writes is 90% of the disk, rounded, whatever
// the word size (a 32-bit store bounds its index instead).
func TestFitStorage_Disk(t *testing.T) {
	d := board.Disk{Free: 51_234_000_000, Used: 1_000_000}
	got, err := board.FitStorage(d)
	if err != nil || got != 46_000_000_000 || board.FormatSize(got) != "46GB" {
		t.Fatalf("big disk: %d %v", got, err)
	}
	got, err = board.FitStorage(board.Disk{Free: 500_000_000})
	if err != nil || got != 450_000_000 {
		t.Fatalf("small disk: %d %v", got, err)
	}
	_, err = board.FitStorage(board.Disk{Free: 50_000_000})
	if !errors.Is(err, board.ErrDiskTooSmall) || !strings.Contains(err.Error(), "only 50MB free") {
		t.Fatalf("tiny disk: %v", err)
	}
}

// Ensure CheckStorage refuses a StorageMax above the disk, counting the
// store's own file as available.
func TestCheckStorage_Limits(t *testing.T) {
	d := board.Disk{Free: 2_000_000_000, Used: 3_000_000_000}
	if err := board.CheckStorage(5_000_000_000, d); err != nil {
		t.Fatalf("fits with the store's own space: %v", err)
	}
	err := board.CheckStorage(6_000_000_000, d)
	if !errors.Is(err, board.ErrDiskTooSmall) || !strings.Contains(err.Error(), "6GB is larger than the disk offers (2GB free, 3GB used") {
		t.Fatalf("over disk: %v", err)
	}
	if err := board.CheckStorage(10_000_000_000, board.Disk{Free: 1e12}); err != nil {
		t.Fatalf("10GB on a 1TB disk: %v", err)
	}
}

// Ensure sizes print in Kubo's decimal units.
func TestFormatSize_Units(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{10e9, "10GB"}, {850e6, "850MB"}, {1_500_000_000, "1.5GB"}, {83_012_345_678, "83GB"}, {999, "999B"}, {2e12, "2TB"}} {
		if got := board.FormatSize(tc.n); got != tc.want {
			t.Fatalf("FormatSize(%d): got %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := board.RoundSize(47_654_321_000); got != 47_000_000_000 {
		t.Fatalf("RoundSize: got %d", got)
	}
}
