// Package mount serves read-only FUSE mounts of /ipfs and /ipns, as Kubo
// 0.42's `ipfs mount` and `ipfs daemon --mount` do (Mounts.IPFS,
// Mounts.IPNS, Mounts.FuseAllowOther).
//
// Start with fs.go: FS is the file system's logic over the node (what a
// name under /ipfs is, a directory's entries, a file's bytes, where an
// /ipns name points), with no FUSE in it, so that it is tested anywhere.
// mount_linux.go puts it behind FUSE with github.com/hanwen/go-fuse/v2,
// the pure-Go library Kubo 0.42 uses, and checks what a mount needs first
// (/dev/fuse, fusermount unless root, a free directory), so that each
// missing piece gets an error saying what to do. Other systems get
// ErrUnsupported.
//
// # Behaviour
//
// /ipfs/<cid> is the UnixFS DAG of the CID: directories (plain or HAMT),
// files, symlinks; the root itself lists nothing (it is virtual, as in
// Kubo). /ipns/<name> is a symlink into the /ipfs mount, resolved through
// the Resolver given to Start (the daemon gives the node's name resolver);
// without one a lookup fails with ENOTSUP and the reason is logged.
// Everything is read-only (EROFS); reads fetch missing blocks through the
// node's read path, as cat does.
//
// # Errors
//
// Mount errors name the mount point and the fix. FUSE calls answer errno:
// ENOENT for a name that is not there (or not a CID), EIO for a block
// that cannot be read.
//
// # Files
//
//   - fs.go: the file system's logic, without FUSE.
//   - mount_linux.go: the file system behind FUSE, and the checks a mount
//     needs first.
//   - mount_other.go: ErrUnsupported: FUSE mounts are built for Linux only.
package mount
