// Command storescale measures the store alone at scale: it opens (or
// creates) a store, puts -blocks random blocks of -size bytes through
// PutAsync, and prints the open time, the put rate, RssAnon at the end,
// the bytes on disk per byte held and the close time; run again with
// -blocks 0 to time a restart. -memtarget applies the daemon's memory
// target (internal/memtarget, 24 MiB as without a board profile);
// -lag-blocks and -batch set storage.Options. Not a comparison with Kubo
// (make bench-scale is): it shows where the store's own time and memory
// go.
//
//	go run ./scripts/storescale -dir /tmp/s -blocks 1000000    # grow
//	go run ./scripts/storescale -dir /tmp/s -blocks 0          # reopen
package main
