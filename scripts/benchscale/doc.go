// Command benchscale compares cairn with Kubo v0.43.1 as their repos grow:
// both daemons offline on loopback inside a network namespace of their own
// (unshare --net, only lo up), each on a fresh repo inited as the other
// benchmarks init theirs (cairn --profile=test, Kubo --profile=test: no
// bootstrap peers, no mDNS, and --offline, so no DHT). Root only.
//
// # Stages
//
// -stages lists cumulative block counts (default 131072,1048576; 10000000
// for a one-off run of 10^7). Each stage adds random files (fresh bytes
// from ChaCha8, -file 64 MiB each, the last one cut to the count; cairn
// and Kubo get the same files) with chunker=size-1024, raw-leaves,
// cid-version=1 and pin=true, so each KiB is one block; the add's rate
// (blocks/s) and its peak RssAnon (/proc/PID/status every 50 ms) are
// measured once, as the repo grows. Then, -runs times on the grown repo
// (default 3; the tables show medians and ranges): stop the daemon with
// SIGTERM and wait for it; start it and time process start to the first
// answer of /api/v0/version; RssAnon 3 s later; cat of the stage's first
// file, whose SHA-256 is checked in-process (MiB/s); repo/stat (median of
// 5 calls); and an add of a fresh 100-byte file, pinned (median of 50 in a
// row). The repo's bytes on disk (st_blocks, as du) per byte added are
// taken at the first stop.
//
// # GC
//
// After the last stage every file but the first (-keep 128 MiB of them, at
// most half of what was added) is unpinned; one-block adds run back to
// back for -window 10s without a GC, then again beside repo/gc: the GC's
// duration, the adds answered while it ran, their rate and its ratio to
// the rate without GC. Then the repo's bytes on disk per byte still held
// (pinned files and one-block adds), right after the GC and after a
// restart (cairn compacts its index file at start when free pages pass
// half of it and 4 MiB). These are one measurement each.
//
// # Output
//
// A table per stage, one for the GC and one across the stages (the
// slowest stage's restart over the fastest's): cairn and Kubo medians,
// their ratio, and the goal with "meets" or "misses" (a goal on the
// ratio is not checked without Kubo's figure). The goals: restart <= 500
// ms and <= 2x Kubo, and within 2x across stages; idle and add-peak
// RssAnon <= 1/3 of Kubo; add rate >= 1.5x Kubo; one-block add latency
// <= Kubo; cat >= 2x Kubo in the board's cgroup (-board); GC faster than
// Kubo; one-block adds during the GC at >= half their rate without it;
// <= 1.2 bytes on disk per byte held. The daemons take turns: one runs
// while the other is stopped.
//
// -board NAME inits cairn with that board profile and Kubo with test and
// -kubo-profile (lowpower), each in a memory cgroup of the board's
// budget (scripts/internal/benchutil's cgroup, as scripts/benchboard).
// -only cairn leaves Kubo out. A daemon that fails (an add refused, a
// start past -ready) sits out the rest; the tables print what was
// measured and the command exits 1.
//
// `make bench-scale` builds cairn and installs Kubo v0.43.1 once into
// $HOME/.cache/cairn-bench/kubo-v0.43.1 (scripts/bench-kubo.sh, the
// reference the other benchmarks use).
//
//	go run ./scripts/benchscale [-stages 131072,1048576] [-runs 3] [-board pi-zero-2w] [-only cairn] [-file 64] [-keep 128] [-window 10s] [-gc=false -dir DIR]
package main
