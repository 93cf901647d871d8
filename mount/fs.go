// fs.go: the file system's logic, without FUSE: names, entries, bytes.

package mount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"cairn/node"

	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/go-cid"
)

// Kind is what an entry is.
type Kind int

// Entry kinds.
const (
	Dir Kind = iota
	File
	Symlink
)

// Entry is one name of the file system.
type Entry struct {
	Name    string
	Cid     cid.Cid
	Kind    Kind
	Size    uint64 // a file's bytes, a symlink target's length
	Target  string // a symlink's target
	Mode    os.FileMode
	ModTime time.Time
}

// Resolver resolves an IPNS name ("k51...", "example.com") to an /ipfs/
// path.
type Resolver func(ctx context.Context, name string) (string, error)

// ErrNoIPNS is the answer for /ipns names while no resolver is given.
var ErrNoIPNS = errors.New("IPNS names cannot be resolved by this node yet")

// ErrNotExist is the answer for a name that is not there.
var ErrNotExist = os.ErrNotExist

// FS reads the node's DAGs as a file system.
type FS struct {
	n        *node.Node
	ipfsDir  string   // where /ipfs is mounted: /ipns entries point there
	resolver Resolver // nil: /ipns answers ErrNoIPNS
}

// NewFS makes the file system of n; ipfsDir is the /ipfs mount point.
func NewFS(n *node.Node, ipfsDir string, r Resolver) *FS {
	return &FS{n: n, ipfsDir: ipfsDir, resolver: r}
}

// IPFS is the entry /ipfs/<name>: name must be a CID.
func (f *FS) IPFS(ctx context.Context, name string) (Entry, error) {
	c, err := cid.Decode(name)
	if err != nil {
		return Entry{}, ErrNotExist
	}
	return f.stat(ctx, name, c)
}

// IPNS is the entry /ipns/<name>: a symlink to what name resolves to,
// inside the /ipfs mount.
func (f *FS) IPNS(ctx context.Context, name string) (Entry, error) {
	if f.resolver == nil {
		return Entry{}, ErrNoIPNS
	}
	p, err := f.resolver(ctx, name)
	if err != nil {
		return Entry{}, err
	}
	rest, ok := strings.CutPrefix(p, "/ipfs/")
	if !ok {
		return Entry{}, fmt.Errorf("/ipns/%s resolved to %q, not an /ipfs/ path", name, p)
	}
	target := path.Join(f.ipfsDir, rest)
	return Entry{Name: name, Kind: Symlink, Target: target, Size: uint64(len(target))}, nil
}

// Lookup is the entry name inside the directory dir.
func (f *FS) Lookup(ctx context.Context, dir Entry, name string) (Entry, error) {
	if dir.Kind != Dir || name == "" || strings.Contains(name, "/") {
		return Entry{}, ErrNotExist
	}
	r, err := f.n.Dag().Resolve(ctx, "/ipfs/"+dir.Cid.String()+"/"+name)
	if err != nil {
		if strings.Contains(err.Error(), "no link named") {
			return Entry{}, ErrNotExist
		}
		return Entry{}, err
	}
	return f.stat(ctx, name, r.Cid)
}

// List returns a directory's entries, in the directory's order.
func (f *FS) List(ctx context.Context, dir Entry) ([]Entry, error) {
	if dir.Kind != Dir {
		return nil, errors.New("not a directory")
	}
	nd, err := f.n.DAG.Get(ctx, dir.Cid)
	if err != nil {
		return nil, err
	}
	var out []Entry
	err = f.n.UnixFS().Ls(ctx, nd, true, func(e node.LsEntry) error {
		ent := Entry{Name: e.Name, Cid: e.Cid, Size: e.Size, Mode: e.Mode, ModTime: e.ModTime, Kind: File}
		switch e.Type {
		case node.LsDirectory:
			ent.Kind = Dir
		case node.LsSymlink:
			ent.Kind, ent.Target, ent.Size = Symlink, e.Target, uint64(len(e.Target))
		}
		out = append(out, ent)
		return nil
	})
	return out, err
}

// Read reads a file's bytes at off into dest; it returns how many, fewer
// only at the end of the file.
func (f *FS) Read(ctx context.Context, file Entry, off int64, dest []byte) (int, error) {
	if file.Kind != File {
		return 0, errors.New("not a file")
	}
	if off < 0 || uint64(off) >= file.Size || len(dest) == 0 {
		return 0, nil
	}
	w := bytes.NewBuffer(dest[:0])
	if err := f.n.UnixFS().WriteFile(ctx, file.Cid, off, int64(len(dest)), w); err != nil {
		return 0, err
	}
	return copy(dest, w.Bytes()), nil
}

// stat reads what c is: a UnixFS directory, file or symlink (a raw block
// is a file).
func (f *FS) stat(ctx context.Context, name string, c cid.Cid) (Entry, error) {
	e := Entry{Name: name, Cid: c, Kind: File}
	nd, err := f.n.DAG.Get(ctx, c)
	if err != nil {
		return Entry{}, err
	}
	switch nd := nd.(type) {
	case *merkledag.RawNode:
		e.Size = uint64(len(nd.RawData()))
		return e, nil
	case *merkledag.ProtoNode:
		fsn, err := ft.FSNodeFromBytes(nd.Data())
		if err != nil {
			return Entry{}, fmt.Errorf("%s is not UnixFS: %w", c, err)
		}
		e.Mode, e.ModTime = fsn.Mode(), fsn.ModTime()
		switch fsn.Type() {
		case ft.TDirectory, ft.THAMTShard:
			e.Kind = Dir
		case ft.TSymlink:
			e.Kind, e.Target = Symlink, string(fsn.Data())
			e.Size = uint64(len(e.Target))
		case ft.TFile, ft.TRaw:
			e.Size = fsn.FileSize()
		default:
			return Entry{}, fmt.Errorf("%s: UnixFS type %s is not a file, directory or symlink", c, fsn.Type())
		}
		return e, nil
	}
	return Entry{}, fmt.Errorf("%s is not UnixFS (codec 0x%x)", c, c.Type())
}
