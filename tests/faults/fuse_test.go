//go:build faults

// fuse_test.go: a FUSE passthrough over a directory that fails reads of
// chosen byte ranges of chosen files with EIO, as a failing card does.

package faults

import (
	"context"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// faultFS is the FUSE mount at Dir over a directory of the test's.
type faultFS struct {
	Dir string
	mu  sync.Mutex
	bad map[string][2]int64 // file base name => [off, end) that fails
}

// mountFaulty mounts a passthrough of a fresh directory; unmounted at
// cleanup (after the node, registered later, closed).
func mountFaulty(t testing.TB) *faultFS {
	t.Helper()
	base := t.TempDir()
	back, mnt := filepath.Join(base, "back"), filepath.Join(base, "mnt")
	for _, d := range []string{back, mnt} {
		if err := syscall.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ffs := &faultFS{Dir: mnt, bad: map[string][2]int64{}}
	var st syscall.Stat_t
	if err := syscall.Stat(back, &st); err != nil {
		t.Fatal(err)
	}
	root := &fs.LoopbackRoot{Path: back, Dev: uint64(st.Dev)}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &faultNode{LoopbackNode: fs.LoopbackNode{RootData: r}, ffs: ffs}
	}
	root.RootNode = root.NewNode(root, nil, "", &st)
	srv, err := fs.Mount(mnt, root.RootNode, &fs.Options{MountOptions: fuse.MountOptions{DirectMount: true, FsName: "cairn-faults"}})
	if err != nil {
		t.Fatalf("FUSE mount: %v", err)
	}
	t.Cleanup(func() { srv.Unmount() })
	return ffs
}

// failReads makes reads of [off, off+n) of the file named name fail with
// EIO (n 0: heal it).
func (f *faultFS) failReads(name string, off int64, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n == 0 {
		delete(f.bad, name)
		return
	}
	f.bad[name] = [2]int64{off, off + int64(n)}
}

func (f *faultFS) fails(name string, off int64, n int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.bad[name]
	return ok && off < r[1] && off+int64(n) > r[0]
}

type faultNode struct {
	fs.LoopbackNode
	ffs *faultFS
}

// Open hands out files whose reads skip the page cache (direct I/O), so
// that every read meets the faults. Segment files only: bbolt maps its
// file, which direct I/O would refuse.
func (n *faultNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 || filepath.Ext(n.Path(nil)) != ".seg" {
		return fh, fl, errno
	}
	return &faultFile{LoopbackFile: fh.(*fs.LoopbackFile), name: filepath.Base(n.Path(nil)), ffs: n.ffs}, fl | fuse.FOPEN_DIRECT_IO, 0
}

// Create is Open's twin for files the store creates.
func (n *faultNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 || filepath.Ext(name) != ".seg" {
		return in, fh, fl, errno
	}
	return in, &faultFile{LoopbackFile: fh.(*fs.LoopbackFile), name: name, ffs: n.ffs}, fl | fuse.FOPEN_DIRECT_IO, 0
}

type faultFile struct {
	*fs.LoopbackFile
	name string
	ffs  *faultFS
}

func (f *faultFile) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f.ffs.fails(f.name, off, len(buf)) {
		return nil, syscall.EIO
	}
	return f.LoopbackFile.Read(ctx, buf, off)
}

// PassthroughFd refuses the kernel's passthrough, which would bypass Read.
func (f *faultFile) PassthroughFd() (int, bool) { return -1, false }
