// Command bench compares cairn with Kubo v0.43.1 side by side on this
// machine: both daemons offline on loopback, inside a network namespace of
// their own (unshare --net, only lo up), each run on a fresh repo (cairn:
// --profile=test; Kubo: its test profile). Per run and daemon it measures
// the idle RssAnon after start, add of a random file with only-hash and
// stored (pinned), cat, dag/export and get archive+gzip of it, the peak
// RssAnon over those (sampled every 50 ms), the HTTP gateway's GET of the
// file, a range in its middle (time to first byte), the file as a CAR and
// the listing of a 10,000-entry directory with their peak RssAnon
// (benchutil.RunGateway; a daemon without a gateway is noted, not failed),
// disk bytes written per byte
// added, and POST /api/v0/version with 16 connections (wrk) with the
// daemon's CPU per request over that run (utime+stime); for cairn
// also the flash wear of unpin + GC and of a re-add into the freed pages.
// The disk's fdatasync write rate is measured in the same runs, buffered
// (as dd conv=fdatasync: the reference) and with O_DIRECT (the
// device alone, informative); the stored add's note also gives the
// only-hash add against that rate, the ceiling of any stored add. It prints
// every figure as cairn and Kubo medians of the runs with their ranges,
// the ratio and its goal (the Goal of each figure in main.go), then the
// arm64 binary sizes.
//
// The adds post the file as one multipart part of known length, as curl
// -F does (benchutil.AddFile): the client stands for another machine, and
// a streamed body of unknown length, through a pipe in chunks, took it
// more of the two shared cores.
//
// `make bench` builds cairn (amd64 and arm64) and installs Kubo once into
// $HOME/.cache/cairn-bench (scripts/bench-kubo.sh, never committed).
//
//	go run ./scripts/bench [-size 256] [-runs 3] [-bin bin/cairn] [-kubo PATH] [-wrk 3] [-cairn-env GOMAXPROCS=1]
package main
