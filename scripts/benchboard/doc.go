// Command benchboard is the memory-budget half of the comparison with
// Kubo v0.43.1: cairn inited with --board=NAME (default pi-zero-2w) and
// Kubo with its test and lowpower profiles each run in a memory cgroup as
// large as the board's budget (Budget.MemoryMiB; memory.max on cgroup v2,
// memory.limit_in_bytes on v1, created under the benchmark's own cgroup),
// offline on loopback inside a network namespace of their own. Per run it
// adds a large random file (pinned) through the RPC and cats it back,
// checking its SHA-256, sampling RssAnon every 50 ms, and counts the
// daemon's major page faults (/proc/PID/stat) and the cgroup's pgmajfault
// (memory.stat) during the cat, then times the HTTP gateway on that file
// and on a 10,000-entry directory (benchutil.RunGateway). It prints cairn and Kubo medians with
// their ranges, the ratio and its goal (the Goal of each figure in
// main.go). -pins N adds N
// `block put --pin` and a `pin ls`. Root only (cgroups, unshare).
//
//	go run ./scripts/benchboard [-size 1024] [-runs 3] [-board pi-zero-2w] [-only cairn] [-pins 0]
package main
