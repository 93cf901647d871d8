// errors.go: the node's sentinel errors. Callers wrap them with context
// (always %w), so errors.Is works through every layer up to the commands.
// Texts that Kubo clients match on are Kubo's, word for word.

package node

import (
	"errors"

	"cairn/node/p2p"

	"github.com/ipfs/boxo/filestore"
	ipld "github.com/ipfs/go-ipld-format"
)

// Repo and config.
var (
	// ErrNoRepo means the directory holds no initialised repo.
	ErrNoRepo = errors.New("no cairn repo found")

	// ErrRepoLocked means another process (normally a running daemon)
	// holds the repo.
	ErrRepoLocked = errors.New("someone else has the lock")

	// ErrNoKey is returned by GetKey for a missing key.
	ErrNoKey = errors.New("key not found")
)

// Storage and garbage collection.
var (
	// ErrStorageFull is wrapped by writes refused by the StorageMax cap.
	ErrStorageFull = errors.New("storage limit reached")

	// ErrGCRunning is returned when a collection is already under way.
	ErrGCRunning = errors.New("garbage collection is already running")

	// ErrNotPinned is Kubo's error for removing what is not pinned.
	ErrNotPinned = errors.New("not pinned or pinned indirectly")
)

// Network.
var (
	// ErrOffline is returned by network operations on an offline node:
	// Kubo's commands' text (ErrNotOnline), word for word, 'ipfs daemon'
	// included, since scripts match it.
	ErrOffline = p2p.ErrOffline

	// ErrOfflineAction is Kubo's other offline text, that of its core
	// API (coreiface.ErrOffline): the swarm commands answer it.
	ErrOfflineAction = errors.New("this action must be run in online mode, try running 'ipfs daemon' first")
)

// Reading files and paths.
var (
	// ErrIsDir is Kubo's error for reading a directory as a file.
	ErrIsDir = errors.New("this dag node is a directory")

	// ErrNotFile is returned for nodes that are neither files nor
	// directories.
	ErrNotFile = errors.New("not unixfs file data")

	// ErrNoLink is the error for a path segment that names no entry.
	ErrNoLink = errors.New("no link named")
)

// Importing: add, block/dag put, tar, filestore.
var (
	// ErrDirEntryExists is Kubo's error for two parts with one name.
	ErrDirEntryExists = errors.New("directory already has entry by that name")

	// ErrBigBlock is Kubo's error for blocks over MaxBlockSize.
	ErrBigBlock = errors.New("produced block is over 2MiB: big blocks can't be exchanged with other peers. consider using UnixFS for automatic chunking of bigger files, or pass --allow-big-block to override")

	// ErrPathOutsideRoot is Kubo's error for entry names that would leave
	// the archive's top entry.
	ErrPathOutsideRoot = errors.New("relative UnixFS paths outside the root are not allowed, use CAR instead")

	// ErrNotTarchive is Kubo's error for tar cat of another DAG.
	ErrNotTarchive = errors.New("not an IPFS tarchive")

	// errTarTruncated reports a tar that ends inside an entry's content.
	errTarTruncated = errors.New("tar: archive ends inside an entry (truncated)")

	// ErrFilestoreNotEnabled is boxo's (and Kubo's) error for filestore
	// commands while Experimental.FilestoreEnabled is off.
	ErrFilestoreNotEnabled = filestore.ErrFilestoreNotEnabled

	// errNoCopyDisabled is Kubo's error for add --nocopy with both the
	// filestore and the urlstore off.
	errNoCopyDisabled = errors.New("either the filestore or the urlstore must be enabled to use nocopy, see: https://github.com/ipfs/kubo/blob/master/docs/experimental-features.md#ipfs-filestore")
)

// IsNotFound reports a missing block.
func IsNotFound(err error) bool { return ipld.IsNotFound(err) }
