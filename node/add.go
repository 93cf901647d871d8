// add.go: importing files and directories as UnixFS DAGs, with the layout
// choices that give Kubo's CIDs.

package node

import (
	"cairn/node/unixfs"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	pathpkg "path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
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
	// pinned, right after the entry's events (add --to-files); its error
	// ends the answer there.
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
//
// A multipart body may send a directory's entries in several runs,
// interleaved with other directories' (kubo-rpc-client's addAll sends
// test-dir/a/1, test-dir/b/2, test-dir/a/3 without directory parts), and
// Kubo's adder merges them. So the directories of a request are kept as
// links (name, CID, size) until the whole body has arrived, and only then
// built: any order of parts gives the tree of the sorted upload. File
// contents are never kept; a file is imported while its part streams and
// its directory keeps the link to its root. The same path twice is an
// error found before any result is sent: results (not progress) are held
// until the body is complete, and nothing is pinned before that.
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
	// cur is the top-level entry being imported.
	cur *topEntry
	// sess is the request's write session.
	sess *WriteSession
}

// NewAdder prepares an import; emit receives the events in Kubo's order.
func (u *UnixFS) NewAdder(ctx context.Context, o AddOptions, emit func(AddEvent) error) (*Adder, error) {
	n := u.n
	st, err := resolveImport(n.Config().ImportSettings(), &o)
	if err != nil {
		return nil, err
	}
	if exp := n.Config().Experimental; o.NoCopy && !exp.FilestoreEnabled && !exp.UrlstoreEnabled {
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
		a.dag = newHashOnlyDAG(ctx)
		a.sync = func() error { return nil }
	}
	return a, nil
}

// begin opens the request's write session: its blocks are safe from a
// concurrent GC until the pins are recorded, and removed again if the
// request fails.
func (a *Adder) begin() {
	if a.o.OnlyHash {
		return
	}
	a.sess = a.n.Storage().BeginWrite()
	a.dag = newBatchDAG(a.ctx, a.n, a.sess)
	if a.o.NoCopy || a.o.Fscache {
		a.dag = &refDAG{batchDAG: newBatchDAG(a.ctx, a.n, a.sess), fscache: a.o.Fscache}
	}
	a.sync = a.sess.Sync
}

// end closes the session; after a failure it first removes the blocks
// the request stored.
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

// topEntry is one top-level entry of the request (with Wrap, the
// wrapping directory), held until the body is complete.
type topEntry struct {
	name  string
	meta  AddEvent // the metadata every event of the entry reports
	root  ipld.Node
	dir   *treeDir // nil for a file or symlink
	files []fileEvent
}

// fileEvent is a held file or symlink result.
type fileEvent struct {
	name string
	c    cid.Cid
	size uint64
}

// treeDir is a directory of the import: links while the body arrives,
// its node once built.
type treeDir struct {
	path  string
	mode  os.FileMode
	mtime time.Time
	links map[string]*ipld.Link // files and symlinks
	dirs  map[string]*treeDir
	node  ipld.Node
	order []string // subdirectory names in event order, set by build
}

func (a *Adder) newTreeDir(path string) *treeDir {
	return &treeDir{path: path, mode: a.fileMode, mtime: a.fileMtime,
		links: map[string]*ipld.Link{}, dirs: map[string]*treeDir{}}
}

func (d *treeDir) has(name string) bool {
	_, f := d.links[name]
	_, s := d.dirs[name]
	return f || s
}

// AddAll imports every top-level entry of root (each on its own, or all
// under one wrapping directory) and returns the roots imported. Nothing
// is pinned and no result is emitted until root's last entry has arrived.
func (a *Adder) AddAll(root files.Directory) (roots []cid.Cid, err error) {
	a.begin()
	defer func() {
		if eerr := a.end(err != nil); err == nil {
			err = eerr
		}
	}()
	var tops []*topEntry
	it := root.Entries()
	if a.o.Wrap {
		a.cur = &topEntry{}
		a.cur.dir = a.newTreeDir("")
		if err := a.fillDir(a.cur.dir, it, it.Next()); err != nil {
			return nil, err
		}
		tops = append(tops, a.cur)
	} else {
		for it.Next() {
			name := it.Name()
			a.cur = &topEntry{name: name, meta: topStat(it.Node())}
			if err := a.visit(it.Node()); err != nil {
				return nil, err
			}
			if d, isDir := it.Node().(files.Directory); isDir {
				a.cur.dir = a.newTreeDir(name)
				dit := d.Entries()
				err = a.fillDir(a.cur.dir, dit, dit.Next())
			} else {
				a.cur.root, err = a.addLeaf(name, it.Node())
			}
			if err != nil {
				return nil, err
			}
			tops = append(tops, a.cur)
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		if len(tops) == 0 {
			return nil, errors.New("expected a file argument")
		}
	}
	// The body is complete: build the directories, make it all durable,
	// pin, then answer.
	for _, t := range tops {
		if t.dir != nil {
			if t.root, err = a.build(t.dir); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range tops {
		roots = append(roots, t.root.Cid())
	}
	if a.o.Pin && !a.o.OnlyHash {
		// The pins follow the blocks into the store: one sync for both.
		if err := a.n.Pins().AddRootsAfter(a.ctx, a.sess, a.o.PinName, roots...); err != nil {
			return nil, err
		}
	}
	if err := a.sync(); err != nil {
		return nil, err
	}
	if err := a.end(false); err != nil {
		return nil, err
	}
	for _, t := range tops {
		if err := a.emitTop(t); err != nil {
			return nil, err
		}
		// As Kubo: an entry's events, then its MFS copy, so that a
		// destination that fails ends the answer after them (the entry
		// stays stored and pinned).
		if a.o.AfterTop != nil && !a.o.Wrap {
			if err := a.o.AfterTop(t.name, t.root); err != nil {
				return nil, err
			}
		}
	}
	return roots, nil
}

// emitTop emits an entry's results as Kubo orders them: its files in
// upload order, then its directories post-order, children by link order.
func (a *Adder) emitTop(t *topEntry) error {
	for _, f := range t.files {
		if err := a.event(t.meta, f.name, f.c, f.size); err != nil {
			return err
		}
	}
	if t.dir == nil {
		return nil
	}
	return a.emitDirs(t.meta, t.dir)
}

func (a *Adder) emitDirs(meta AddEvent, d *treeDir) error {
	for _, k := range d.order {
		if err := a.emitDirs(meta, d.dirs[k]); err != nil {
			return err
		}
	}
	size, err := d.node.Size()
	if err != nil {
		return err
	}
	return a.event(meta, d.path, d.node.Cid(), size)
}

func (a *Adder) event(meta AddEvent, name string, c cid.Cid, size uint64) error {
	h := c.String()
	if a.o.Encode != nil {
		h = a.o.Encode(c)
	}
	meta.Name, meta.Hash, meta.Size = name, h, strconv.FormatUint(size, 10)
	return a.emit(meta)
}

// addLeaf imports a file or symlink and holds its result.
func (a *Adder) addLeaf(path string, f files.Node) (ipld.Node, error) {
	var nd ipld.Node
	var err error
	switch f := f.(type) {
	case *files.Symlink:
		nd, err = a.addSymlink(f)
	case files.File:
		nd, err = a.addFile(path, f)
	default:
		return nil, errors.New("unknown file type")
	}
	if err != nil {
		return nil, err
	}
	if !a.o.Silent {
		size, err := nd.Size()
		if err != nil {
			return nil, err
		}
		a.cur.files = append(a.cur.files, fileEvent{name: nameOr(path, nd), c: nd.Cid(), size: size})
	}
	return nd, nil
}

func (a *Adder) newDir(mode os.FileMode, mtime time.Time) (uio.Directory, error) {
	opts := a.st.dirOptions()
	if mode != 0 || !mtime.IsZero() {
		opts = append(opts, uio.WithStat(mode, mtime))
	}
	d, err := uio.NewDirectory(dirDAG{a.dag}, opts...)
	if err != nil {
		return nil, err
	}
	d.SetHAMTShardingSize(a.st.hamtSize)
	return d, nil
}

// fillDir records the entries of one run of directory d, whose iterator
// was already advanced once (has is that first Next's result), so that
// callers can peek for emptiness as Kubo's adder does. A directory met
// again continues where it was left; a name met again otherwise is
// Kubo's ErrDirEntryExists.
func (a *Adder) fillDir(d *treeDir, it files.DirIterator, has bool) error {
	for ; has; has = it.Next() {
		name := it.Name()
		if name == "." || name == ".." || strings.Contains(name, "/") {
			return fmt.Errorf("invalid entry name %q", name)
		}
		child := pathpkg.Join(d.path, name)
		if sub, isDir := it.Node().(files.Directory); isDir {
			if _, isFile := d.links[name]; isFile {
				return ErrDirEntryExists
			}
			cit := sub.Entries()
			chas := cit.Next()
			cd := d.dirs[name]
			if cd == nil {
				if !chas {
					if err := cit.Err(); err != nil {
						return err
					}
					if !a.o.EmptyDirs {
						continue
					}
				}
				if err := a.visit(sub); err != nil {
					return err
				}
				cd = a.newTreeDir(child)
				d.dirs[name] = cd
			} else if err := a.visit(sub); err != nil {
				return err
			}
			if err := a.fillDir(cd, cit, chas); err != nil {
				return err
			}
			continue
		}
		if name != "" && d.has(name) {
			return ErrDirEntryExists
		}
		if err := a.visit(it.Node()); err != nil {
			return err
		}
		nd, err := a.addLeaf(child, it.Node())
		if err != nil {
			return err
		}
		if name == "" {
			// An unnamed entry (stdin inside -w) is linked under its CID.
			name = nd.Cid().String()
			if d.has(name) {
				return ErrDirEntryExists
			}
		}
		lnk, err := ipld.MakeLink(nd)
		if err != nil {
			return err
		}
		d.links[name] = lnk
	}
	return it.Err()
}

// build makes d's node and its subdirectories' (children first), stores
// them, and keeps in d only what the events need.
func (a *Adder) build(d *treeDir) (ipld.Node, error) {
	dir, err := a.newDir(d.mode, d.mtime)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(d.links)+len(d.dirs))
	var subdirs []string
	for name := range d.links {
		names = append(names, name)
	}
	for name := range d.dirs {
		names = append(names, name)
		subdirs = append(subdirs, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var nd ipld.Node
		if sub := d.dirs[name]; sub != nil {
			if nd, err = a.build(sub); err != nil {
				return nil, err
			}
		} else {
			nd = &linkNode{l: *d.links[name]}
		}
		if err := dir.AddChild(a.ctx, name, nd); err != nil {
			return nil, err
		}
	}
	d.links = nil
	nd, err := dir.GetNode()
	if err != nil {
		return nil, err
	}
	if err := a.dag.Add(a.ctx, nd); err != nil {
		return nil, err
	}
	d.node = nd
	d.order, err = a.dirOrder(dir, nd, subdirs)
	if err != nil {
		return nil, err
	}
	return nd, nil
}

// linkNode stands for an imported file or symlink while its directory is
// built: the directory needs only the CID and size, which is all an
// import keeps of a file. dirDAG never stores it (the file's own blocks
// were stored when it was imported).
type linkNode struct{ l ipld.Link }

var errLinkNode = errors.New("add: a directory entry's link is not a node")

func (n *linkNode) Cid() cid.Cid                  { return n.l.Cid }
func (n *linkNode) Size() (uint64, error)         { return n.l.Size, nil }
func (n *linkNode) RawData() []byte               { return nil }
func (n *linkNode) String() string                { return n.l.Cid.String() }
func (n *linkNode) Loggable() map[string]any      { return map[string]any{"cid": n.l.Cid} }
func (n *linkNode) Tree(string, int) []string     { return nil }
func (n *linkNode) Copy() ipld.Node               { c := *n; return &c }
func (n *linkNode) Links() []*ipld.Link           { return nil }
func (n *linkNode) Stat() (*ipld.NodeStat, error) { return nil, errLinkNode }
func (n *linkNode) Resolve([]string) (any, []string, error) {
	return nil, nil, errLinkNode
}
func (n *linkNode) ResolveLink([]string) (*ipld.Link, []string, error) {
	return nil, nil, errLinkNode
}

// dirDAG is the DAG service directory builders write to: it skips the
// linkNodes a HAMT shard hands back to it.
type dirDAG struct{ ipld.DAGService }

func (d dirDAG) Add(ctx context.Context, nd ipld.Node) error {
	if _, ok := nd.(*linkNode); ok {
		return nil
	}
	return d.DAGService.Add(ctx, nd)
}

func (d dirDAG) AddMany(ctx context.Context, nds []ipld.Node) error {
	keep := make([]ipld.Node, 0, len(nds))
	for _, nd := range nds {
		if _, ok := nd.(*linkNode); !ok {
			keep = append(keep, nd)
		}
	}
	return d.DAGService.AddMany(ctx, keep)
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

func (a *Adder) addSymlink(l *files.Symlink) (ipld.Node, error) {
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

// inputReader reads an import's input: it stops with ctx's error once
// ctx is done (the client left), and turns io.ErrUnexpectedEOF into cut:
// the chunkers take io.ErrUnexpectedEOF from their reader for the normal
// end of a short last chunk, which would store a cut input as a whole one.
type inputReader struct {
	ctx context.Context
	r   io.Reader
	cut error
}

func (g inputReader) Read(b []byte) (int, error) {
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := g.r.Read(b)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = g.cut
	}
	return n, err
}

func (a *Adder) addFile(path string, f files.File) (ipld.Node, error) {
	var r io.Reader = inputReader{ctx: a.ctx, r: f, cut: ErrInputCut}
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
	lo := a.leafOptions()
	var nd ipld.Node
	if a.o.Trickle {
		nd, err = unixfs.TrickleLayout(db, spl, lo)
	} else {
		nd, err = unixfs.BalancedLayout(db, spl, lo)
	}
	if err != nil {
		return nil, err
	}
	return nd, nil
}

// leafOptions are the leaf settings of this import's files.
func (a *Adder) leafOptions() unixfs.LeafOptions {
	size := unixfs.FixedChunkSize(a.st.chunker)
	o := unixfs.LeafOptions{Raw: a.st.rawLeaves, ChunkSize: size, NoCopy: a.o.NoCopy,
		Window: unixfs.LeafWindow(runtime.GOMAXPROCS(0), size, cmp.Or(a.n.Config().Budget.MemoryMiB, DefaultMemoryMiB))}
	switch d := a.dag.(type) {
	case *hashOnlyDAG:
		o.Handback = d
	case *batchDAG:
		o.Handback = d
	}
	return o
}
