// filestore.go: blocks whose bytes stay in files on the daemon's disk (add
// --nocopy) or behind URLs (urlstore), as Kubo's filestore keeps them.
//
// A reference is one datastore record under /filestore/<multihash key>
// (boxo's filestore.FileManager format: path relative to the parent of the
// repo directory, offset, size). Reads of a block the block store lacks
// fall back to its reference (Blockstore, blockstore.go), and the bytes
// read are checked against the CID, so a changed file is an error, never
// wrong data. References are garbage collected like blocks (gc.go).

package node

import (
	"context"
	"path/filepath"
	"strings"

	dshelp "github.com/ipfs/boxo/datastore/dshelp"
	"github.com/ipfs/boxo/filestore"
	"github.com/ipfs/boxo/filestore/posinfo"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
)

// FilestoreRoot is the directory nocopy files must be under: the parent
// of the repo directory, as in Kubo.
func (s *Storage) FilestoreRoot() string { return filepath.Dir(s.n.Repo) }

// FileManager returns boxo's reference manager over the node's datastore,
// allowing files and URLs as the config says now.
func (s *Storage) FileManager() *filestore.FileManager {
	n := s.n
	fm := filestore.NewFileManager(n.Store.Datastore(), s.FilestoreRoot())
	exp := n.Config().Experimental
	fm.AllowFiles = exp.FilestoreEnabled
	fm.AllowUrls = exp.UrlstoreEnabled
	return fm
}

// Filestore returns boxo's Filestore view (the store's blocks plus the
// references), or Kubo's error when both the filestore and the urlstore
// are off.
func (s *Storage) Filestore() (*filestore.Filestore, error) {
	n := s.n
	if exp := n.Config().Experimental; !exp.FilestoreEnabled && !exp.UrlstoreEnabled {
		return nil, ErrFilestoreNotEnabled
	}
	return filestore.NewFilestore(n.Blocks.Blockstore, s.FileManager(), nil), nil
}

// filestoreGet reads c through its reference; ok is false when there is
// none.
func (n *Node) filestoreGet(ctx context.Context, c cid.Cid) (data []byte, ok bool, err error) {
	fm := n.Storage().FileManager()
	has, err := fm.Has(ctx, c)
	if err != nil || !has {
		return nil, false, nil
	}
	blk, err := fm.Get(ctx, c)
	if err != nil {
		return nil, true, err
	}
	return blk.RawData(), true, nil
}

// hasBlock reports whether c is stored or referenced, without reading
// referenced bytes.
func (n *Node) hasBlock(ctx context.Context, c cid.Cid) (bool, error) {
	has, err := n.Blocks.Has(ctx, c)
	if err != nil || has {
		return has, err
	}
	return n.Storage().FileManager().Has(ctx, c)
}

// putReference records a filestore reference in a write session, so that
// a running GC keeps it. An existing block or reference is kept as is.
func (s *WriteSession) putReference(ctx context.Context, fn *posinfo.FilestoreNode) error {
	s.record(fn.Cid().Hash())
	has, err := s.n.hasBlock(ctx, fn.Cid())
	if err != nil || has {
		return err
	}
	return s.n.Storage().FileManager().Put(ctx, fn)
}

// refDAG is the DAG service of a --nocopy or --fscache add: leaves that
// reference files become filestore records, and with fscache blocks
// already referenced are not stored again.
type refDAG struct {
	*batchDAG
	fscache bool
}

func (d *refDAG) Add(ctx context.Context, nd ipld.Node) error {
	if fn, ok := nd.(*posinfo.FilestoreNode); ok {
		return d.sess.putReference(ctx, fn)
	}
	if d.fscache {
		if has, err := d.sess.n.Storage().FileManager().Has(ctx, nd.Cid()); err == nil && has {
			d.sess.record(nd.Cid().Hash())
			return nil
		}
	}
	return d.batchDAG.Add(ctx, nd)
}

func (d *refDAG) AddMany(ctx context.Context, ns []ipld.Node) error {
	for _, nd := range ns {
		if err := d.Add(ctx, nd); err != nil {
			return err
		}
	}
	return nil
}

// filestorePrefix is the datastore prefix of references.
const filestorePrefix = "/filestore/"

// forEachReference lists the multihashes of all references (read in
// chunks by the datastore).
func (n *Node) forEachReference(ctx context.Context, fn func(key ds.Key, h mh.Multihash) error) error {
	res, err := n.Store.Datastore().Query(ctx, dsq.Query{Prefix: filestorePrefix, KeysOnly: true})
	if err != nil {
		return err
	}
	defer res.Close()
	for r := range res.Next() {
		if r.Error != nil {
			return r.Error
		}
		h, err := dshelp.DsKeyToMultihash(ds.RawKey(strings.TrimPrefix(r.Key, filestorePrefix[:len(filestorePrefix)-1])))
		if err != nil {
			continue
		}
		if err := fn(ds.RawKey(r.Key), h); err != nil {
			return err
		}
	}
	return nil
}

// sweepReferences deletes the references a collection did not mark, in
// batches taken under the mark lock (as sweep does for blocks).
func (n *Node) sweepReferences(ctx context.Context, removed func(key []byte, size int) error) error {
	type ref struct {
		key ds.Key
		h   mh.Multihash
	}
	var all []ref
	err := n.forEachReference(ctx, func(k ds.Key, h mh.Multihash) error {
		all = append(all, ref{k, h})
		return nil
	})
	if err != nil || len(all) == 0 {
		return err
	}
	g := &n.Storage().gc
	for len(all) > 0 {
		chunk := all
		if len(chunk) > 1024 {
			chunk = chunk[:1024]
		}
		all = all[len(chunk):]
		b, err := n.Store.Datastore().Batch(ctx)
		if err != nil {
			return err
		}
		var dead []ref
		g.mu.Lock()
		for _, r := range chunk {
			if !g.bloom.Has(r.h) {
				dead = append(dead, r)
				b.Delete(ctx, r.key)
			}
		}
		err = b.Commit(ctx)
		g.mu.Unlock()
		if err != nil {
			return err
		}
		for _, r := range dead {
			if err := removed(r.h, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// FilestoreDups calls fn for every referenced block that the block store
// also holds.
func (s *Storage) FilestoreDups(ctx context.Context, fn func(c cid.Cid) error) error {
	n := s.n
	return n.forEachReference(ctx, func(_ ds.Key, h mh.Multihash) error {
		c := cid.NewCidV1(cid.Raw, h)
		has, err := n.Blocks.Has(ctx, c)
		if err != nil || !has {
			return err
		}
		return fn(c)
	})
}
