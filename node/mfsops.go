// mfsops.go: the operations of the "files" commands on the node's MFS
// (Kubo's core/commands/files.go bodies): lookup, cp, mv, mkdir, rm,
// chcid, chmod, touch, flush, ls, read, write, and add's --to-files. Each operation that
// changes the tree brackets itself with Begin/end (see mfs.go); paths are
// already cleaned by the caller (absolute, no "..").

package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	gopath "path"
	"strings"
	"time"

	"cairn/node/config"

	"github.com/ipfs/boxo/filestore/posinfo"
	dag "github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/mfs"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// do runs fn as one tree-changing command (Begin, fn, end).
func (m *MFS) do(flush bool, fn func() error) error {
	end, err := m.Begin(flush)
	if err != nil {
		return err
	}
	err = fn()
	if eerr := end(); err == nil {
		err = eerr
	}
	return err
}

// Node returns the node at p: an /ipfs/ path (or ipfs:// URI) through
// the DAG, anything else in MFS (Kubo's getNodeFromPath).
func (m *MFS) Node(ctx context.Context, p string) (ipld.Node, error) {
	if u := FromURI(p); strings.HasPrefix(u, "/ipfs/") {
		p = u
	}
	if strings.HasPrefix(p, "/ipfs/") {
		res, err := m.n.Dag().Resolve(ctx, p)
		if err != nil {
			return nil, err
		}
		return res.Node, nil
	}
	fsn, err := mfs.Lookup(m.root, p)
	if err != nil {
		return nil, err
	}
	return fsn.GetNode()
}

// IsDir reports whether p names an MFS directory (false when it does not
// exist).
func (m *MFS) IsDir(p string) bool {
	fsn, err := mfs.Lookup(m.root, p)
	return err == nil && fsn.Type() == mfs.TDir
}

func (m *MFS) parentDir(dir string) (*mfs.Directory, error) {
	parent, err := mfs.Lookup(m.root, dir)
	if err != nil {
		return nil, err
	}
	pdir, ok := parent.(*mfs.Directory)
	if !ok {
		return nil, errors.New("expected *mfs.Directory, didn't get it. This is likely a race condition")
	}
	return pdir, nil
}

// mkParents makes the directories above p (mkdir -p), with builder's
// format (nil: the configured one).
func (m *MFS) mkParents(p string, builder cid.Builder) error {
	dir := gopath.Dir(p)
	if dir == "/" {
		return nil
	}
	opts, err := m.n.UnixFS().DirOptions(builder)
	if err != nil {
		return err
	}
	return mfs.Mkdir(m.root, dir, mfs.MkdirOpts{Mkparents: true}, opts...)
}

// flushPaths flushes each path in turn.
func (m *MFS) flushPaths(ctx context.Context, ps ...string) error {
	for _, p := range ps {
		if _, err := mfs.FlushPath(ctx, m.root, p); err != nil {
			return err
		}
	}
	return nil
}

// Chcid sets the CID format of directory p's future writes (nil builder:
// unchanged) and, with flush, flushes it and its parent.
func (m *MFS) Chcid(ctx context.Context, p string, builder cid.Builder, flush bool) error {
	return m.do(flush, func() error {
		if builder != nil {
			fsn, err := mfs.Lookup(m.root, p)
			if err != nil {
				return err
			}
			d, ok := fsn.(*mfs.Directory)
			if !ok {
				return errors.New("can only update directories")
			}
			d.SetCidBuilder(builder)
		}
		if !flush {
			return nil
		}
		return m.flushPaths(ctx, p, gopath.Dir(p))
	})
}

// Chmod sets the UnixFS mode of the node at p (Kubo's files chmod).
func (m *MFS) Chmod(p string, mode os.FileMode) error {
	return m.do(true, func() error { return mfs.Chmod(m.root, p, mode) })
}

// Touch sets the UnixFS modification time of the node at p (Kubo's files
// touch).
func (m *MFS) Touch(p string, ts time.Time) error {
	return m.do(true, func() error { return mfs.Touch(m.root, p, ts) })
}

// CpOptions tune Cp.
type CpOptions struct {
	Parents bool        // make dst's parent directories
	Force   bool        // replace an existing file at dst
	Flush   bool        // flush dst and its parent
	Builder cid.Builder // format of directories made by Parents (nil: configured)
}

// Cp puts a reference to the node at src (an /ipfs/ path or an MFS path)
// at dst. The source must be UnixFS (dag-pb or raw), as Kubo requires.
func (m *MFS) Cp(ctx context.Context, src, dst string, o CpOptions) error {
	return m.do(o.Flush, func() error {
		nd, err := m.Node(ctx, src)
		if err != nil {
			return fmt.Errorf("cp: cannot get node from path %s: %s", src, err)
		}
		if err := checkUnixFS(nd); err != nil {
			return err
		}
		if o.Parents {
			if err := m.mkParents(dst, o.Builder); err != nil {
				return err
			}
		}
		if o.Force {
			if err := m.unlinkFile(dst); err != nil {
				return fmt.Errorf("cp: cannot unlink existing file: %s", err)
			}
		}
		if err := mfs.PutNode(m.root, dst, nd); err != nil {
			return fmt.Errorf("cp: cannot put node in path %s: %s", dst, err)
		}
		if !o.Flush {
			return nil
		}
		if _, err := mfs.FlushPath(ctx, m.root, dst); err != nil {
			return fmt.Errorf("cp: cannot flush the created file %s: %s", dst, err)
		}
		if _, err := mfs.FlushPath(ctx, m.root, gopath.Dir(dst)); err != nil {
			return fmt.Errorf("cp: cannot flush the created file's parent folder %s: %s", dst, err)
		}
		return nil
	})
}

var errFilesCpInvalidUnixFS = errors.New("cp: source must be a valid UnixFS (dag-pb or raw codec)")

// checkUnixFS accepts what Kubo's files cp accepts as a source root.
func checkUnixFS(nd ipld.Node) error {
	switch nd.Cid().Type() {
	case cid.Raw:
		if _, ok := nd.(*dag.RawNode); !ok {
			return errFilesCpInvalidUnixFS
		}
	case cid.DagProtobuf:
		pn, ok := nd.(*dag.ProtoNode)
		if !ok {
			return errFilesCpInvalidUnixFS
		}
		if _, err := ft.FSNodeFromBytes(pn.Data()); err != nil {
			return fmt.Errorf("%w: %v", errFilesCpInvalidUnixFS, err)
		}
	default:
		return errFilesCpInvalidUnixFS
	}
	return nil
}

// unlinkFile removes the file at p if there is one (a directory there is
// an error).
func (m *MFS) unlinkFile(p string) error {
	dir, name := gopath.Split(p)
	parent, err := mfs.Lookup(m.root, dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	pdir, ok := parent.(*mfs.Directory)
	if !ok {
		return fmt.Errorf("not a directory: %s", dir)
	}
	child, err := pdir.Child(name)
	if err != nil {
		return nil
	}
	if child.Type() != mfs.TFile {
		return fmt.Errorf("not a file: %s", p)
	}
	return pdir.Unlink(name)
}

// Flush writes out p and everything below it and returns its CID.
func (m *MFS) Flush(ctx context.Context, p string) (cid.Cid, error) {
	var c cid.Cid
	err := m.do(true, func() error {
		nd, err := mfs.FlushPath(ctx, m.root, p)
		if err != nil {
			return err
		}
		c = nd.Cid()
		return nil
	})
	return c, err
}

// List lists directory p (names only unless long), or the file p itself.
// For a file, long also fills its type, size and hash (encoded with enc).
func (m *MFS) List(ctx context.Context, p string, long bool, enc func(cid.Cid) string) ([]mfs.NodeListing, error) {
	fsn, err := mfs.Lookup(m.root, p)
	if err != nil {
		return nil, err
	}
	switch fsn := fsn.(type) {
	case *mfs.Directory:
		if long {
			return fsn.List(ctx)
		}
		names, err := fsn.ListNames(ctx)
		if err != nil {
			return nil, err
		}
		var out []mfs.NodeListing
		for _, name := range names {
			out = append(out, mfs.NodeListing{Name: name})
		}
		return out, nil
	case *mfs.File:
		_, name := gopath.Split(p)
		out := []mfs.NodeListing{{Name: name}}
		if long {
			out[0].Type = int(fsn.Type())
			size, err := fsn.Size()
			if err != nil {
				return nil, err
			}
			out[0].Size = size
			nd, err := fsn.GetNode()
			if err != nil {
				return nil, err
			}
			out[0].Hash = enc(nd.Cid())
		}
		return out, nil
	}
	return nil, errors.New("unrecognized type")
}

// Mkdir makes directory p (and its parents with parents), in builder's
// format (nil: the configured one).
func (m *MFS) Mkdir(p string, parents, flush bool, builder cid.Builder) error {
	return m.do(flush, func() error {
		opts, err := m.n.UnixFS().DirOptions(builder)
		if err != nil {
			return err
		}
		return mfs.Mkdir(m.root, p, mfs.MkdirOpts{Mkparents: parents, Flush: flush}, opts...)
	})
}

// Mv moves src to dst; with flush, both parents and the root are flushed.
func (m *MFS) Mv(ctx context.Context, src, dst string, flush bool) error {
	return m.do(flush, func() error {
		if err := mfs.Mv(m.root, src, dst); err != nil {
			return err
		}
		if !flush {
			return nil
		}
		psrc, pdst := gopath.Dir(src), gopath.Dir(dst)
		if _, err := mfs.FlushPath(ctx, m.root, pdst); err != nil {
			return fmt.Errorf("cp: cannot flush the destination file's parent folder %s: %s", dst, err)
		}
		if psrc != pdst {
			if _, err := mfs.FlushPath(ctx, m.root, psrc); err != nil {
				return fmt.Errorf("cp: cannot flush the source's file's parent folder %s: %s", dst, err)
			}
		}
		_, err := mfs.FlushPath(ctx, m.root, "/")
		return err
	})
}

// ReadFile writes count bytes of file p from offset to w; all of it
// when count is nil.
func (m *MFS) ReadFile(ctx context.Context, p string, offset int64, count *int64, w io.Writer) error {
	fsn, err := mfs.Lookup(m.root, p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	fi, ok := fsn.(*mfs.File)
	if !ok {
		return fmt.Errorf("%s was not a file", p)
	}
	nd, err := fi.GetNode()
	if err != nil {
		return err
	}
	if pn, ok := nd.(*dag.ProtoNode); ok {
		if fsn, err := ft.FSNodeFromBytes(pn.Data()); err == nil && fsn.Type() == ft.TSymlink {
			return errors.New("symlinks not yet supported")
		}
	}
	if offset < 0 {
		return errors.New("cannot specify negative offset")
	}
	size, err := fi.Size()
	if err != nil {
		return err
	}
	if offset > size {
		return fmt.Errorf("offset was past end of file (%d > %d)", offset, size)
	}
	n := int64(-1)
	if count != nil {
		if n = *count; n < 0 {
			return errors.New("cannot specify negative 'count'")
		}
	}
	if err := m.Sync(); err != nil {
		return err
	}
	return m.n.UnixFS().WriteFile(ctx, nd.Cid(), offset, n, w)
}

// Remove removes each of ps (always flushed, as Kubo's files rm): a
// directory only with recursive; with force, a missing path is no error
// and directories go too. It returns one error (or nil) per path.
func (m *MFS) Remove(ps []string, force, recursive bool) ([]error, error) {
	errs := make([]error, len(ps))
	err := m.do(true, func() error {
		for i, p := range ps {
			errs[i] = m.remove(p, force, recursive)
		}
		return nil
	})
	return errs, err
}

func (m *MFS) remove(p string, force, recursive bool) error {
	if p == "/" {
		return errors.New("cannot delete root")
	}
	p = strings.TrimSuffix(p, "/")
	dir, name := gopath.Split(p)
	pdir, err := m.parentDir(dir)
	if err != nil {
		if force && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if force {
		if err := pdir.Unlink(name); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		return pdir.Flush()
	}
	child, err := pdir.Child(name)
	if err != nil {
		return err
	}
	if _, isDir := child.(*mfs.Directory); isDir && !recursive {
		return errors.New("path is a directory, use -r to remove directories")
	}
	if err := pdir.Unlink(name); err != nil {
		return err
	}
	return pdir.Flush()
}

// LocalSize is Kubo's walkBlock for files stat --with-local: whether the
// whole DAG under nd is stored, and the bytes of the part that is.
func (m *MFS) LocalSize(ctx context.Context, nd ipld.Node) (bool, uint64, error) {
	if err := m.Sync(); err != nil {
		return false, 0, err
	}
	return walkLocal(ctx, m.n.DAG, nd)
}

func walkLocal(ctx context.Context, dserv ipld.DAGService, nd ipld.Node) (bool, uint64, error) {
	size := uint64(len(nd.RawData()))
	local := true
	for _, l := range nd.Links() {
		child, err := dserv.Get(ctx, l.Cid)
		if ipld.IsNotFound(err) {
			local = false
			continue
		}
		if err != nil {
			return local, size, err
		}
		cl, cs, err := walkLocal(ctx, dserv, child)
		if err != nil {
			return local, size, err
		}
		local = local && cl
		size += cs
	}
	return local, size, nil
}

// WriteOptions tune Write.
type WriteOptions struct {
	Offset   int64
	Count    *int64 // bytes to take from the input; nil: all
	Create   bool   // create the file if missing
	Parents  bool   // make its parent directories
	Truncate bool   // truncate to zero first
	Flush    bool
	// RawLeaves, if set, overrides Import.UnixFSRawLeaves.
	RawLeaves *bool
	Builder   cid.Builder // format of new nodes (nil: the directory's)
}

// Write writes the input to file p at o.Offset. input is called once the
// file is open (and truncated), as Kubo reads its file argument.
func (m *MFS) Write(ctx context.Context, p string, input func() (io.Reader, error), o WriteOptions) error {
	return m.do(o.Flush, func() (err error) {
		raw := o.RawLeaves
		if imp := m.n.Config().Import; raw == nil && imp.UnixFSRawLeaves != config.Default {
			r := imp.UnixFSRawLeaves == config.True
			raw = &r
		}
		if o.Offset < 0 {
			return errors.New("cannot have negative write offset")
		}
		if o.Parents {
			if err := m.mkParents(p, o.Builder); err != nil {
				return err
			}
		}
		fi, err := m.fileHandle(p, o.Create, o.Builder)
		if err != nil {
			return err
		}
		if raw != nil {
			fi.RawLeaves = *raw
		}
		wfd, err := fi.Open(mfs.Flags{Write: true, Sync: o.Flush})
		if err != nil {
			return err
		}
		defer func() {
			if cerr := wfd.Close(); err == nil {
				err = cerr
			}
			if o.Flush {
				if _, ferr := mfs.FlushPath(ctx, m.root, gopath.Dir(p)); err == nil {
					err = ferr
				}
			}
		}()
		if o.Truncate {
			if err := wfd.Truncate(0); err != nil {
				return err
			}
		}
		if o.Count != nil && *o.Count < 0 {
			return errors.New("cannot have negative byte count")
		}
		if _, err := wfd.Seek(o.Offset, io.SeekStart); err != nil {
			return err
		}
		in, err := input()
		if err != nil {
			return err
		}
		if o.Count != nil {
			in = io.LimitReader(in, *o.Count)
		}
		_, err = io.Copy(wfd, in)
		return err
	})
}

// fileHandle is Kubo's getFileHandle: the file at p, created empty (with
// builder, or its directory's) when create is set.
func (m *MFS) fileHandle(p string, create bool, builder cid.Builder) (*mfs.File, error) {
	target, err := mfs.Lookup(m.root, p)
	switch {
	case err == nil:
		fi, ok := target.(*mfs.File)
		if !ok {
			return nil, fmt.Errorf("%s was not a file", p)
		}
		return fi, nil
	case !errors.Is(err, os.ErrNotExist) || !create:
		return nil, err
	}
	dir, name := gopath.Split(p)
	pdir, err := m.parentDir(dir)
	if err != nil {
		return nil, err
	}
	if builder == nil {
		builder = pdir.GetCidBuilder()
	}
	nd := dag.NodeWithData(ft.FilePBData(nil, 0))
	if err := nd.SetCidBuilder(builder); err != nil {
		return nil, err
	}
	if err := pdir.AddChild(name, nd); err != nil {
		return nil, err
	}
	fsn, err := pdir.Child(name)
	if err != nil {
		return nil, err
	}
	fi, ok := fsn.(*mfs.File)
	if !ok {
		return nil, errors.New("expected *mfs.File, didn't get it. This is likely a race condition")
	}
	return fi, nil
}

// PutRef is one step of add's --to-files: it puts a reference to nd
// (added as name) at dst, a directory when dst ends in "/" (then under
// name's base), else a path that takes only one entry (first says
// whether this is the first entry put). Kubo 0.42 semantics and errors.
func (m *MFS) PutRef(ctx context.Context, dst, name string, nd ipld.Node, first bool) error {
	if fn, ok := nd.(*posinfo.FilestoreNode); ok {
		nd = fn.Node
	}
	return m.do(true, func() error {
		d := dst
		asDir := d[len(d)-1] == '/'
		if asDir {
			fsn, err := mfs.Lookup(m.root, d)
			if err != nil {
				return fmt.Errorf("to-files: MFS destination directory %q does not exist: %w", d, err)
			}
			if fsn.Type() != mfs.TDir {
				return fmt.Errorf("to-files: MFS destination %q is not a directory", d)
			}
			d += gopath.Base(name)
		}
		if !first && !asDir {
			return fmt.Errorf("to-files: MFS destination is a file: only one entry can be copied to %q", d)
		}
		if _, err := mfs.Lookup(m.root, gopath.Dir(d)); err != nil {
			return fmt.Errorf("to-files: MFS destination parent %q %q does not exist: %w", d, gopath.Dir(d), err)
		}
		if err := mfs.PutNode(m.root, d, nd); err != nil {
			return fmt.Errorf("to-files: cannot put node in path %q: %w", d, err)
		}
		_, err := mfs.FlushPath(ctx, m.root, gopath.Dir(d))
		return err
	})
}
