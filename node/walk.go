// walk.go: depth-first walks of stored DAGs with bounded memory.

package node

import (
	"context"

	"github.com/ipfs/go-cid"
)

// MaxWalkSet caps how many inner (linking) nodes a walk remembers to avoid
// visiting a shared subtree twice. Leaves are never remembered. Past the
// cap a walk stays correct but may visit shared subtrees again. At about
// 100 bytes an entry the default costs at most ~25 MiB, reached only by
// DAGs with more than 256k inner nodes (about 11 TB of 256 KiB chunks).
var MaxWalkSet = 256 << 10

// walkSet remembers inner nodes, up to MaxWalkSet.
type walkSet struct {
	m    map[string]struct{}
	full bool
}

func newWalkSet() *walkSet { return &walkSet{m: map[string]struct{}{}} }

// visit reports whether c is new (and records it while there is room).
func (s *walkSet) visit(c cid.Cid) bool {
	k := string(c.Hash())
	if _, ok := s.m[k]; ok {
		return false
	}
	if len(s.m) < MaxWalkSet {
		s.m[k] = struct{}{}
	} else {
		s.full = true
	}
	return true
}

// Walk visits every block reachable from root, depth first, calling
// fn before reading each block (so that fn can mark it first, see gc.go).
// A missing block ends the walk with its ipld.ErrNotFound. Identity CIDs
// are visited but never need storage.
func (d *Dag) Walk(ctx context.Context, root cid.Cid, seen *walkSet, fn func(c cid.Cid) error) error {
	n := d.n
	if seen == nil {
		seen = newWalkSet()
	}
	stack := []cid.Cid{root}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := ctx.Err(); err != nil {
			return err
		}
		if fn != nil {
			if err := fn(c); err != nil {
				return err
			}
		}
		links, err := n.UnixFS().Links(ctx, c)
		if err != nil {
			return err
		}
		if len(links) == 0 {
			continue
		}
		if !seen.visit(c) {
			continue
		}
		for i := len(links) - 1; i >= 0; i-- {
			stack = append(stack, links[i].Cid)
		}
	}
	return nil
}
