// node.go: the running node: New and Close.

package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"cairn/node/config"
	"cairn/node/p2p"
	"cairn/storage"

	"github.com/ipfs/boxo/ipld/merkledag"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Node is an open repo with everything the commands use. It is safe for
// concurrent use; Close stops what New started and waits for it.
type Node struct {
	Repo string
	// clock, when set (tests), is the node's time instead of time.Now
	// (clock.go).
	clock      func() time.Time
	clockState clockState
	// cfg is the config file and the config in effect, read through
	// Config; every change of either goes through it.
	cfg *config.Store

	Store *storage.Store
	// Blocks is the store's blocks, with reads falling back to filestore
	// references (blockstore.go).
	Blocks *Blockstore
	// DAG reads and writes IPLD nodes through the local blockstore and,
	// once StartNet ran, bitswap.
	DAG ipld.DAGService
	// Net is the network layer (nil while offline; see StartNet).
	Net *p2p.Net
	// online is the node's own state while Net runs (net.go).
	online *online

	PeerID  peer.ID
	PrivKey crypto.PrivKey

	lock *RepoLock

	mfs mfsState

	facets

	closeOnce sync.Once
	closeErr  error
	onClose   []func() error
	mu        sync.Mutex
}

// Options tune New.
type Options struct {
	// Store options; nil means defaults.
	Store *storage.Options
	// CompactIfNeeded rewrites the store file first when its free pages
	// pass storage's threshold (more than half the index file and 4 MiB).
	CompactIfNeeded bool
	// Log receives one line per notable start-up event (may be nil).
	Log func(format string, a ...any)
	// Config is the repo's config as the caller read it just before
	// (config.ReadDoc, config.Decode), so that New need not read it again;
	// nil: New reads it.
	Config *config.Config
}

// New opens the repo at dir, taking its lock.
func New(dir string, opts *Options) (*Node, error) {
	if opts == nil {
		opts = &Options{}
	}
	if !IsInitialized(dir) {
		return nil, fmt.Errorf("%w at %s: please run 'cairn init'", ErrNoRepo, dir)
	}
	lk, err := LockRepo(dir)
	if err != nil {
		return nil, err
	}
	n := &Node{Repo: dir, lock: lk}
	n.initFacets()
	n.loadClock()
	if err := n.open(opts); err != nil {
		lk.Unlock()
		return nil, err
	}
	return n, nil
}

func (n *Node) open(opts *Options) error {
	cfg := opts.Config
	if cfg == nil {
		doc, err := config.ReadDoc(n.Repo)
		if err != nil {
			return err
		}
		if cfg, err = config.Decode(doc); err != nil {
			return err
		}
	}
	n.cfg = config.NewStore(n.Repo, cfg, checkNetConfig)
	if err := n.loadIdentity(); err != nil {
		return err
	}
	if opts.Log != nil {
		for _, err := range CheckKeystore(n.Repo) {
			opts.Log("WARNING: %v", err)
		}
	}
	path := filepath.Join(n.Repo, storage.FileName)
	if opts.CompactIfNeeded {
		if err := compactIfNeeded(path, opts); err != nil {
			return err
		}
	}
	so := storage.Options{}
	if opts.Store != nil {
		so = *opts.Store
	}
	if so.Log == nil && opts.Log != nil {
		so.Log = opts.Log // a migration's progress
	}
	if so.MergeDone == nil {
		// A merge of index runs churns a few MiB of heap for seconds;
		// hand the pages back once it ends rather than keep them.
		so.MergeDone = debug.FreeOSMemory
	}
	st, err := storage.Open(path, &so)
	if err != nil {
		return err
	}
	n.Store = st
	n.Blocks = &Blockstore{Blockstore: st.Blockstore(), n: n}
	n.DAG = merkledag.NewDAGService(n.localBlockService())
	return nil
}

func (n *Node) loadIdentity() error {
	pid, sk, err := n.Config().Identity.Keys()
	if err != nil {
		return err
	}
	n.PeerID, n.PrivKey = pid, sk
	return nil
}

// OnClose registers fn to run (in reverse order) when the node closes.
func (n *Node) OnClose(fn func() error) {
	n.mu.Lock()
	n.onClose = append(n.onClose, fn)
	n.mu.Unlock()
}

// Close stops the node, flushes storage and releases the repo lock.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.mu.Lock()
		fns := n.onClose
		n.mu.Unlock()
		var errs []error
		for i := len(fns) - 1; i >= 0; i-- {
			errs = append(errs, fns[i]())
		}
		if n.Store != nil {
			errs = append(errs, n.Store.Close())
		}
		if now := n.now(); n.checkClock(now) == nil {
			// Best effort: a repo on a file system gone read-only
			// still closes.
			if err := n.saveClock(now, true); err != nil {
				log.Warnf("saving the time in %s: %v", ClockFile, err)
			}
		}
		errs = append(errs, n.lock.Unlock())
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}

func compactIfNeeded(path string, opts *Options) error {
	st, err := storage.Open(path, &storage.Options{ReadOnly: true})
	if errors.Is(err, storage.ErrNeedsMigration) {
		return nil // the open for writing migrates it into a compact index
	}
	if err != nil {
		return err
	}
	stat, err := st.Stat()
	st.Close()
	if err != nil || !stat.ShouldCompact() {
		return err
	}
	before, after, err := storage.Compact(path)
	if err != nil {
		return err
	}
	if opts.Log != nil {
		opts.Log("compacted %s: %d -> %d bytes", path, before, after)
	}
	return nil
}
