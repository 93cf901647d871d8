// mfs.go: the mutable file system behind the "files" commands, on boxo's
// mfs.
//
// The root CID is kept at /local/filesroot (Kubo's key), which GC marks
// from. Every block MFS writes goes through one write session, so a
// running collection keeps it and the StorageMax cap counts it. The
// session is replaced by a fresh one only once the published root covers
// everything written: when no command is in flight and none since the
// last publish ran with flush=false. Until then its blocks stay protected.
//
// Commands that change the tree bracket their work with Begin/end; with
// flush (the default) end publishes the new root durably before
// returning, after the blocks it names are durable.

package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/mfs"
	"github.com/ipfs/boxo/verifcid"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	ipld "github.com/ipfs/go-ipld-format"
)

// MFSNoFlushLimit is how many flush=false commands may run in a row
// before one must flush (Kubo's Internal.MFSNoFlushLimit default).
var MFSNoFlushLimit int64 = 256

// mfsRootKey is where Kubo (and cairn's MFS) keeps the MFS root CID.
var mfsRootKey = ds.NewKey("/local/filesroot")

// mfsRoots is the published MFS root, as GC sees it.
type mfsRoots struct{ n *Node }

// markLive names the published MFS root, whose whole DAG is live.
func (m mfsRoots) markLive(ctx context.Context, walk func(cid.Cid) error, _ func(cid.Cid)) error {
	v, err := m.n.Store.Datastore().Get(ctx, mfsRootKey)
	if errors.Is(err, ds.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	c, err := cid.Cast(v)
	if err != nil {
		return fmt.Errorf("MFS root record: %w", err)
	}
	if err := walk(c); err != nil {
		return fmt.Errorf("MFS root %s: %w", c, err)
	}
	return nil
}

type mfsState struct {
	mu sync.Mutex
	m  *MFS
}

// MFS is the node's mutable file system.
type MFS struct {
	n    *Node
	root *mfs.Root
	dag  *mfsDAG

	mu        sync.Mutex // publishing and session replacement
	active    int        // commands between Begin and end
	dirty     bool       // a flush=false command ended since the last publish
	closed    bool
	published cid.Cid
	noFlush   atomic.Int64
}

// MFS returns the node's file system, loading its root on first use (an
// empty directory when the repo has none yet).
func (n *Node) MFS(ctx context.Context) (*MFS, error) {
	n.mfs.mu.Lock()
	defer n.mfs.mu.Unlock()
	if n.mfs.m != nil {
		return n.mfs.m, nil
	}
	m, err := n.openMFS(ctx)
	if err != nil {
		return nil, err
	}
	n.mfs.m = m
	n.OnClose(m.close)
	return m, nil
}

func (n *Node) openMFS(ctx context.Context) (_ *MFS, err error) {
	d := &mfsDAG{n: n, sess: n.Storage().BeginWrite()}
	defer func() {
		if err != nil {
			_ = d.sess.End()
		}
	}()
	var nd *merkledag.ProtoNode
	v, err := n.Store.Datastore().Get(ctx, mfsRootKey)
	switch {
	case errors.Is(err, ds.ErrNotFound):
		nd = ft.EmptyDirNode()
		if err := d.Add(ctx, nd); err != nil {
			return nil, fmt.Errorf("failure writing filesroot to dagstore: %w", err)
		}
	case err != nil:
		return nil, err
	default:
		c, err := cid.Cast(v)
		if err != nil {
			return nil, fmt.Errorf("MFS root record at %s: %w", mfsRootKey, err)
		}
		got, err := d.Get(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("error loading filesroot from dagservice: %w", err)
		}
		pb, ok := got.(*merkledag.ProtoNode)
		if !ok {
			return nil, merkledag.ErrNotProtobuf
		}
		nd = pb
	}
	opts, err := n.mfsRootOptions()
	if err != nil {
		return nil, err
	}
	// Publishing is done by end, synchronously; the republisher boxo
	// runs for a PubFunc would write stale roots (see publishLocked).
	nopub := func(context.Context, cid.Cid) error { return nil }
	root, err := mfs.NewRoot(context.Background(), d, nd, nopub, nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("failed to initialize MFS root from %s stored at %s: %w", nd.Cid(), mfsRootKey, err)
	}
	m := &MFS{n: n, root: root, dag: d}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.publishLocked(ctx); err != nil {
		_ = root.Close()
		return nil, err
	}
	return m, nil
}

// splitterGen turns a chunker spec into a generator (invalid specs fall
// back to the default, as Kubo's do).
func splitterGen(spec string) chunker.SplitterGen {
	if s, ok := strings.CutPrefix(spec, "size-"); ok {
		if size, err := strconv.ParseInt(s, 10, 64); err == nil && size > 0 {
			return chunker.SizeSplitterGen(size)
		}
	}
	return func(r io.Reader) chunker.Splitter {
		s, err := chunker.FromString(r, spec)
		if err != nil {
			return chunker.DefaultSplitter(r)
		}
		return s
	}
}

// Sync makes every block MFS has written so far durable (and readable
// straight from the store).
func (m *MFS) Sync() error { return m.dag.sync() }

// Begin starts a command that may change the tree; call the returned end
// when it is done. With flush, end publishes the root. flush=false
// commands are limited to MFSNoFlushLimit in a row, with Kubo's error.
func (m *MFS) Begin(flush bool) (end func() error, err error) {
	if flush {
		m.noFlush.Store(0)
	} else {
		if MFSNoFlushLimit > 0 && m.noFlush.Load() >= MFSNoFlushLimit {
			return nil, fmt.Errorf("reached limit of %d unflushed MFS operations. "+
				"To resolve: 1) run 'ipfs files flush' to persist changes, "+
				"2) use --flush=true (default), or "+
				"3) increase Internal.MFSNoFlushLimit in config", MFSNoFlushLimit)
		}
		m.noFlush.Add(1)
	}
	m.mu.Lock()
	m.active++
	m.mu.Unlock()
	var once sync.Once
	return func() error {
		err := errors.New("mfs: end called twice")
		once.Do(func() { err = m.end(flush) })
		return err
	}, nil
}

func (m *MFS) end(flush bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active--
	var err error
	if flush {
		m.noFlush.Store(0)
		if _, err = m.publishLocked(context.Background()); err == nil {
			m.dirty = false
		}
	} else {
		m.dirty = true
	}
	if m.active == 0 && !m.dirty && !m.closed {
		if rerr := m.dag.rotate(); err == nil {
			err = rerr
		}
	}
	return err
}

// publishLocked stores the current root CID at /local/filesroot once the
// blocks it names are durable. The root is recomputed from the whole
// tree (boxo's per-update CIDs can be stale when directories change
// concurrently; the directory caches are not).
func (m *MFS) publishLocked(ctx context.Context) (cid.Cid, error) {
	nd, err := m.root.GetDirectory().GetNode()
	if err != nil {
		return cid.Undef, err
	}
	if err := m.dag.sync(); err != nil {
		return cid.Undef, err
	}
	c := nd.Cid()
	if c.Equals(m.published) {
		return c, nil
	}
	if err := m.n.Store.Datastore().Put(ctx, mfsRootKey, c.Bytes()); err != nil {
		return cid.Undef, err
	}
	m.published = c
	return c, nil
}

// Published returns the root CID last stored at /local/filesroot.
func (m *MFS) Published() cid.Cid {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.published
}

func (m *MFS) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	_, err := m.publishLocked(context.Background())
	if cerr := m.root.Close(); err == nil {
		err = cerr
	}
	if eerr := m.dag.end(); err == nil {
		err = eerr
	}
	return err
}

// mfsDAG is the DAG service MFS writes through: the current write
// session for writes, the node's blocks (and not yet committed session
// blocks) for reads.
type mfsDAG struct {
	n    *Node
	mu   sync.RWMutex
	sess *WriteSession
}

var _ ipld.DAGService = (*mfsDAG)(nil)

func (d *mfsDAG) Add(ctx context.Context, nd ipld.Node) error {
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, nd.Cid()); err != nil {
		return err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	// A block kept as a filestore reference (add --nocopy --to-files)
	// is not copied into the store.
	if has, err := d.n.Blocks.Has(ctx, nd.Cid()); err == nil && !has {
		if ref, err := d.n.Storage().FileManager().Has(ctx, nd.Cid()); err == nil && ref {
			d.sess.record(nd.Cid().Hash())
			return nil
		}
	}
	return d.sess.PutAsync(ctx, nd)
}

func (d *mfsDAG) AddMany(ctx context.Context, ns []ipld.Node) error {
	for _, nd := range ns {
		if err := d.Add(ctx, nd); err != nil {
			return err
		}
	}
	return nil
}

func (d *mfsDAG) Get(ctx context.Context, c cid.Cid) (ipld.Node, error) {
	// Local first (a node of this session may still be queued): on an
	// online node a miss would otherwise wait for the network.
	nd, err := d.n.DAG.Get(OfflineContext(ctx), c)
	if ipld.IsNotFound(err) {
		if serr := d.sync(); serr != nil {
			return nil, serr
		}
		nd, err = d.n.DAG.Get(ctx, c)
	}
	return nd, err
}

func (d *mfsDAG) GetMany(ctx context.Context, cs []cid.Cid) <-chan *ipld.NodeOption {
	out := make(chan *ipld.NodeOption, len(cs))
	for _, c := range cs {
		nd, err := d.Get(ctx, c)
		out <- &ipld.NodeOption{Node: nd, Err: err}
	}
	close(out)
	return out
}

// Remove is a no-op: what MFS no longer references is garbage collected.
func (d *mfsDAG) Remove(context.Context, cid.Cid) error { return nil }

// RemoveMany is a no-op, as Remove.
func (d *mfsDAG) RemoveMany(context.Context, []cid.Cid) error { return nil }

func (d *mfsDAG) sync() error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.sess.Sync()
}

// rotate ends the session (its blocks durable) and starts a new one.
func (d *mfsDAG) rotate() error {
	d.mu.Lock()
	old := d.sess
	d.sess = d.n.Storage().BeginWrite()
	d.mu.Unlock()
	return old.End()
}

func (d *mfsDAG) end() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sess.End()
}

// ChrootMFS makes c the MFS root and returns the root it replaced
// (cid.Undef when the repo had none): files chroot, the way back from a
// root that no longer loads. c must be a UnixFS directory (or sharded
// directory) stored here, or the empty directory, which is stored if
// missing. It refuses once this process has the MFS open (files chroot
// runs on a stopped repo).
func (n *Node) ChrootMFS(ctx context.Context, c cid.Cid) (cid.Cid, error) {
	n.mfs.mu.Lock()
	defer n.mfs.mu.Unlock()
	if n.mfs.m != nil {
		return cid.Undef, errors.New("the MFS is in use: files chroot runs only while the daemon is stopped")
	}
	empty := ft.EmptyDirNode()
	has, err := n.Blocks.Has(ctx, c)
	if err != nil {
		return cid.Undef, fmt.Errorf("checking if new root exists: %w", err)
	}
	switch {
	case !has && !c.Equals(empty.Cid()):
		return cid.Undef, fmt.Errorf("new root %s does not exist locally; fetch it first with 'ipfs block get'", c)
	case !has:
		if err := n.DAG.Add(ctx, empty); err != nil {
			return cid.Undef, err
		}
	default:
		blk, err := n.Blocks.Get(ctx, c)
		if err != nil {
			return cid.Undef, fmt.Errorf("reading new root block: %w", err)
		}
		pb, err := merkledag.DecodeProtobuf(blk.RawData())
		if err != nil {
			return cid.Undef, fmt.Errorf("new root is not a valid dag-pb node: %w", err)
		}
		fsn, err := ft.FSNodeFromBytes(pb.Data())
		if err != nil {
			return cid.Undef, fmt.Errorf("new root is not a valid UnixFS node: %w", err)
		}
		if t := fsn.Type(); t != ft.TDirectory && t != ft.THAMTShard {
			return cid.Undef, fmt.Errorf("new root must be a directory, got %s", t)
		}
	}
	old := cid.Undef
	v, err := n.Store.Datastore().Get(ctx, mfsRootKey)
	switch {
	case err == nil:
		if oc, err := cid.Cast(v); err == nil {
			old = oc
		}
	case !errors.Is(err, ds.ErrNotFound):
		return cid.Undef, fmt.Errorf("reading current MFS root: %w", err)
	}
	if err := n.Store.Datastore().Put(ctx, mfsRootKey, c.Bytes()); err != nil {
		return cid.Undef, fmt.Errorf("writing new MFS root: %w", err)
	}
	return old, nil
}
