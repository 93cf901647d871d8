// Package faults checks what the store does when its disk fails: a file
// system that fills up, goes read-only, returns I/O errors, or flips a
// bit in a stored block. Each test makes its own small file system on a
// loop device (or a FUSE shim over one that injects faults), opens a node
// and its RPC server on 127.0.0.1 on it, and tears both down, also when
// it fails.
//
// The tests carry the build tag "faults" and run with `make faults`
// (root, loop devices, mkfs.ext4; docs/security.md, "Disk"); plain
// `go test ./...` does not build them.
//
// # Files
//
//   - fs_test.go: the loop-mounted ext4 file system, filling it up and
//     turning it read-only as the kernel does after an error.
//   - rpc_test.go: the RPC calls the tests make (add, cat, verify, gc).
//   - disk_test.go: disk full during an add, a commit and a GC.
//   - readonly_test.go: the file system turns read-only under the node;
//     startModules, the status app and the http_ipfs gateway.
//   - bitflip_test.go: a bit flips in a stored block; no reader serves it.
//   - fuse_test.go: a FUSE passthrough (go-fuse, test code only) that
//     fails reads of chosen byte ranges with EIO.
//   - ioerr_test.go: reads of a stored block fail with EIO; cat, GC and
//     bitswap answer and go on.
package faults
