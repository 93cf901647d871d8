// Package storage keeps a node's blocks and small records in one bbolt file.
//
// Start with Open (store.go), which returns a *Store. Store.Blockstore gives a
// boxo blockstore.Blockstore (blockstore.go) and Store.Datastore a go-datastore
// Batching datastore (datastore.go). All writes go through one writer goroutine
// (writer.go) that commits many puts per bbolt transaction.
//
// # On-disk layout
//
// One bbolt file, <repo>/blocks.db. Top-level buckets:
//
//	"meta"    "version"     => uint32 big-endian schema version (currently 1)
//	          "blocks.n"    => uint64 big-endian number of stored blocks
//	          "blocks.size" => uint64 big-endian sum of their sizes
//	          "written"     => uint64 big-endian bytes written to the file by
//	                           the commits before this one, and at Close by
//	                           all (flash wear; absent until the first commit)
//	"index"   multihash bytes => uint64 big-endian sequence number
//	"blocks"  sequence number => nested bucket {"d" => raw block bytes}
//	"data"    datastore key ("/a/b") => value bytes
//
// Blocks are keyed by multihash, as Kubo keys its flatfs: CIDs that share a
// multihash (a raw and a dag-pb CID of the same bytes) share one stored block.
// Blocks whose multihash is the identity function are never stored: their
// bytes live in the CID.
//
// Block bytes sit under increasing sequence numbers (so new blocks land at
// the right edge of the tree) and each in a nested bucket of its own. bbolt
// keeps at least two entries per leaf page, so large values stored side by
// side get rewritten whenever a neighbour changes (measured: 4.7 bytes
// written per byte added); in a nested bucket a large block owns its pages
// (small ones stay inline in the parent leaf), so an add writes about one
// byte per byte and a delete rewrites no other block.
//
// # Invariants
//
//   - "meta" holds "version" equal to SchemaVersion.
//   - every "index" entry points to an existing "blocks" entry, and every
//     "blocks" entry is pointed to by exactly one index entry;
//   - "blocks.n" equals the number of index entries, and "blocks.size" the
//     sum of their block sizes; both change in the transaction that changes
//     the buckets;
//   - every index key decodes as a multihash that is not the identity hash,
//     and the stored bytes hash to it (Check verifies hashes only when
//     asked to, since that reads every block).
//   - bbolt memory is valid only inside a transaction: values handed out past
//     a transaction are copies. Only View callbacks (blockstore.go) see the
//     memory map directly, inside a short read transaction of their own.
//
// # Durability
//
// A put returns once the transaction that holds it has committed (bbolt
// fsyncs on commit), so an acknowledged block survives kill -9 and power
// loss. PutAsync returns at once; Sync waits for every earlier PutAsync.
// PutAsyncContext gives up when its context ends while the writer's queue
// is full (a commit slow on the disk does not hold a request whose client
// left); its batch's Sync then reports the failure.
// A crash loses at most the batch that was being committed, never a
// committed one, and never leaves half a block: bbolt commits are atomic.
//
// # Flash
//
// NoFreelistSync keeps commits to the pages that changed plus the meta page,
// and bbolt reuses freed pages instead of growing the file. The file grows
// in steps of GrowStep (4 MiB), or of MaxBatchBytes when that is larger (at
// most bbolt's 16 MiB), so it stays within Stat.UsedBytes plus free pages
// plus one step: a cap on UsedBytes and PendingBytes (Datastore.StorageMax)
// bounds the file on disk. The writer coalesces concurrent puts into one
// transaction (up to MaxBatchBytes), so an add of many blocks costs few
// fsyncs: one commit (two fdatasyncs) per MaxBatchBytes, 1 MiB by default.
//
// # Memory
//
// While a batch commits it is on the heap twice: the queued values, and
// the pages bbolt builds from them and writes at commit. With the queue
// (MaxPendingBytes) holding the batch being committed and the next one,
// the writer holds at most MaxPendingBytes plus MaxBatchBytes of heap,
// 3 MiB with the defaults (1 MiB batches, 2 MiB queued). Larger batches
// save fsyncs and cost heap: 4 MiB batches with 8 MiB queued took a
// 256 MiB add's peak RssAnon from 23 to 40 MiB (docs/performance.md).
// Blockstore.PutAsyncThen tells the caller when the store no longer holds
// a block's bytes (its transaction ended: bbolt copied them into its pages
// and wrote those), so an import reuses its leaf buffers instead of
// allocating one per block. Store.Writes counts what the
// commits write (the pages each allocates plus its meta page), since Open
// and, through "written", over the file's life: what the store costs the
// card.
//
// Writes stay in bbolt too. Segment files written straight from the leaf
// buffers were weighed for stored adds (the goal: 0.9x the disk's
// fdatasync rate) and left out: with the writer dropping every put a
// 256 MiB add ran 750-843 MiB/s against 490-580 with this store, while
// the disk of the machine measured took durable writes at 2.5 GB/s
// (O_DIRECT), more than twice the only-hash add that stores nothing; on a
// board, SHA-256 and the SD card bound an add well below either
// (docs/performance.md, "Stored add against the disk's fdatasync rate").
//
// # Reads
//
// Values of 8 KiB or more (leaves and other large blocks) are copied out of
// the file with pread (readfile.go), not read through bbolt's memory map:
// View and Get look the value up in a short read transaction, take its
// offset in the file (its address minus the map's base, DB.Info().Data) and
// pread it into a pooled buffer (Get: into the block's own slice) while the
// transaction keeps those pages from being freed and reused. The descriptor
// has POSIX_FADV_SEQUENTIAL, since the blocks of a file are stored in
// order. Smaller values (index entries, inner nodes, records) come from the
// map.
//
// Decided by measuring cat of a 1 GiB file inside a 256 MiB memory cgroup
// (make bench-board, pi-zero-2w profile, 2 shared amd64 cores; single runs
// at load average 1.6-3.3): reading from the map gave 68-70 MiB/s with
// 235,817 major faults, one per 4 KiB page (under cgroup pressure the
// kernel keeps evicting mapped pages and, after enough mmap misses, stops
// reading ahead for the map); MADV_WILLNEED on each value's range gave
// 243-293 MiB/s (about 4,100 faults); pread gave 380-450 MiB/s (under 3,100
// faults, none of them for block bytes), against Kubo 0.42's 326-344 MiB/s
// in the same cgroup. An explicit WILLNEED of the next 8 leaves on top of
// pread measured +3%, inside the noise, and was left out. Without memory
// pressure pread costs one copy from the page cache (see docs/performance.md
// for the unlimited figures). Block bytes stay in bbolt: the on-disk format,
// durability, GC and write amplification are unchanged, so append-only
// segment files were not needed.
//
// # Caveats
//
// On 32-bit ARM bbolt's memory map cannot pass about 2 GiB, which caps the
// store; board profiles set StorageMax below that.
//
// # Files
//
//   - store.go: opening and closing the bbolt file, schema version, counters.
//   - writer.go: the single writer goroutine that batches puts into few
//     transactions.
//   - blockstore.go: the boxo blockstore.Blockstore view of the "blocks"
//     bucket.
//   - datastore.go: the go-datastore view of the "data" bucket.
//   - readfile.go: copying large block values out of the store file with
//     pread.
//   - fadvise_linux.go, fadvise_other.go: the sequential read-ahead hint for
//     the store file (Linux only).
//   - check.go: Check, which walks the invariants above.
//   - errors.go: the sentinel errors.
package storage
