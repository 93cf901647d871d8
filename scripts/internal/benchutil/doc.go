// Package benchutil holds what the benchmark commands in scripts/ share:
// reading a daemon's memory from /proc, waiting for its RPC, and streaming
// add and cat through it. Everything talks to 127.0.0.1 only.
//
// # Files
//
//   - benchutil.go: memory sampling from /proc, major faults, random files,
//     add and cat through the RPC, a board's budget, disk usage of a repo,
//     the load average.
//   - gateway.go: the HTTP gateway's figures (a file, a range's first byte,
//     a CAR, a large directory's listing) and their lines of a table.
//   - cgroup.go: a memory cgroup of a board's budget for a daemon under test
//     (cgroup v2 or v1).
//   - table.go: figures measured several times, printed as medians with their
//     range and the ratio against a goal (a ratio to Kubo, a bound of its
//     own, or both).
//   - direct_linux.go, direct_other.go: the device's own durable write rate
//     with O_DIRECT (Linux only).
package benchutil
