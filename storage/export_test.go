package storage

// RandBlock is a raw block of n random bytes.
var RandBlock = testBlock

// SetMigrateChunk sets the bytes a migration copies per commit.
func SetMigrateChunk(n int) { migrateChunk = n }
