// Command storescale measures the store alone at scale: it opens (or
// creates) a store, puts -blocks random blocks of -size bytes through
// PutAsync, and prints the open time, the put rate, RssAnon at the end,
// the bytes on disk per byte held and the close time; run again with
// -blocks 0 to time a restart. -memtarget applies the daemon's memory
// target (internal/memtarget, 24 MiB as without a board profile);
// -lag-blocks and -batch set storage.Options; -cpuprofile writes a CPU
// profile; -verify then reads every
// block back and re-hashes it (storage.Check). Not a comparison with Kubo
// (make bench-scale is): it shows where the store's own time and memory
// go.
//
//	go run ./scripts/storescale -dir /tmp/s -blocks 1000000    # grow
//	go run ./scripts/storescale -dir /tmp/s -blocks 0          # reopen
//
// Cross-built for armv7 and run under qemu-user it shows what a 32-bit
// board's store holds:
//
//	GOARCH=arm GOARM=7 go build -o /tmp/ss ./scripts/storescale
//	qemu-arm-static /tmp/ss -dir /tmp/s32 -blocks 32000 -size 262144 -verify
package main
