// add.go: importing files and directories as UnixFS DAGs, with the layout
// choices that give Kubo's CIDs.

package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	pathpkg "path"
	"sort"
	"strconv"
	"strings"
	"time"

	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	"github.com/ipfs/boxo/ipld/unixfs/importer/trickle"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// AddOptions are the settings of one add. Pointers are "unset": the
// config's Import section, then Kubo's defaults apply.
type AddOptions struct {
	Chunker     string
	Trickle     bool
	RawLeaves   *bool
	CidVersion  *int
	Hash        string
	Inline      bool
	InlineLimit int
	OnlyHash    bool
	Pin         bool
	Wrap        bool
	Silent      bool
	Progress    bool
	// Mode and Mtime set on every file root and directory (and Mtime on
	// symlinks); 0 / zero time: unset.
	Mode  os.FileMode
	Mtime time.Time
	// PreserveMode/PreserveMtime store each entry's own metadata (sent
	// with its multipart part).
	PreserveMode  bool
	PreserveMtime bool
	// EmptyDirs keeps empty directories below the top level.
	EmptyDirs bool
	// MaxLinks, MaxDirLinks, MaxHAMTFanout override Import.* when > 0.
	MaxLinks      int
	MaxDirLinks   int
	MaxHAMTFanout int
	NoCopy        bool
	Fscache       bool
	// PinName names the pins (Kubo 0.42 --pin-name).
	PinName string
	// AfterTop, if set, runs for each top-level entry (not with Wrap)
	// once the whole input has arrived and every entry is stored and
	// pinned (add --to-files).
	AfterTop func(name string, root ipld.Node) error
	// Encode renders CIDs in events (nil: the CID's default form).
	Encode func(cid.Cid) string
}

// AddEvent is one line of add's output (Kubo's AddEvent, 0.42 fields).
type AddEvent struct {
	Name       string
	Hash       string `json:",omitempty"`
	Bytes      int64  `json:",omitempty"`
	Size       string `json:",omitempty"`
	Mode       string `json:",omitempty"`
	Mtime      int64  `json:",omitempty"`
	MtimeNsecs int    `json:",omitempty"`
}

// Adder imports one add request.
type Adder struct {
	n    *Node
	o    AddOptions
	st   *importSettings
	dag  ipld.DAGService
	sync func() error
	emit func(AddEvent) error
	ctx  context.Context

	// fileMode and fileMtime are what the next node stores; with the
	// preserve options each visited entry sets them to its own (Kubo's
	// adder behaves the same way).
	fileMode  os.FileMode
	fileMtime time.Time
	// top is the metadata of the current top-level entry, which every
	// event of that entry reports (Kubo does the same).
	top AddEvent
	// sess is the write session of the request.
	sess *WriteSession
}

// NewAdder prepares an import; emit receives the events in Kubo's order.
func (n *Node) NewAdder(ctx context.Context, o AddOptions, emit func(AddEvent) error) (*Adder, error) {
	st, err := resolveImport(n.Cfg().Import, &o)
	if err != nil {
		return nil, err
	}
	if exp := n.Cfg().Experimental; o.NoCopy && !exp.FilestoreEnabled && !exp.UrlstoreEnabled {
		return nil, errNoCopyDisabled
	}
	a := &Adder{n: n, o: o, st: st, emit: emit, ctx: ctx, fileMode: o.Mode, fileMtime: o.Mtime}
	if o.Mode != 0 {
		a.o.PreserveMode = false
	}
	if !o.Mtime.IsZero() {
		a.o.PreserveMtime = false
	}
	if o.OnlyHash {
		a.dag = newHashOnlyDAG()
		a.sync = func() error { return nil }
	}
	return a, nil
}

// begin opens the write session of the request: its blocks are safe from
// a concurrent GC until the pins are recorded, and removed again if the
// request fails.
func (a *Adder) begin() {
	if a.o.OnlyHash {
		return
	}
	a.sess = a.n.BeginWrite()
	a.dag = newBatchDAG(a.n, a.sess)
	if a.o.NoCopy || a.o.Fscache {
		a.dag = &refDAG{batchDAG: newBatchDAG(a.n, a.sess), fscache: a.o.Fscache}
	}
	a.sync = a.sess.Sync
}

// end closes the current session; after a failure it first removes the
// blocks the entry stored.
func (a *Adder) end(failed bool) error {
	if a.sess == nil {
		return nil
	}
	s := a.sess
	a.sess = nil
	if failed {
		_ = s.Rollback(context.WithoutCancel(a.ctx))
	}
	return s.End()
}

// dirEntry is a directory built during the import, kept for the
// post-order directory events.
type dirEntry struct {
	path     string
	node     ipld.Node
	children map[string]*dirEntry
	order    []string // subdirectory names in event order
}

// AddAll imports every top-level entry of root (each on its own, or all
// under one wrapping directory) and returns the roots imported. Nothing
// is pinned or linked into MFS (AfterTop) before root's iterator has
// ended without error: an interrupted upload (a multipart body cut before
// its closing boundary) fails as a whole, and the blocks it stored are
// removed again.
func (a *Adder) AddAll(root files.Directory) (roots []cid.Cid, err error) {
	a.begin()
	defer func() {
		if eerr := a.end(err != nil); err == nil {
			err = eerr
		}
	}()
	if a.o.Wrap {
		wrap := &dirEntry{path: "", children: map[string]*dirEntry{}}
		it := root.Entries()
		nd, err := a.addDir("", it, it.Next(), wrap)
		if err != nil {
			return nil, err
		}
		if err := a.finishTop(wrap); err != nil {
			return nil, err
		}
		return []cid.Cid{nd.Cid()}, a.commit([]string{""}, []ipld.Node{nd})
	}
	it := root.Entries()
	var names []string
	var nds []ipld.Node
	for it.Next() {
		name := it.Name()
		a.top = topStat(it.Node())
		var de *dirEntry
		if _, isDir := it.Node().(files.Directory); isDir {
			de = &dirEntry{path: name, children: map[string]*dirEntry{}}
		}
		nd, err := a.addNode(name, it.Node(), de)
		if err != nil {
			return nil, err
		}
		if err := a.finishTop(de); err != nil {
			return nil, err
		}
		names, nds = append(names, name), append(nds, nd)
		roots = append(roots, nd.Cid())
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if len(nds) == 0 {
		return nil, errors.New("expected a file argument")
	}
	return roots, a.commit(names, nds)
}

// finishTop makes a top-level entry durable and emits its directory
// events (post-order, children by name).
func (a *Adder) finishTop(de *dirEntry) error {
	if err := a.sync(); err != nil {
		return err
	}
	if de == nil {
		return nil
	}
	return a.emitDirs(de)
}

// commit pins the top-level entries of a complete request and runs
// AfterTop on each (not with Wrap), then closes the write session.
func (a *Adder) commit(names []string, nds []ipld.Node) error {
	if a.o.Pin && !a.o.OnlyHash {
		cs := make([]cid.Cid, len(nds))
		for i, nd := range nds {
			cs[i] = nd.Cid()
		}
		if err := a.n.PinRoots(a.ctx, a.o.PinName, cs...); err != nil {
			return err
		}
	}
	if err := a.end(false); err != nil {
		return err
	}
	if a.o.AfterTop == nil || a.o.Wrap {
		return nil
	}
	for i, nd := range nds {
		if err := a.o.AfterTop(names[i], nd); err != nil {
			return err
		}
	}
	return nil
}

func (a *Adder) emitDirs(de *dirEntry) error {
	for _, k := range de.order {
		if err := a.emitDirs(de.children[k]); err != nil {
			return err
		}
	}
	return a.event(de.path, de.node)
}

func (a *Adder) event(name string, nd ipld.Node) error {
	size, err := nd.Size()
	if err != nil {
		return err
	}
	h := nd.Cid().String()
	if a.o.Encode != nil {
		h = a.o.Encode(nd.Cid())
	}
	ev := a.top
	ev.Name, ev.Hash, ev.Size = name, h, strconv.FormatUint(size, 10)
	return a.emit(ev)
}

func (a *Adder) addNode(path string, f files.Node, de *dirEntry) (ipld.Node, error) {
	if err := a.ctx.Err(); err != nil {
		return nil, err
	}
	if err := a.visit(f); err != nil {
		return nil, err
	}
	switch f := f.(type) {
	case files.Directory:
		it := f.Entries()
		return a.addDir(path, it, it.Next(), de)
	case *files.Symlink:
		return a.addSymlink(path, f)
	case files.File:
		return a.addFile(path, f)
	}
	return nil, errors.New("unknown file type")
}

func (a *Adder) newDir() (uio.Directory, error) {
	opts := a.st.dirOptions()
	if a.fileMode != 0 || !a.fileMtime.IsZero() {
		opts = append(opts, uio.WithStat(a.fileMode, a.fileMtime))
	}
	d, err := uio.NewDirectory(a.dag, opts...)
	if err != nil {
		return nil, err
	}
	d.SetHAMTShardingSize(a.st.hamtSize)
	return d, nil
}

// addDir imports a directory whose iterator it was already advanced once
// (has is that first Next's result), so that callers can peek for
// emptiness as Kubo's adder does.
func (a *Adder) addDir(path string, it files.DirIterator, has bool, de *dirEntry) (ipld.Node, error) {
	d, err := a.newDir()
	if err != nil {
		return nil, err
	}
	seen := map[string]struct{}{}
	var subdirs []string
	for ; has; has = it.Next() {
		name := it.Name()
		if name == "." || name == ".." || strings.Contains(name, "/") {
			return nil, fmt.Errorf("invalid entry name %q", name)
		}
		if _, dup := seen[name]; dup && name != "" {
			return nil, ErrDirEntryExists
		}
		seen[name] = struct{}{}
		child := pathpkg.Join(path, name)
		var nd ipld.Node
		var cde *dirEntry
		if sub, isDir := it.Node().(files.Directory); isDir {
			cit := sub.Entries()
			chas := cit.Next()
			if !chas {
				if err := cit.Err(); err != nil {
					return nil, err
				}
				if !a.o.EmptyDirs {
					continue
				}
			}
			cde = &dirEntry{path: child, children: map[string]*dirEntry{}}
			if err := a.visit(sub); err != nil {
				return nil, err
			}
			nd, err = a.addDir(child, cit, chas, cde)
		} else {
			nd, err = a.addNode(child, it.Node(), nil)
		}
		if err != nil {
			return nil, err
		}
		if name == "" {
			// An unnamed entry (stdin inside -w) is linked under its CID.
			name = nd.Cid().String()
		}
		if cde != nil {
			de.children[name] = cde
			subdirs = append(subdirs, name)
		}
		if err := d.AddChild(a.ctx, name, nd); err != nil {
			return nil, err
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	nd, err := d.GetNode()
	if err != nil {
		return nil, err
	}
	if err := a.dag.Add(a.ctx, nd); err != nil {
		return nil, err
	}
	de.node = nd
	de.order, err = a.dirOrder(d, nd, subdirs)
	if err != nil {
		return nil, err
	}
	return nd, nil
}

// visit updates the metadata the next node stores, when preserving.
func (a *Adder) visit(f files.Node) error {
	if err := a.ctx.Err(); err != nil {
		return err
	}
	if a.o.PreserveMtime {
		a.fileMtime = nodeMtime(f)
	}
	if a.o.PreserveMode {
		a.fileMode = nodeMode(f)
	}
	return nil
}

// dirOrder is the order Kubo emits subdirectory events in: the
// directory's link order (by name for a plain directory, shard order for
// a HAMT).
func (a *Adder) dirOrder(d uio.Directory, nd ipld.Node, subdirs []string) ([]string, error) {
	if len(subdirs) < 2 {
		return subdirs, nil
	}
	fsn, err := ft.ExtractFSNode(nd)
	if err != nil || fsn.Type() != ft.THAMTShard {
		sort.Strings(subdirs)
		return subdirs, nil
	}
	want := map[string]bool{}
	for _, s := range subdirs {
		want[s] = true
	}
	var out []string
	err = d.ForEachLink(a.ctx, func(l *ipld.Link) error {
		if want[l.Name] {
			out = append(out, l.Name)
		}
		return nil
	})
	return out, err
}

func nodeMode(f files.Node) os.FileMode {
	if s, ok := f.(interface{ Mode() os.FileMode }); ok {
		return s.Mode()
	}
	return 0
}

func nodeMtime(f files.Node) time.Time {
	if s, ok := f.(interface{ ModTime() time.Time }); ok {
		if t := s.ModTime(); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// topStat is the metadata a top-level entry's events carry.
func topStat(f files.Node) AddEvent {
	var ev AddEvent
	if m := nodeMode(f); m != 0 {
		ev.Mode = "0" + strconv.FormatUint(uint64(m), 8)
	}
	if t := nodeMtime(f); !t.IsZero() {
		ev.Mtime = t.Unix()
		ev.MtimeNsecs = t.Nanosecond()
	}
	return ev
}

func (a *Adder) addSymlink(path string, l *files.Symlink) (ipld.Node, error) {
	sdata, err := ft.SymlinkData(l.Target)
	if err != nil {
		return nil, err
	}
	if !a.fileMtime.IsZero() {
		// Kubo stores mtime on symlinks, never a mode.
		fsn, err := ft.FSNodeFromBytes(sdata)
		if err != nil {
			return nil, err
		}
		fsn.SetModTime(a.fileMtime)
		if sdata, err = fsn.GetBytes(); err != nil {
			return nil, err
		}
	}
	nd := merkledag.NodeWithData(sdata)
	if err := nd.SetCidBuilder(a.st.builder); err != nil {
		return nil, err
	}
	if err := a.dag.Add(a.ctx, nd); err != nil {
		return nil, err
	}
	if !a.o.Silent {
		if err := a.event(nameOr(path, nd), nd); err != nil {
			return nil, err
		}
	}
	return nd, nil
}

// nameOr names an unnamed entry (stdin) by its CID, as Kubo does.
func nameOr(path string, nd ipld.Node) string {
	if path == "" {
		return nd.Cid().String()
	}
	return path
}

// progressReader reports bytes read every 256 KiB and at EOF.
type progressReader struct {
	r     io.Reader
	name  string
	total int64
	last  int64
	emit  func(AddEvent) error
	err   error
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.total += int64(n)
	if p.total-p.last >= 262144 || err == io.EOF {
		p.last = p.total
		if p.err == nil {
			p.err = p.emit(AddEvent{Name: p.name, Bytes: p.total})
		}
	}
	if p.err != nil {
		return n, p.err
	}
	return n, err
}

// infoReader reads through r and keeps the file's path and stat visible
// to the DAG builder (add --nocopy).
type infoReader struct {
	files.FileInfo
	r io.Reader
}

func (x *infoReader) Read(b []byte) (int, error) { return x.r.Read(b) }

// ErrInputCut fails an import whose input ended before its end (an
// upload cut mid-file).
var ErrInputCut = errors.New("unexpected EOF")

// cutGuard turns io.ErrUnexpectedEOF from an input into ErrInputCut: the
// chunkers take io.ErrUnexpectedEOF from their reader for the normal end
// of a short last chunk, which would store a cut file as a whole one.
type cutGuard struct{ r io.Reader }

func (g cutGuard) Read(b []byte) (int, error) {
	n, err := g.r.Read(b)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = ErrInputCut
	}
	return n, err
}

func (a *Adder) addFile(path string, f files.File) (ipld.Node, error) {
	var r io.Reader = cutGuard{f}
	if a.o.Progress && !a.o.Silent {
		r = &progressReader{r: r, name: path, emit: a.emit}
	}
	if fi, ok := f.(files.FileInfo); ok && a.o.NoCopy {
		// The DAG builder finds the file's path on its reader.
		r = &infoReader{FileInfo: fi, r: r}
	}
	spl, err := chunker.FromString(r, a.st.chunker)
	if err != nil {
		return nil, err
	}
	params := helpers.DagBuilderParams{
		Dagserv:     a.dag,
		RawLeaves:   a.st.rawLeaves,
		Maxlinks:    a.st.maxLinks,
		CidBuilder:  a.st.builder,
		FileMode:    a.fileMode,
		FileModTime: a.fileMtime,
		NoCopy:      a.o.NoCopy,
	}
	db, err := params.New(spl)
	if err != nil {
		return nil, err
	}
	var nd ipld.Node
	if a.o.Trickle {
		nd, err = trickle.Layout(db)
	} else {
		nd, err = balancedLayout(db, spl, a.o.NoCopy)
	}
	if err != nil {
		return nil, err
	}
	if !a.o.Silent {
		// A top-level file's event acknowledges it: make it durable
		// first. Files inside a directory are acknowledged by the
		// directory's event (finishTop), which saves an fsync per file.
		if !a.o.Wrap && !strings.Contains(path, "/") {
			if err := a.sync(); err != nil {
				return nil, err
			}
		}
		if err := a.event(nameOr(path, nd), nd); err != nil {
			return nil, err
		}
	}
	return nd, nil
}
