// tar.go: writing a UnixFS DAG as a tar stream, laid out as Kubo's get
// does: one top entry, directory entries in link order, stored modes and
// mtimes (else defaults and the current time). File content is streamed
// from the store with WriteFile, never held in memory.

package node

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// EntryKind is what a UnixFS node is, for get.
type EntryKind int

// Entry kinds.
const (
	EntryFile EntryKind = iota
	EntryDir
	EntrySymlink
)

// UnixFSEntry describes one UnixFS node.
type UnixFSEntry struct {
	Kind EntryKind
	// Size: a file's content length; a directory's cumulative DAG size
	// (what Kubo announces for get); a symlink's target length.
	Size    uint64
	Perms   uint32    // stored unix permission bits (0: none stored)
	ModTime time.Time // zero: none stored
	Target  string    // symlink target
}

// TarMode is the mode Kubo writes for e: the stored permissions, else
// 0755 for directories, 0644 for files; symlinks are always 0777.
func (e UnixFSEntry) TarMode() int64 {
	switch {
	case e.Kind == EntrySymlink:
		return 0o777
	case e.Perms != 0:
		return int64(e.Perms)
	case e.Kind == EntryDir:
		return 0o755
	}
	return 0o644
}

// Stat describes nd. Raw blocks are files; dag-pb nodes must carry
// UnixFS data; other codecs fail with Kubo's "unknown node type".
func (u *UnixFS) Stat(ctx context.Context, nd ipld.Node) (UnixFSEntry, error) {
	switch nd := nd.(type) {
	case *merkledag.RawNode:
		return UnixFSEntry{Kind: EntryFile, Size: uint64(len(nd.RawData()))}, nil
	case *merkledag.ProtoNode:
		fsn, err := ft.FSNodeFromBytes(nd.Data())
		if err != nil {
			return UnixFSEntry{}, err
		}
		e := UnixFSEntry{Perms: files.ModePermsToUnixPerms(fsn.Mode()), ModTime: fsn.ModTime()}
		switch fsn.Type() {
		case ft.TDirectory, ft.THAMTShard:
			e.Kind = EntryDir
			e.Size, err = nd.Size()
		case ft.TSymlink:
			e.Kind = EntrySymlink
			e.Target = string(fsn.Data())
			e.Size = uint64(len(e.Target))
		case ft.TFile, ft.TRaw:
			e.Kind = EntryFile
			e.Size, err = u.FileSize(ctx, nd.Cid())
		default:
			err = ft.ErrUnrecognizedType
		}
		return e, err
	}
	return UnixFSEntry{}, errors.New("unknown node type")
}

// WriteTar writes nd, named name, and for a directory everything below
// it, to tw. format is the tar header format (Kubo uses PAX for plain
// get, and leaves it unset for --archive). Entry names that would leave
// name fail with ErrPathOutsideRoot. tw is not closed.
func (u *UnixFS) WriteTar(ctx context.Context, tw *tar.Writer, nd ipld.Node, name string, format tar.Format) error {
	n := u.n
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, "../") || strings.HasPrefix(name, "/") {
		return ErrPathOutsideRoot
	}
	st, err := u.Stat(ctx, nd)
	if err != nil {
		return err
	}
	w := &tarWalk{n: n, ctx: ctx, tw: tw, root: name, format: format}
	return w.entry(nd.Cid(), nd, st, name)
}

type tarWalk struct {
	n      *Node
	ctx    context.Context
	tw     *tar.Writer
	root   string
	format tar.Format
}

func (w *tarWalk) header(st UnixFSEntry, name string) *tar.Header {
	h := &tar.Header{Name: name, Mode: st.TarMode(), ModTime: st.ModTime, Format: w.format}
	if h.ModTime.IsZero() {
		h.ModTime = time.Now()
	}
	return h
}

// entry writes one node; nd may be nil for a raw file (never decoded).
func (w *tarWalk) entry(c cid.Cid, nd ipld.Node, st UnixFSEntry, name string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	h := w.header(st, name)
	switch st.Kind {
	case EntrySymlink:
		h.Typeflag = tar.TypeSymlink
		h.Linkname = st.Target
		return w.tw.WriteHeader(h)
	case EntryFile:
		h.Typeflag = tar.TypeReg
		h.Size = int64(st.Size)
		if err := w.tw.WriteHeader(h); err != nil {
			return err
		}
		return w.n.UnixFS().WriteFile(w.ctx, c, 0, -1, w.tw)
	}
	h.Typeflag = tar.TypeDir
	if err := w.tw.WriteHeader(h); err != nil {
		return err
	}
	pn, ok := nd.(*merkledag.ProtoNode)
	if !ok {
		return fmt.Errorf("block %s: not a directory node", c)
	}
	dir, err := uio.NewDirectoryFromNode(w.n.DAG, pn)
	if err != nil {
		return err
	}
	return dir.ForEachLink(w.ctx, func(l *ipld.Link) error {
		child := path.Join(name, l.Name)
		if !strings.HasPrefix(child, w.root+"/") {
			return ErrPathOutsideRoot
		}
		return w.child(l.Cid, child)
	})
}

// child stats and writes a directory entry. Raw blocks are files whose
// size the store knows without reading them.
func (w *tarWalk) child(c cid.Cid, name string) error {
	if c.Type() == cid.Raw {
		size, err := w.n.blockSize(w.ctx, c)
		if err != nil {
			return err
		}
		return w.entry(c, nil, UnixFSEntry{Kind: EntryFile, Size: uint64(size)}, name)
	}
	nd, err := w.n.DAG.Get(w.ctx, c)
	if err != nil {
		return err
	}
	st, err := w.n.UnixFS().Stat(w.ctx, nd)
	if err != nil {
		return err
	}
	return w.entry(c, nd, st, name)
}
