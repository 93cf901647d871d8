// mount_linux.go: the file system behind FUSE (github.com/hanwen/go-fuse/v2),
// and the checks a mount needs first.

package mount

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"cairn/node"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	logging "github.com/ipfs/go-log/v2"
)

var log = logging.Logger("fuse")

// Options say where to mount and how.
type Options struct {
	IPFS, IPNS string // mount points (Mounts.IPFS, Mounts.IPNS); IPNS "" mounts /ipfs only
	AllowOther bool   // Mounts.FuseAllowOther: other users may read the mounts
	Resolver   Resolver
}

// Mounts are the active mounts of a Start.
type Mounts struct {
	servers []*fuse.Server
	dirs    []string
	once    sync.Once
}

// devFuse is the FUSE device and geteuid the user (variables for tests).
var (
	devFuse = "/dev/fuse"
	geteuid = os.Geteuid
)

// Check reports what would stop a mount at dir (named by the config key
// it comes from, e.g. Mounts.IPFS), with what to do about it. The texts
// for a path that is empty, missing or not a directory are Kubo 0.42's.
func Check(key, dir string) error {
	if err := checkPath(key, dir); err != nil {
		return err
	}
	if _, err := os.Stat(devFuse); err != nil {
		return fmt.Errorf("cannot mount %s: %s is missing, FUSE is not available here (load the module: sudo modprobe fuse; in a container, pass the device: --device /dev/fuse)", dir, devFuse)
	}
	if geteuid() != 0 && fusermount() == "" {
		return fmt.Errorf("cannot mount %s: fusermount3 or fusermount not found in PATH, which FUSE needs to mount as a user (install it: sudo apt-get install fuse3)", dir)
	}
	if busy, err := isMountPoint(dir); err != nil {
		return fmt.Errorf("cannot mount at %s: %w", dir, err)
	} else if busy {
		return fmt.Errorf("cannot mount at %s: mount point is busy, something is mounted there already (unmount it: fusermount -u %s)", dir, dir)
	}
	return nil
}

func checkPath(key, dir string) error {
	if dir == "" {
		return fmt.Errorf("%s path cannot be empty", key)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("%s path (%q) does not exist: %w", key, dir, err)
		}
		return fmt.Errorf("error while inspecting %s path (%q): %w", key, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s path (%q) is not a directory", key, dir)
	}
	return nil
}

func fusermount() string {
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// isMountPoint reports whether dir is the root of a mount (its device
// differs from its parent's, or it is its own parent).
func isMountPoint(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	var st, pst syscall.Stat_t
	if err := syscall.Stat(abs, &st); err != nil {
		return false, err
	}
	if err := syscall.Stat(filepath.Dir(abs), &pst); err != nil {
		return false, err
	}
	return st.Dev != pst.Dev || st.Ino == pst.Ino, nil
}

// Start mounts /ipfs (and /ipns) of n. On an error nothing stays mounted.
func Start(n *node.Node, o Options) (*Mounts, error) {
	dirs, keys := []string{o.IPFS}, []string{"Mounts.IPFS", "Mounts.IPNS"}
	if o.IPNS != "" {
		dirs = append(dirs, o.IPNS)
	}
	for i, d := range dirs {
		if err := Check(keys[i], d); err != nil {
			return nil, err
		}
	}
	ipfsAbs, err := filepath.Abs(o.IPFS)
	if err != nil {
		return nil, err
	}
	f := NewFS(n, ipfsAbs, o.Resolver)
	m := &Mounts{}
	roots := []fs.InodeEmbedder{&ipfsRoot{root{fs: f}}, &ipnsRoot{root{fs: f}}}
	for i, d := range dirs {
		srv, err := fs.Mount(d, roots[i], fsOptions(o.AllowOther, []string{"ipfs", "ipns"}[i]))
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("cannot mount at %s: %w", d, err)
		}
		m.servers, m.dirs = append(m.servers, srv), append(m.dirs, d)
	}
	return m, nil
}

func fsOptions(allowOther bool, name string) *fs.Options {
	ttl := time.Minute // content under a CID never changes
	return &fs.Options{
		MountOptions: fuse.MountOptions{
			AllowOther:  allowOther,
			FsName:      "cairn-" + name,
			Name:        "cairn",
			DirectMount: true, // mount(2) as root; fusermount otherwise
			Options:     []string{"ro"},
		},
		EntryTimeout: &ttl,
		AttrTimeout:  &ttl,
	}
}

// Dirs are the mount points, /ipfs first.
func (m *Mounts) Dirs() []string { return m.dirs }

// Close unmounts everything Start mounted.
func (m *Mounts) Close() error {
	var errs []error
	m.once.Do(func() {
		for i, s := range m.servers {
			if err := s.Unmount(); err != nil {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", m.dirs[i], err))
			}
		}
	})
	return errors.Join(errs...)
}

// errno turns an FS error into FUSE's answer.
func errno(what string, err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, ErrNoIPNS):
		log.Warnf("%s: %v", what, err)
		return syscall.ENOTSUP
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	}
	log.Errorf("%s: %v", what, err)
	return syscall.EIO
}

// root is a mount's top directory: virtual, it lists nothing.
type root struct {
	fs.Inode
	fs *FS
}

func (r *root) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = fuse.S_IFDIR | 0o555
	return 0
}

func (r *root) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	return fs.NewListDirStream(nil), 0
}

// ipfsRoot is /ipfs: it finds any CID.
type ipfsRoot struct{ root }

func (r *ipfsRoot) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	e, err := r.fs.IPFS(ctx, name)
	if err != nil {
		return nil, errno("/ipfs/"+name, err)
	}
	return newInode(ctx, &r.Inode, r.fs, e, out), 0
}

// ipnsRoot is /ipns: names are symlinks into /ipfs.
type ipnsRoot struct{ root }

func (r *ipnsRoot) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	e, err := r.fs.IPNS(ctx, name)
	if err != nil {
		return nil, errno("/ipns/"+name, err)
	}
	ttl := time.Minute // a name may change: look it up again soon
	out.SetEntryTimeout(ttl)
	return newInode(ctx, &r.Inode, r.fs, e, out), 0
}

// entryNode is a directory, file or symlink under a root.
type entryNode struct {
	fs.Inode
	fs *FS
	e  Entry
}

func newInode(ctx context.Context, parent *fs.Inode, f *FS, e Entry, out *fuse.EntryOut) *fs.Inode {
	n := &entryNode{fs: f, e: e}
	n.fill(&out.Attr)
	mode := uint32(fuse.S_IFREG)
	switch e.Kind {
	case Dir:
		mode = fuse.S_IFDIR
	case Symlink:
		mode = fuse.S_IFLNK
	}
	return parent.NewInode(ctx, n, fs.StableAttr{Mode: mode})
}

func (n *entryNode) fill(a *fuse.Attr) {
	switch n.e.Kind {
	case Dir:
		a.Mode = fuse.S_IFDIR | 0o555
	case Symlink:
		a.Mode = fuse.S_IFLNK | 0o777
	default:
		a.Mode = fuse.S_IFREG | 0o444
		if n.e.Mode&0o111 != 0 {
			a.Mode |= 0o111
		}
	}
	a.Size = n.e.Size
	a.Blocks = (n.e.Size + 511) / 512
	if !n.e.ModTime.IsZero() {
		a.SetTimes(nil, &n.e.ModTime, nil)
	}
}

func (n *entryNode) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fill(&out.Attr)
	return 0
}

func (n *entryNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	e, err := n.fs.Lookup(ctx, n.e, name)
	if err != nil {
		return nil, errno(n.e.Cid.String()+"/"+name, err)
	}
	return newInode(ctx, &n.Inode, n.fs, e, out), 0
}

func (n *entryNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	ents, err := n.fs.List(ctx, n.e)
	if err != nil {
		return nil, errno(n.e.Cid.String(), err)
	}
	list := make([]fuse.DirEntry, 0, len(ents))
	for _, e := range ents {
		mode := uint32(fuse.S_IFREG)
		switch e.Kind {
		case Dir:
			mode = fuse.S_IFDIR
		case Symlink:
			mode = fuse.S_IFLNK
		}
		list = append(list, fuse.DirEntry{Name: e.Name, Mode: mode})
	}
	return fs.NewListDirStream(list), 0
}

func (n *entryNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND) != 0 {
		return nil, 0, syscall.EROFS
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (n *entryNode) Read(ctx context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	k, err := n.fs.Read(ctx, n.e, off, dest)
	if err != nil {
		return nil, errno(n.e.Cid.String(), err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

func (n *entryNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	if n.e.Kind != Symlink {
		return nil, syscall.EINVAL
	}
	return []byte(n.e.Target), 0
}

var (
	_ fs.NodeLookuper   = (*ipfsRoot)(nil)
	_ fs.NodeReaddirer  = (*ipfsRoot)(nil)
	_ fs.NodeGetattrer  = (*ipfsRoot)(nil)
	_ fs.NodeLookuper   = (*ipnsRoot)(nil)
	_ fs.NodeLookuper   = (*entryNode)(nil)
	_ fs.NodeReaddirer  = (*entryNode)(nil)
	_ fs.NodeGetattrer  = (*entryNode)(nil)
	_ fs.NodeOpener     = (*entryNode)(nil)
	_ fs.NodeReader     = (*entryNode)(nil)
	_ fs.NodeReadlinker = (*entryNode)(nil)
)
