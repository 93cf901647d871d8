// store.go: opening and closing the bbolt file, schema version, counters.

package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the on-disk schema this package reads and writes.
// Version 1 (block bytes inside the bbolt file) is migrated at Open
// (migrate.go); versions 2 (one index bucket) and 3 (index entries
// without a checksum) are upgraded in place by a writable Open and read as
// they are by a read-only one.
const SchemaVersion = 4

// DefaultMaxIndexBytes32 is Options.MaxIndexBytes on 32-bit builds: 768
// MiB of index pages, about 10 million blocks (77 bytes of index file a
// block at 10^6 blocks), with the file's growth steps under the 1 GiB
// map.
const DefaultMaxIndexBytes32 = 768 << 20

// FileName is the name of the store file inside a repo.
const FileName = "blocks.db"

var (
	bucketMeta   = []byte("meta")
	bucketBlocks = []byte("blocks")
	bucketIndex  = []byte("index")
	bucketData   = []byte("data")
	bucketSegs   = []byte("segs")

	keyVersion    = []byte("version")
	keyBlocksN    = []byte("blocks.n")
	keyBlocksSize = []byte("blocks.size")
	keyWritten    = []byte("written")
	keySegActive  = []byte("seg.active")
	keySegNext    = []byte("seg.next")
)

// Options tune a Store. The zero value (or nil) means the defaults below.
type Options struct {
	// MaxBatchBytes caps the bytes of puts committed in one transaction.
	// Default 1 MiB. A commit holds its batch twice on the heap (the
	// queued values and the pages bbolt builds from them), so the batch
	// size is most of an add's memory; a larger batch costs fewer fsyncs.
	MaxBatchBytes int
	// MaxPendingBytes caps the bytes queued by PutAsync and not yet
	// committed (the batch being committed included); PutAsync blocks
	// past it. Default 2 MiB: one batch committing, one filling.
	MaxPendingBytes int
	// MaxIndexBytes caps the bytes of the index file's pages in use:
	// past it block puts fail with ErrIndexFull (deletes and records
	// still work). bbolt maps the whole index file, and a 32-bit address
	// space fits a map of 1 GiB beside the Go heap, not the 2 GiB step
	// that follows, so the default is DefaultMaxIndexBytes32 on 32-bit
	// builds and none on 64-bit ones; negative: none.
	MaxIndexBytes int64
	// InitialMmapSize is passed to bbolt. Default 1 GiB on 64-bit systems
	// (address space only), 0 on 32-bit ones.
	InitialMmapSize int
	// Timeout is how long Open waits for the file lock. Default 100ms.
	Timeout time.Duration
	// ReadOnly opens the file without the writer (for Check and verify).
	ReadOnly bool
	// SegmentBytes is the size past which new block bytes go to a new
	// segment file. Default DefaultSegmentBytes (64 MiB).
	SegmentBytes int64
	// IndexLagBytes is how many bytes of block puts may be acknowledged
	// once durable in the active segment before the index holds them
	// (lag.go): puts then cost one fdatasync, and the index is written
	// for many at a time. Default DefaultIndexLagBytes; negative: none
	// (every put commits the index).
	IndexLagBytes int64
	// IndexLagBlocks bounds the same lag in blocks. Default
	// DefaultIndexLagBlocks. Each index commit puts its entries, in key
	// order, into the open run of the index (runs.go: a small tree whose
	// leaves the entries share) and takes a merge step of about eight
	// entries per entry, so this bounds a commit's pages on the heap and
	// the entries held in memory until then.
	IndexLagBlocks int
	// MergeDone, when set, is called on the writer goroutine after the
	// commit that completes a merge of index runs (runs.go), which
	// churned a few MiB of heap since it began: the daemon hands the
	// heap's free pages back to the OS there.
	MergeDone func()
	// ReserveBytes is the space kept aside in ReserveName, beside the
	// store file, that a commit of deletes takes when the disk is full
	// (reserve.go). Default DefaultReserveBytes; negative: none.
	ReserveBytes int64
	// Log, when set, reports long steps (a migration) as they go.
	Log func(format string, args ...any)
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxBatchBytes <= 0 {
		r.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if r.MaxPendingBytes <= 0 {
		r.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if r.MaxIndexBytes == 0 && bits.UintSize == 32 {
		r.MaxIndexBytes = DefaultMaxIndexBytes32
	}
	if r.InitialMmapSize == 0 && bits.UintSize == 64 {
		r.InitialMmapSize = 1 << 30
	}
	if r.InitialMmapSize < 0 {
		r.InitialMmapSize = 0
	}
	if r.Timeout <= 0 {
		r.Timeout = 100 * time.Millisecond
	}
	if r.SegmentBytes <= 0 {
		r.SegmentBytes = DefaultSegmentBytes
	}
	if r.SegmentBytes > 1<<31 {
		r.SegmentBytes = 1 << 31 // offsets are 32 bits
	}
	if r.IndexLagBytes == 0 {
		r.IndexLagBytes = DefaultIndexLagBytes
	}
	if r.IndexLagBlocks <= 0 {
		r.IndexLagBlocks = DefaultIndexLagBlocks
	}
	if r.ReserveBytes == 0 {
		r.ReserveBytes = DefaultReserveBytes
	}
	if r.Log == nil {
		r.Log = func(string, ...any) {}
	}
	return r
}

// The default write queue: 1 MiB batches, 2 MiB queued (Options).
const (
	DefaultMaxBatchBytes   = 1 << 20
	DefaultMaxPendingBytes = 2 << 20
)

// GrowStep is the least the store file grows by (when a batch is larger,
// it grows by the batch, up to 16 MiB): the file stays within the pages
// in use, the free pages and one step.
const GrowStep = 4 << 20

// Store is one open bbolt file. It is safe for concurrent use.
type Store struct {
	db   *bolt.DB
	opts Options
	path string

	w    *writer
	sf   *segFiles
	bufs sync.Pool // *[]byte, View's read buffers

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the store at path: the index file
// there and its segment directory (SegmentDir). A store of schema 1 is
// migrated first (migrate.go), resuming a migration a crash interrupted.
func Open(path string, opts *Options) (s *Store, err error) {
	o := opts.withDefaults()
	if !o.ReadOnly {
		if _, err := os.Stat(path + v1Suffix); err == nil {
			return migrateV1(path, o)
		}
	}
	s, err = open(path, o, false)
	if errors.Is(err, errSchemaV1) {
		if o.ReadOnly {
			return nil, fmt.Errorf("%w: %s is schema 1; opening it for writing migrates it", ErrNeedsMigration, path)
		}
		return migrateV1(path, o)
	}
	return s, err
}

var errSchemaV1 = errors.New("storage: schema 1")

// Schema reads the schema version of the store at path without opening
// it for writing (nothing is migrated): 0 when there is no store yet, 1
// while a migration from schema 1 is unfinished.
func Schema(path string) (uint32, error) {
	if _, err := os.Stat(path + v1Suffix); err == nil {
		return 1, nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return 0, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	defer db.Close()
	var v uint32
	err = db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil || len(m.Get(keyVersion)) != 4 {
			return fmt.Errorf("%w: %s: no version record", ErrCorrupt, path)
		}
		v = getU32(m.Get(keyVersion))
		return nil
	})
	return v, err
}

func open(path string, o Options, migrating bool) (s *Store, err error) {
	defer func() {
		// A damaged file can make bbolt panic while reading its pages;
		// report that as an error rather than crashing the daemon.
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, r)
		}
	}()
	if fi, statErr := os.Stat(path); statErr == nil && fi.Size() > 0 && fi.Size() < 4096*2 {
		return nil, fmt.Errorf("%w: %s: file is %d bytes, shorter than two meta pages", ErrCorrupt, path, fi.Size())
	}
	bo := &bolt.Options{
		Timeout:         o.Timeout,
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: o.InitialMmapSize,
		ReadOnly:        o.ReadOnly,
	}
	db, err := bolt.Open(path, 0o600, bo)
	if err != nil {
		switch {
		case errors.Is(err, bolterrors.ErrTimeout):
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum),
			errors.Is(err, bolterrors.ErrVersionMismatch):
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
		}
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	if !o.ReadOnly {
		// Past bbolt's initial size the file grows by AllocSize (16 MiB
		// by default) beyond what a commit needs; the index file grows
		// by GrowStep.
		db.AllocSize = GrowStep
	}
	s = &Store{db: db, opts: o, path: path, sf: newSegFiles(SegmentDir(path))}
	if err := s.initSchema(migrating); err != nil {
		db.Close()
		return nil, err
	}
	if o.ReadOnly {
		return s, nil
	}
	if err := os.MkdirAll(s.sf.dir, 0o700); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	var active uint32
	var end, segBytes uint64
	keep := map[uint32]bool{}
	err = db.View(func(tx *bolt.Tx) error {
		active = getU32(tx.Bucket(bucketMeta).Get(keySegActive))
		return tx.Bucket(bucketSegs).ForEach(func(k, v []byte) error {
			si, ok := decodeSegInfo(v)
			if len(k) != 4 || !ok {
				return fmt.Errorf("%w: %s: bad segment entry %x", ErrCorrupt, path, k)
			}
			id := binary.BigEndian.Uint32(k)
			keep[id] = true
			segBytes += si.end
			if id == active {
				end = si.end
			}
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	// Segment files no entry names are a commit that never happened or
	// a removal a crash cut short.
	ids, err := s.sf.list()
	if err != nil {
		db.Close()
		return nil, err
	}
	var orphans []uint32
	for _, id := range ids {
		if !keep[id] && id != active {
			orphans = append(orphans, id)
		}
	}
	if err := s.sf.remove(orphans); err != nil {
		db.Close()
		return nil, err
	}
	// Blocks acknowledged and not yet indexed when the last run ended
	// (a crash) are indexed now.
	if fi, err := os.Stat(s.sf.name(active)); err == nil && fi.Size() > int64(end) {
		e, err := replay(db, s.sf, active, int64(end), fi.Size())
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("storage: open %s: indexing the blocks past the last commit: %w", path, err)
		}
		segBytes += uint64(e) - end
		end = uint64(e)
	}
	app, err := openAppender(s.sf, active, int64(end), o.SegmentBytes)
	if err != nil {
		db.Close()
		return nil, err
	}
	if !keep[active] {
		app.close()
		db.Close()
		return nil, fmt.Errorf("%w: %s: active segment %d has no entry", ErrCorrupt, path, active)
	}
	s.w = newWriter(db, newReserve(path, o.ReserveBytes), s.sf, app, o)
	s.w.segBytes.Store(segBytes)
	st, err := s.Stat()
	if err != nil {
		s.Close()
		return nil, err
	}
	if err := s.db.View(func(tx *bolt.Tx) error {
		s.w.writtenTotal.Store(getU64(tx.Bucket(bucketMeta).Get(keyWritten)))
		return nil
	}); err != nil {
		s.Close()
		return nil, err
	}
	s.w.persisted = s.w.writtenTotal.Load()
	s.w.blockBytes.Store(st.BlockBytes)
	s.w.usedBytes.Store(uint64(st.IndexBytes-st.IndexFreeBytes) + s.w.segBytes.Load())
	s.w.indexUsed.Store(st.IndexBytes - st.IndexFreeBytes)
	return s, nil
}

func (s *Store) initSchema(migrating bool) error {
	check := func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil {
			return fmt.Errorf("%w: %s: no meta bucket", ErrCorrupt, s.path)
		}
		v := m.Get(keyVersion)
		if len(v) != 4 {
			return fmt.Errorf("%w: %s: bad version record", ErrCorrupt, s.path)
		}
		got := binary.BigEndian.Uint32(v)
		if got == 1 {
			return errSchemaV1
		}
		if got == 2 && tx.Writable() {
			if err := upgradeV2(tx); err != nil {
				return err
			}
			got = SchemaVersion
		}
		if got == 3 && tx.Writable() {
			// Schema 4 adds a checksum to the entries written from now
			// on; the ones already there stay as they are (readers check
			// those against the block's hash).
			if err := m.Put(keyVersion, u32(SchemaVersion)); err != nil {
				return err
			}
			got = SchemaVersion
		}
		if got != SchemaVersion && got != 2 && got != 3 {
			return fmt.Errorf("%w: file has %d, this build reads %d", ErrSchemaVersion, got, SchemaVersion)
		}
		if tx.Bucket(bucketSegs) == nil || tx.Bucket(bucketData) == nil {
			return fmt.Errorf("%w: %s: missing bucket", ErrCorrupt, s.path)
		}
		if _, err := loadIndex(tx); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, s.path, err)
		}
		return nil
	}
	// A schema-2 file (one index bucket) is upgraded in place by a
	// writable open; a read-only open reads it as it is.
	var version uint32
	if err := s.db.View(func(tx *bolt.Tx) error {
		if m := tx.Bucket(bucketMeta); m != nil {
			version = getU32(m.Get(keyVersion))
		}
		return nil
	}); err != nil {
		return err
	}
	if (version == 2 || version == 3) && !s.opts.ReadOnly {
		return s.db.Update(check)
	}
	// A store that exists is checked without a write transaction (the
	// first one loads bbolt's freelist).
	var exists bool
	if err := s.db.View(func(tx *bolt.Tx) error { exists = tx.Bucket(bucketMeta) != nil; return nil }); err != nil {
		return err
	}
	if exists || s.opts.ReadOnly {
		return s.db.View(check)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil {
			m, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			if err := m.Put(keyVersion, u32(SchemaVersion)); err != nil {
				return err
			}
			if err := m.Put(keyBlocksN, u64(0)); err != nil {
				return err
			}
			if err := m.Put(keyBlocksSize, u64(0)); err != nil {
				return err
			}
			// Segment 0 is the first active one.
			if err := m.Put(keySegNext, u32(1)); err != nil {
				return err
			}
			if err := m.Put(keySegActive, u32(0)); err != nil {
				return err
			}
			if migrating {
				if err := m.Put(keyMigrating, u32(1)); err != nil {
					return err
				}
			}
			if err := m.Put(keyRunNext, u32(0)); err != nil {
				return err
			}
			for _, b := range [][]byte{bucketSegs, bucketRuns, bucketRunInfo, bucketBloom, bucketData} {
				if _, err := tx.CreateBucket(b); err != nil {
					return err
				}
			}
			if err := tx.Bucket(bucketSegs).Put(segKey(0), segInfo{end: uint64(segHeader)}.encode()); err != nil {
				return err
			}
		}
		return check(tx)
	})
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close flushes queued writes, stops the writer and closes the file.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.w != nil {
			s.w.close()
		}
		s.closeErr = s.db.Close()
		s.sf.closeAll()
	})
	return s.closeErr
}

// Stat is what the counters in "meta" say, and what the files take.
type Stat struct {
	NumBlocks  uint64 // blocks in the index
	BlockBytes uint64 // sum of stored block sizes
	// FileBytes is the index file up to its last page in use plus the
	// segment files up to their last committed record.
	FileBytes int64
	// FreeBytes is what of FileBytes holds nothing: free pages of the
	// index file and records of removed blocks in the segments (what
	// Reclaim can give back).
	FreeBytes int64
	// IndexBytes and IndexFreeBytes are the index file's share of the
	// two (what Compact rewrites and gives back).
	IndexBytes     int64
	IndexFreeBytes int64
	Segments       int // segment files
}

// UsedBytes is what the store's files take less what in them is free:
// block bytes plus the index and the records' headers.
func (st Stat) UsedBytes() int64 { return st.FileBytes - st.FreeBytes }

// Stat reads the block counters and the files' sizes.
func (s *Store) Stat() (Stat, error) {
	var st Stat
	err := s.db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		st.NumBlocks = getU64(m.Get(keyBlocksN))
		st.BlockBytes = getU64(m.Get(keyBlocksSize))
		st.IndexBytes = tx.Size()
		if s.w != nil {
			n, bytes, rec := s.w.mem.counts(tx.ID())
			st.NumBlocks += n
			st.BlockBytes += bytes
			st.FileBytes += int64(rec)
		}
		if b := tx.Bucket(bucketSegs); b != nil {
			return b.ForEach(func(_, v []byte) error {
				si, _ := decodeSegInfo(v)
				st.Segments++
				st.FileBytes += int64(si.end)
				st.FreeBytes += int64(si.dead())
				return nil
			})
		}
		return nil
	})
	st.IndexFreeBytes = freeBytes(s.db)
	st.FileBytes += st.IndexBytes
	st.FreeBytes += st.IndexFreeBytes
	return st, err
}

func freeBytes(db *bolt.DB) int64 {
	bs := db.Stats()
	return int64(bs.FreePageN+bs.PendingPageN) * int64(db.Info().PageSize)
}

// Writes are the bytes the store has written to its file (pages of its
// commits, each with its meta page): the flash wear it causes.
type Writes struct {
	SinceOpen uint64 // since Open
	Total     uint64 // over the file's life ("meta" records it at each commit and at Close)
}

// Writes returns the bytes written to the file; zero for a read-only store.
func (s *Store) Writes() Writes {
	if s.w == nil {
		return Writes{}
	}
	return Writes{SinceOpen: s.w.written.Load(), Total: s.w.writtenTotal.Load()}
}

// UsedBytes is Stat().UsedBytes() as of the last commit, without a
// transaction, counting removed blocks' records in the segments as used
// until Reclaim gives them back: what the store's files take on disk.
func (s *Store) UsedBytes() uint64 {
	if s.w == nil {
		st, _ := s.Stat()
		return uint64(st.UsedBytes())
	}
	return s.w.usedBytes.Load()
}

// BlockBytes is the sum of stored block sizes, without a transaction.
func (s *Store) BlockBytes() uint64 {
	if s.w == nil {
		st, _ := s.Stat()
		return st.BlockBytes
	}
	return s.w.blockBytes.Load()
}

// PendingBytes is the size of the puts queued by PutAsync and not yet
// committed.
func (s *Store) PendingBytes() uint64 {
	if s.w == nil {
		return 0
	}
	s.w.pending.mu.Lock()
	defer s.w.pending.mu.Unlock()
	return uint64(s.w.pending.used)
}

// DB exposes the bbolt handle to tests and to Check; other packages use the
// Blockstore and Datastore views.
func (s *Store) DB() *bolt.DB { return s.db }

func u32(v uint32) []byte { b := make([]byte, 4); binary.BigEndian.PutUint32(b, v); return b }
func u64(v uint64) []byte { b := make([]byte, 8); binary.BigEndian.PutUint64(b, v); return b }

func getU32(b []byte) uint32 {
	if len(b) != 4 {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// CompactThreshold: Open callers may compact when free pages exceed this
// fraction of the file and CompactMinFree bytes (see ShouldCompact).
const (
	CompactThreshold = 0.5
	CompactMinFree   = 4 << 20
)

// ShouldCompact reports whether the index file is worth rewriting: its
// free pages pass half of it and CompactMinFree, or it is more than
// twice what its entries need (indexEntryBytes each) plus CompactMinFree
// (deleting most blocks leaves leaf pages mostly empty, which bbolt
// frees only below a quarter full). Either way the rewrite (the live
// index) is at most what it gives back; block bytes are never rewritten.
func (st Stat) ShouldCompact() bool {
	if st.IndexFreeBytes > CompactMinFree && float64(st.IndexFreeBytes) > CompactThreshold*float64(st.IndexBytes) {
		return true
	}
	need := int64(st.NumBlocks) * indexEntryBytes
	return st.IndexBytes > 2*need+CompactMinFree
}

// indexEntryBytes is about what one block takes in a compacted index: a
// 34-byte multihash, its 12-byte location, bbolt's 16-byte leaf element,
// and the pages' slack.
const indexEntryBytes = 70

// Compact rewrites the index file at path without its free pages: into a
// temporary file beside it, fsynced, then renamed over the original. The
// store must not be open. A crash leaves either the old file or the new.
// Segment files are untouched (Reclaim gives their free space back).
func Compact(path string) (before, after int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	before = fi.Size()
	src, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 100 * time.Millisecond, ReadOnly: true})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return 0, 0, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return 0, 0, err
	}
	defer src.Close()
	tmp := path + ".compact"
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return 0, 0, err
	}
	if err := bolt.Compact(dst, src, 8<<20); err != nil {
		dst.Close()
		os.Remove(tmp)
		return 0, 0, fmt.Errorf("storage: compact: %w", err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		os.Remove(tmp)
		return 0, 0, err
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return 0, 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, 0, err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	fi, err = os.Stat(path)
	if err != nil {
		return before, 0, err
	}
	return before, fi.Size(), nil
}

// DiskBytes is what the store at path takes on disk: the index file and
// the segment files (0 when there is no store there).
func DiskBytes(path string) (int64, error) {
	var total int64
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	total += allocatedBytes(fi) // the index file may have holes (giveback.go)
	ents, err := os.ReadDir(SegmentDir(path))
	if errors.Is(err, os.ErrNotExist) {
		return total, nil
	}
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			total += info.Size()
		}
	}
	return total, nil
}

// flush indexes the blocks acknowledged and not yet in the index (lag.go),
// so that a walk of the index sees every block stored before the call.
func (s *Store) flush() error {
	if s.w == nil {
		return nil
	}
	s.w.mem.mu.RLock()
	n := s.w.mem.n
	s.w.mem.mu.RUnlock()
	if n == 0 {
		return nil
	}
	return s.w.flush()
}

// Submitted counts the writes queued since Open (each put, batch of puts
// or delete handed to the writer): a caller that writes in the
// background compares it before and after its own write to see whether
// others were writing meanwhile.
func (s *Store) Submitted() uint64 {
	if s.w == nil {
		return 0
	}
	return s.w.submitted.Load()
}
