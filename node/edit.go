// edit.go: running DAG builders and editors (boxo's importer, dagutils'
// editor) against a write session, so that what they store is seen by GC
// and the StorageMax cap, and removed again if they fail.

package node

import (
	"context"

	ipld "github.com/ipfs/go-ipld-format"
)

// DAG returns a DAG service that stores through the session (durable at
// Sync or End) and reads from the store.
func (s *WriteSession) DAG() ipld.DAGService { return newBatchDAG(context.Background(), s.n, s) }

// Edit runs fn with a DAG service writing through a new write session.
// If fn fails, the blocks it stored are removed; otherwise they are
// durable when Edit returns.
func (d *Dag) Edit(ctx context.Context, fn func(ds ipld.DAGService) error) (err error) {
	n := d.n
	s := n.Storage().BeginWrite()
	defer func() {
		if err != nil {
			_ = s.Rollback(context.WithoutCancel(ctx))
		}
		if eerr := s.End(); err == nil {
			err = eerr
		}
	}()
	return fn(newBatchDAG(ctx, n, s))
}
