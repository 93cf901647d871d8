package storage

import "errors"

var (
	// ErrNotFound is returned when a block or key is not in the store. It is
	// the error boxo and go-datastore callers test for (see blockstore.go).
	ErrNotFound = errors.New("storage: not found")

	// ErrSchemaVersion is returned by Open when the file was written by a
	// schema this code does not read.
	ErrSchemaVersion = errors.New("storage: unsupported schema version")

	// ErrClosed is returned by writes after Close.
	ErrClosed = errors.New("storage: store is closed")

	// ErrLocked is returned by Open when another process holds the store.
	ErrLocked = errors.New("storage: store is locked by another process")

	// ErrCorrupt wraps problems found when opening a damaged file.
	ErrCorrupt = errors.New("storage: store file is damaged")
)
