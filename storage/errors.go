// errors.go: the store's sentinel errors. A missing block is boxo's
// ipld.ErrNotFound and a missing datastore key go-datastore's
// ds.ErrNotFound, the errors boxo and go-datastore callers test for.

package storage

import "errors"

var (
	// ErrSchemaVersion is returned by Open when the file was written by a
	// schema this code does not read.
	ErrSchemaVersion = errors.New("storage: unsupported schema version")

	// ErrNeedsMigration is returned by a read-only Open of a store of an
	// earlier schema, which only an Open for writing migrates.
	ErrNeedsMigration = errors.New("storage: store needs migrating")

	// ErrClosed is returned by writes after Close.
	ErrClosed = errors.New("storage: store is closed")

	// ErrLocked is returned by Open when another process holds the store.
	ErrLocked = errors.New("storage: store is locked by another process")

	// ErrIndexFull is returned by block puts once the index file's pages
	// in use pass Options.MaxIndexBytes (32-bit builds).
	ErrIndexFull = errors.New("storage: block index full")

	// ErrBlockDamaged is returned by block reads whose stored bytes no
	// longer hash to the block's multihash (a bit flipped on the card):
	// such bytes are never handed out.
	ErrBlockDamaged = errors.New("storage: stored block is damaged")

	// ErrReadBlock wraps the error of a block read the file system
	// refused (an I/O error on the card); the message names the block.
	ErrReadBlock = errors.New("storage: reading block")

	// ErrCorrupt wraps problems found when opening a damaged file.
	ErrCorrupt = errors.New("storage: store file is damaged")
)
