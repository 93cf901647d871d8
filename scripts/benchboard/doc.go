// Command benchboard measures the daemon's memory against a board
// profile's budget. For each profile it inits a repo with
// `cairn init --board=NAME`, starts the daemon, adds a large random file
// through the RPC and cats it back (checking its SHA-256), stores 10k
// pinned blocks with `block put --pin` and lists them (pin/ls when the
// daemon has it, refs/local in any case), sampling /proc/<pid>/status
// every 10 ms. It reports peak RssAnon per phase, VmHWM, peak RssFile and
// add/cat MB/s, and fails when peak RssAnon reaches the budget. Only
// loopback is used.
//
//	go run ./scripts/benchboard [-bin bin/cairn] [-size 1024] [-pins 10000] [-boards pi-zero-2w,pi4-8g]
package main
