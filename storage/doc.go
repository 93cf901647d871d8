// Package storage keeps a node's blocks in append-only segment files and
// its index and small records in one bbolt file.
//
// Start with Open (store.go), which returns a *Store. Store.Blockstore gives a
// boxo blockstore.Blockstore (blockstore.go) and Store.Datastore a go-datastore
// Batching datastore (datastore.go). All writes go through one writer goroutine
// (writer.go) that commits many puts per bbolt transaction.
//
// # On-disk layout (schema 4)
//
// <repo>/blocks.db, a bbolt file. Top-level buckets:
//
//	"meta"    "version"     => uint32 big-endian schema version (currently 4)
//	          "blocks.n"    => uint64 big-endian number of stored blocks
//	          "blocks.size" => uint64 big-endian sum of their sizes
//	          "written"     => uint64 big-endian bytes written to the files by
//	                           the commits before this one, and at Close by
//	                           all (flash wear; absent until the first commit)
//	          "seg.active"  => uint32 the segment new blocks are appended to
//	          "seg.next"    => uint32 the id the next new segment gets
//	          "migrate", "migrate.at" => only while a schema-1 store is
//	                           being migrated (migrate.go)
//	          "run.next"    => uint32 the number the next run gets
//	          "merge.after" => the last key the merge in progress copied
//	"runs"    run name => a bucket (a run of the index, runs.go):
//	             multihash bytes => 16 bytes: uint32 segment, uint32
//	             offset of the block's bytes in it, uint32 length,
//	             uint32 CRC-32C of the bytes (12 bytes, no CRC, in
//	             entries that schema 3 wrote: those are checked
//	             against the block's hash)
//	"runinfo" run name => 9 bytes: uint8 state (open, sealed, merging,
//	                      building), uint64 entries
//	"runbloom" run name => the Bloom filter of a sealed run's keys
//	"segs"    uint32 segment id => 24 bytes: uint64 end of its last committed
//	                             record, uint64 blocks the index points to
//	                             in it, uint64 bytes of their records
//	"data"    datastore key ("/a/b") => value bytes
//
// <repo>/blocks.segs/NNNNNNNN.seg, the segment files: "cairnSG1", then
// records, each
//
//	uint32 data length | uint8 key length | key (multihash) | data
//
// appended and never changed in place. A segment takes records until it
// passes Options.SegmentBytes (64 MiB); then the next one begins. Past
// the active segment's indexed end it may also hold datastore records
// (dslog.go): key 0x00 0x00, 'P' or 'D', the datastore key (no multihash
// begins so); data a CRC-32C of key and value, then the value.
//
// Blocks are keyed by multihash, as Kubo keys its flatfs: CIDs that share a
// multihash (a raw and a dag-pb CID of the same bytes) share one stored block.
// Blocks whose multihash is the identity function are never stored: their
// bytes live in the CID.
//
// # Why segments
//
// Schema 1 kept block bytes inside bbolt, each block in a nested bucket of
// its own under a sequence number. With the data a board accumulates
// (10^6 blocks of 1 KiB) that shape cost what issue figures showed: every
// open walked every page to rebuild bbolt's freelist (NoFreelistSync):
// 5.4 s and 72 MiB RssAnon at 10^6 blocks, 104 s inside a 256 MiB
// cgroup; a 1 KiB block took a 4 KiB page of its own (4 bytes on disk
// per byte held); and bbolt's map of the whole file capped 32-bit boards
// at 900 MB. With block bytes appended to segment files (as WiscKey and
// Badger's value log do) and bbolt holding only the index, measured
// with storage alone (scripts/storescale, 10^6 random 1 KiB blocks put
// through PutAsync): open 1.2 ms at 1.0e6 blocks with 1.5 MiB RssAnon;
// 1.13 to 1.18 bytes on disk per byte held (record headers 39 bytes a
// block, the index 95 to 140 MB); 12,000 puts/s when every put commits
// the index (the old layout: 12,500), 21,600 with the lag of lag.go.
//
// # Why checksums (schema 4)
//
// Every block read is checked before it is handed out, so that a bit
// flipped on the card is never served. Hashing each read with SHA-256
// halved cat's throughput on an x86 core with SHA instructions, and the
// boards' cores have none; a CRC-32C per index entry, computed when the
// block is written (or moved, or replayed after a crash, both after its
// bytes are checked), costs a few bytes of index and runs at memory
// speed. Schema 3 stores are upgraded by writing the version: their
// entries keep no CRC and are checked against the block's hash.
//
// # Why runs (schema 3)
//
// Schema 2 kept the index as one bbolt B+tree keyed by multihash. Keys
// are random, so once the tree is large every indexed block lands in a
// leaf of its own and each commit rewrites one 4 KiB leaf per block:
// with scripts/storescale under the daemon's memory target, puts fell
// from 23-27k/s at 131k blocks to 15.5k/s at 10^6 (17-18.6 MiB RssAnon),
// and the index writes were 4 bytes per byte of 1 KiB block on the card.
// Schema 3 keeps the index as sorted runs (runs.go; an LSM tree's shape
// inside bbolt): new entries go into a small open run, sealed runs are
// merged in key order a step per commit, so an entry is rewritten about
// once per tier, appended to full pages. Same measurement: 40.5k puts/s
// at 131k blocks, 35.3k from 131k to 917k and 37.3k at 10^6 (flat), 10.4
// MiB RssAnon, an index file of 77 MB instead of 100. A Bloom filter per
// sealed run (10 bits per entry, read from the map) keeps the lookup of
// a new block's key (every put checks it) to about one search.
//
// # Invariants
//
//   - "meta" holds "version" equal to SchemaVersion (a read-only open
//     also reads a schema-2 file, whose index is one "index" bucket; a
//     writable open moves that bucket into "runs" as the first run);
//   - a key is in at most one readable run (every state but building);
//     each "runinfo" count equals its run's entries; at most one run is
//     open; a merge's output exists exactly while runs are merging, and
//     holds only keys its inputs hold, with the same locations; a sealed
//     run's filter admits every key the run holds;
//   - every index entry points into a segment that has a "segs" entry,
//     inside its committed end, at the data of a record whose header names
//     the same key; every "segs" entry's counts equal those of the index
//     entries pointing into it; its file exists and is at least that long;
//   - the active segment has an entry (it may hold no live block); every
//     other segment holds at least one (the commit that empties it
//     removes the entry, and the file after the commit);
//   - "blocks.n" equals the number of index entries, and "blocks.size" the
//     sum of their lengths; both change in the transaction that changes
//     the index;
//   - every index key decodes as a multihash that is not the identity hash,
//     and the stored bytes hash to it (Check verifies hashes only when
//     asked to, since that reads every block);
//   - bytes of a segment before its committed end never change, but for
//     the data of a removed block's record, which PunchRemoved (reclaim.go)
//     may turn into a hole (zeros; its header and key stay); past the
//     active segment's end sit only records of acknowledged blocks not yet
//     indexed (lag.go), of acknowledged datastore writes not yet in "data"
//     (dslog.go) and, after a crash, a cut write, which Open cuts;
//     segment files no entry names are removed at Open.
//
// # Durability
//
// A commit appends its blocks' records to the active segment (pwritev)
// and fdatasyncs the segment. A group of block puts alone (lag.go) is
// acknowledged then: its blocks go into an in-memory index that readers
// consult first, and into bbolt with the next full commit, at the latest
// after IndexLagBlocks blocks (512) or IndexLagBytes (16 MiB). Small
// datastore writes (pins, names, the MFS root: keys up to 251 bytes) take
// the same path as records of their own, and an overlay answers for them
// until the next full commit writes them into "data" (records count
// with the blocks lagging beside them; alone, they wait for up to four
// times IndexLagBlocks); a Batch's
// Datastore batch follows the batch's blocks into the same sync, so that
// an add and its pin cost one fdatasync. Every
// other commit (deletes, long keys, moves, a segment roll, Close)
// first folds those entries into its bbolt transaction, then applies its
// own mutations, and returns once bbolt has committed (it fsyncs). So an
// acknowledged block survives kill -9 and power loss: if it was not yet
// in the index, Open finds its record past the active segment's indexed
// end and indexes it, checking each record's bytes against its multihash
// and stopping at the first that fails (a write the crash cut, never
// acknowledged); the bytes after that are cut. It applies the datastore
// records among them in order, each checked by its CRC. PutAsync returns at once;
// Sync waits for every earlier PutAsync. PutAsyncContext gives up when
// its context ends while the writer's queue is full (a commit slow on the
// disk does not hold a request whose client left); its batch's Sync then
// reports the failure. A crash loses at most the batch that was being
// committed, never an acknowledged one, and never leaves half a block.
//
// # Restart
//
// bbolt either reads its freelist from a page or rebuilds it by walking
// every page of the file. During a run the freelist is not synced
// (NoFreelistSync: a commit writes only its own pages); Close's last
// commit writes it, so that the next Open reads it instead of walking
// the index (1.2 ms at 10^6 blocks). After a crash the next Open walks
// the index file's pages: the index only, no block bytes (95 MB at 10^6
// 1 KiB blocks).
//
// # Removing blocks and giving space back
//
// A delete removes the index entry and lowers its segment's counts; a
// segment left with no live block is removed by the commit that emptied
// it (after the commit). Reclaim (reclaim.go) gives back the rest: a
// segment whose removed records take at least half of it has its live
// blocks copied to the end of the active segment, a chunk per commit,
// and is then removed, so it rewrites at most what it frees (GC calls it
// after each sweep). A store over its cap (node's StorageMax) asks it to
// reclaim every segment holding removed records. Last, Reclaim merges
// the index runs that deletes left sparse (less than half of their leaf
// pages in use, so the merge writes less than it frees) and gives the
// index file's free pages back (giveback.go): on Linux it punches holes
// over them (fallocate PUNCH_HOLE, the file keeps its size), writing no
// byte, between commits and only when no reader holds a page freed
// since; bbolt never reads a free page and writes a whole page before
// using it again. Compact (at daemon start, when free pages pass half
// the file and 4 MiB) rewrites the file, which also shrinks its size.
//
// # A full disk
//
// The store keeps ReserveName (Options.ReserveBytes, 8 MiB) allocated
// beside the index file. A commit that only removes (deletes of blocks
// or datastore keys) and that the disk refuses for want of space gives
// it up and is tried again, so that removing always works; the writer
// makes it again once the file system has room for it twice over
// (reserve.go). Reclaim needs room to copy live blocks; where it has
// none, PunchRemoved gives the space of removed records back in place,
// in every segment: holes over their data, whole pages only, headers
// and keys kept. A reader that looked a block up before its removal and
// then reads zeros looks it up again (readBlock): not found, or where
// it was moved, never damaged.
//
// # Flash
//
// Block bytes are written once (plus Reclaim's copies, bounded above) and
// a commit writes the index pages it changed plus bbolt's meta page. The
// writer coalesces concurrent puts into one transaction (up to
// MaxBatchBytes), so an add of many blocks costs few fsyncs: one
// fdatasync of the segment per MaxBatchBytes (1 MiB by default), and two
// for bbolt per index commit (every 512 blocks or 16 MiB). Store.Writes
// counts what the commits write (segment records, the pages each
// allocates and its meta page), since Open and, through "written", over
// the store's life: what the store costs the card. An index entry is
// written into the open run (a small tree: a commit's entries share its
// leaves), then once per merge tier in key order.
//
// # Memory
//
// While a batch commits it is on the heap once (the queued values,
// written straight from their buffers with pwritev); an index commit
// adds the index pages it changes: those of the open run (at most
// 16,384 entries) and of one merge step (at most 32,768 entries copied). With the queue
// (MaxPendingBytes) holding the batch being written and the next one,
// the writer holds at most MaxPendingBytes plus one index commit's
// pages, about 6 MiB with the defaults (1 MiB batches, 2 MiB queued).
// Blockstore.PutAsyncThen tells the caller when the store no longer holds
// a block's bytes (its transaction ended), so an import reuses its leaf
// buffers instead of allocating one per block.
//
// # Reads
//
// A read looks the block up in a short read transaction and copies its
// bytes with pread from the segment file (descriptors kept open, with
// POSIX_FADV_SEQUENTIAL: the blocks of a file are stored in order). No
// block byte is read through bbolt's memory map: under a board's memory
// cgroup the kernel kept evicting mapped pages and faulted them back one
// 4 KiB page at a time (cat of a 1 GiB file in a 256 MiB cgroup: 68-70
// MiB/s from the map, 380-450 MiB/s with pread; docs/performance.md).
// Reads and removals of segment files share a lock: a removal waits for
// the reads in progress, and a read that finds its segment gone answers
// not found (the block was deleted meanwhile).
//
// Every block read from a segment file is checked before it is handed
// out (hashcheck.go), against its index entry's CRC-32C or, for an entry
// schema 3 wrote, its multihash: bytes that changed (a bit flipped on the
// card) fail with ErrBlockDamaged naming the block, so no reader (cat,
// get, CAR export, bitswap, the gateway) ever serves them. SHA-256 runs at
// 1.4 GB/s on an x86 core with SHA-NI (a 256 KiB View 0.19 ms against
// 0.01 ms without a check); CRC-32C at memory speed.
//
// # Caveats
//
// On 32-bit ARM bbolt's memory map cannot safely pass 1 GiB (the next
// step is 2 GiB, beside the Go heap in a 3 GiB address space). It maps
// the index only (about 77 bytes a block at 10^6 blocks), and 32-bit
// builds bound the index's pages in use (Options.MaxIndexBytes, 768 MiB:
// about 10 million blocks); block puts past it fail with ErrIndexFull.
//
// # Files
//
//   - store.go: opening and closing the store, schema version, counters,
//     Compact of the index file.
//   - segments.go: segment files: record format, appending, reading,
//     removing.
//   - writer.go: the single writer goroutine that batches puts into few
//     transactions.
//   - blockstore.go: the boxo blockstore.Blockstore view of the blocks.
//   - datastore.go: the go-datastore view of the "data" bucket.
//   - reclaim.go: Reclaim, giving removed blocks' space back, and
//     PunchRemoved, which does it in place on a full disk.
//   - reserve.go: the space kept aside for removing on a full disk.
//   - giveback.go: giving the index file's free pages back as holes.
//   - runs.go: the index as sorted runs: lookups, the open run, merges,
//     the filters, and the in-place upgrade of a schema-2 index.
//   - migrate.go: moving a schema-1 store to the current schema at Open.
//   - lag.go: acknowledging block puts before the index holds them, and
//     indexing them at Open after a crash.
//   - dslog.go: datastore writes as segment records, and the overlay that
//     answers for them until a full commit.
//   - fadvise_linux.go, fadvise_other.go: the sequential read-ahead hint for
//     segment files (Linux only).
//   - sync_linux.go, sync_other.go: pwritev and fdatasync of segment
//     files (elsewhere: a write per slice and fsync).
//   - check.go: Check, which walks the invariants above; BlockFile.
//   - hashcheck.go: the check of every block read (CRC-32C or hash).
//   - fault.go, fault_linux.go, fault_other.go: Fault, what keeps the
//     store from writing (a read-only file system, the last commit's
//     error), and the file system's room.
//   - errors.go: the sentinel errors.
package storage
