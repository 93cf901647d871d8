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
// A crash loses at most the batch that was being committed, never a
// committed one, and never leaves half a block: bbolt commits are atomic.
//
// # Flash
//
// NoFreelistSync keeps commits to the pages that changed plus the meta page,
// and bbolt reuses freed pages instead of growing the file. The file grows
// in steps of MaxBatchBytes (at most bbolt's 16 MiB), so it stays within
// Stat.UsedBytes plus free pages plus one batch: a cap on UsedBytes and
// PendingBytes (node's StorageMax) bounds the file on disk. The writer
// coalesces concurrent puts into one transaction (up to MaxBatchBytes), so
// an add of many blocks costs few fsyncs.
//
// # Caveats
//
// On 32-bit ARM bbolt's memory map cannot pass about 2 GiB, which caps the
// store; board profiles set StorageMax below that.
package storage
