// Command attack runs hostile peers against a cairn daemon and checks
// that it holds (make attack). The daemon runs on a board profile
// (default pi-zero-2w) inside a memory cgroup of that budget, online on
// loopback only (the test profile: no bootstrap peers, mDNS off, the
// LAN DHT serving loopback peers), with pubsub and IPNS over pubsub on;
// the attackers are go-libp2p hosts and raw TCP connections in this
// process, which runs in a network namespace of its own.
//
// Before the battery it measures the idle figures: the latency of the
// RPC probe (id, then cat of a 256 KiB local file, in turn), RssAnon,
// goroutines (go_goroutines of /debug/metrics/prometheus) and connected
// peers. Each attack then runs for a bounded time while the probe runs
// and RssAnon is sampled; afterwards the attackers hang up and the
// daemon is given -settle to come back. Per attack it prints the peak
// RssAnon against the budget, the probe's median and p95 during the
// attack against idle, what was refused (the resource manager's blocked
// counts, libp2p_rcmgr_blocked_resources, and what the attacker saw) and
// whether it passed:
//
//   - latency: the probe's median during the attack at most 2x the idle
//     median (with a floor of -floor, since figures of a few milliseconds
//     on a shared loopback vary by more than that on their own); the p95
//     is printed beside it, not checked (on two shared cores it follows
//     the other load of the machine more than the daemon);
//   - memory: peak RssAnon within the board's budget;
//   - alive: the daemon never exited and every probe answered;
//   - idle: afterwards connected peers back to the idle count,
//     goroutines within 10% (+25) of idle, RssAnon within a sixteenth of
//     the budget of idle (16 MiB at 256 MiB). While it settles, RssAnon
//     is read from /proc every 500 ms and the daemon's own figures
//     (metrics, peers) scraped only every 5 s: a scrape allocates in the
//     daemon, and twice a second they kept it from ever being quiet for
//     the 5 s after which it returns its free memory.
//
// After the battery the daemon rests -final (150 s, longer than the
// caches the attacks fill live) and is checked against idle once more
// with the same bounds: what it holds then, it keeps. That line also
// gives the runtime's memory outside the heap (stacks, spans, the
// collector's metadata) against idle.
//
// Each attack also prints the CPU the daemon and the attackers used
// over it (cores, from /proc and the child's rusage), and the Go heap in
// use and free beside RssAnon after it. -heap DIR saves the daemon's
// heap profile there after each attack (diag/profile, a zip per attack,
// and final.zip after the final rest) to see what it holds; -cpu DIR
// its CPU profile over each attack, to see what it works on;
// -trace-settle prints each poll while an attack settles, for the whole
// of -settle.
//
// The attackers run in a child process (this command with -child) at
// nice 19: they stand for other machines on the LAN, so their own CPU is
// kept from competing with the daemon's as far as the scheduler allows.
//
// Root only (cgroups, unshare). The whole battery takes about 6 minutes, 150 s of them the final rest.
//
//	make attack [ATTACK_ARGS='-only conns,bitswap -duration 8s']
//
// # Files
//
//   - main.go: the harness: the daemon, the probe, the attacker child
//     process, the checks and the table.
//   - attacks.go: the battery (battery), one function per attack, and the
//     hostile peers they are made of (go-libp2p hosts without resource
//     limits of their own, scripts/internal/lanpeer's, raw meshsub,
//     bitswap and DHT streams, raw TCP).
package main
