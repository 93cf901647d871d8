// dagwriter.go: DAG services used while importing: one that queues puts in
// a storage batch (durable at Sync), and one that only hashes.

package node

import (
	"cairn/node/unixfs"
	"context"
	"errors"
	"sync"

	"fmt"

	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/verifcid"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// batchDAG writes nodes through a write session: Add returns once the
// block is queued; Sync makes everything added so far durable. Reads fall
// back to waiting for the session when a node was added but is not
// committed yet.
type batchDAG struct {
	bs   *Blockstore
	sess *WriteSession
	// ctx is the command's: boxo's DAG builders pass context.TODO to
	// Add, so a command that stops (client gone) stops here.
	ctx context.Context
	unixfs.Handback
}

func newBatchDAG(ctx context.Context, n *Node, s *WriteSession) *batchDAG {
	return &batchDAG{bs: n.Blocks, sess: s, ctx: ctx}
}

var _ ipld.DAGService = (*batchDAG)(nil)

func (d *batchDAG) Add(ctx context.Context, n ipld.Node) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, n.Cid()); err != nil {
		return err
	}
	// The store holds a leaf's bytes until their transaction ends.
	return d.sess.PutAsyncThen(ctx, n, d.Take(n))
}

func (d *batchDAG) AddMany(ctx context.Context, ns []ipld.Node) error {
	for _, n := range ns {
		if err := d.Add(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

func (d *batchDAG) Get(ctx context.Context, c cid.Cid) (ipld.Node, error) {
	b, err := d.bs.Get(ctx, c)
	if ipld.IsNotFound(err) {
		if serr := d.sess.Sync(); serr != nil {
			return nil, serr
		}
		b, err = d.bs.Get(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	return decodeNode(b)
}

// decodeNode decodes the codecs an import writes.
func decodeNode(b blocks.Block) (ipld.Node, error) {
	switch b.Cid().Type() {
	case cid.DagProtobuf:
		return merkledag.DecodeProtobufBlock(b)
	case cid.Raw:
		return merkledag.DecodeRawBlock(b)
	}
	return nil, fmt.Errorf("unsupported codec 0x%x", b.Cid().Type())
}

func (d *batchDAG) GetMany(ctx context.Context, cs []cid.Cid) <-chan *ipld.NodeOption {
	out := make(chan *ipld.NodeOption, len(cs))
	for _, c := range cs {
		n, err := d.Get(ctx, c)
		out <- &ipld.NodeOption{Node: n, Err: err}
	}
	close(out)
	return out
}

func (d *batchDAG) Remove(context.Context, cid.Cid) error {
	return errors.New("import DAG: remove not supported")
}

func (d *batchDAG) RemoveMany(context.Context, []cid.Cid) error {
	return errors.New("import DAG: remove not supported")
}

// hashOnlyDAG stores nothing durable: it keeps in memory only nodes that
// may be read back during an import (nodes with links, and small ones such
// as empty directories), so that only-hash of a large file needs no memory
// for its leaves.
type hashOnlyDAG struct {
	ctx   context.Context // the command's, as batchDAG's
	mu    sync.Mutex
	nodes map[cid.Cid]ipld.Node
	unixfs.Handback
}

func newHashOnlyDAG(ctx context.Context) *hashOnlyDAG {
	return &hashOnlyDAG{ctx: ctx, nodes: map[cid.Cid]ipld.Node{}}
}

var _ ipld.DAGService = (*hashOnlyDAG)(nil)

func (d *hashOnlyDAG) Add(_ context.Context, n ipld.Node) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, n.Cid()); err != nil {
		return err
	}
	free := d.Take(n)
	if !d.keeps(n) {
		if free != nil {
			free() // dropped: nothing holds its bytes
		}
		return nil
	}
	d.mu.Lock()
	d.nodes[n.Cid()] = n
	d.mu.Unlock()
	return nil
}

// keeps reports whether Add keeps n: file leaves larger than 4 KiB are
// never read back.
func (d *hashOnlyDAG) keeps(n ipld.Node) bool {
	return len(n.Links()) > 0 || len(n.RawData()) <= 4096
}

func (d *hashOnlyDAG) AddMany(ctx context.Context, ns []ipld.Node) error {
	for _, n := range ns {
		_ = d.Add(ctx, n)
	}
	return nil
}

func (d *hashOnlyDAG) Get(_ context.Context, c cid.Cid) (ipld.Node, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n, ok := d.nodes[c]; ok {
		return n, nil
	}
	return nil, ipld.ErrNotFound{Cid: c}
}

func (d *hashOnlyDAG) GetMany(ctx context.Context, cs []cid.Cid) <-chan *ipld.NodeOption {
	out := make(chan *ipld.NodeOption, len(cs))
	for _, c := range cs {
		n, err := d.Get(ctx, c)
		out <- &ipld.NodeOption{Node: n, Err: err}
	}
	close(out)
	return out
}

func (d *hashOnlyDAG) Remove(_ context.Context, c cid.Cid) error {
	d.mu.Lock()
	delete(d.nodes, c)
	d.mu.Unlock()
	return nil
}

func (d *hashOnlyDAG) RemoveMany(ctx context.Context, cs []cid.Cid) error {
	for _, c := range cs {
		_ = d.Remove(ctx, c)
	}
	return nil
}
