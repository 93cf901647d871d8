// Package board holds what cairn knows about the boards it runs on: named
// profiles (profile.go), the one memory budget every limit is derived from
// (budget.go), detection of the board from /proc (detect.go), and the store
// size that fits the disk and the word size (storage.go).
//
// It imports nothing of cairn's. Its Budget type is the config's Budget
// section (config.Config.Budget): cmd/cairn turns a profile into config
// values at `cairn init --board=NAME` and applies the budget when the daemon
// starts. The files beside the Go code are the systemd unit
// (systemd/cairn.service), the installer (install.sh) and the Debian
// packaging (deb/).
//
// # Budgets
//
// A profile names the board's RAM and a memory budget for the daemon. The
// budget is the service's hard memory cap (systemd MemoryMax); from it
// Derive computes MemoryHigh, GOMEMLIMIT, HTTP concurrency, the storage
// write queue and the resource manager's memory (NetMemoryMiB, the one
// formula the network layer uses too). The network layer derives its other
// limits (connection watermarks, bitswap) from the same budget in
// node.NetLimitsOf. Budget.Check states how they must relate:
//
//	resource manager + write queue + HTTP buffers + runtime floor
//	  <= GOMEMLIMIT < MemoryHigh < MemoryMax (the budget)
//
// A budget below MinMemoryMiB is refused (ErrBudgetTooSmall).
//
// # 32-bit ARM
//
// Block bytes sit in segment files read with pread; bbolt maps only the
// block index. On 32-bit ARM that map has to fit beside the Go heap in a
// 3 GiB address space, so the 32-bit builds (which armv6 boards, with no
// 64-bit OS, run) bound the index file (storage.DefaultMaxIndexBytes32,
// about 10 million blocks), not Datastore.StorageMax.
//
// # Files
//
//   - profile.go: the named board profiles.
//   - budget.go: the limits derived from one memory budget, and their checks.
//   - detect.go: which profile fits the machine, from /proc/device-tree/model
//     and /proc/meminfo.
//   - storage.go: a StorageMax that fits the disk and the word size.
//   - disk_linux.go, disk_other.go: free space on the disk (Linux; unknown
//     elsewhere).
//   - errors.go: the sentinel errors.
package board
