// resolve.go: turning "/ipfs/<cid>/a/b", "<cid>/a/b" or a bare CID into the
// CID it names, through UnixFS directories (plain and HAMT-sharded).

package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ipfs/boxo/ipld/merkledag"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// FromURI rewrites a native IPFS URI into the content path it stands for,
// as Kubo 0.43 accepts them wherever a path or CID is: "ipfs://<cid>[/rest]"
// and "ipfs:<cid>[/rest]" become "/ipfs/<cid>[/rest]", "ipns://<name>" and
// "ipns:<name>" become "/ipns/<name>". The scheme is matched without
// regard to case; what follows it is kept as it is. Anything else is
// returned unchanged.
func FromURI(s string) string {
	if len(s) < 5 || s[4] != ':' {
		return s
	}
	var ns string
	switch strings.ToLower(s[:4]) {
	case "ipfs":
		ns = "/ipfs/"
	case "ipns":
		ns = "/ipns/"
	default:
		return s
	}
	rest := s[5:]
	if r, ok := strings.CutPrefix(rest, "//"); ok {
		rest = r
	}
	return ns + rest
}

// ParsePath accepts what Kubo's commands accept: an /ipfs/ path, a CID
// with an optional /sub/path, or either as a native URI (FromURI). The
// error is Kubo's ("invalid path ...").
func ParsePath(s string) (path.ImmutablePath, error) {
	s = FromURI(s)
	p, err := path.NewPath(s)
	if err != nil {
		// Kubo also takes "<cid>" and "<cid>/rest".
		first, rest, _ := strings.Cut(s, "/")
		c, cerr := cid.Decode(first)
		if cerr != nil {
			return path.ImmutablePath{}, err
		}
		ip := path.FromCid(c)
		if rest == "" {
			return ip, nil
		}
		p2, jerr := path.Join(ip, strings.Split(rest, "/")...)
		if jerr != nil {
			return path.ImmutablePath{}, err
		}
		return path.NewImmutablePath(p2)
	}
	if p.Mutable() {
		return path.ImmutablePath{}, fmt.Errorf("%s: /ipns/ names cannot be resolved by this node yet", s)
	}
	return path.NewImmutablePath(p)
}

// Resolved is a path resolved to its last node.
type Resolved struct {
	Cid  cid.Cid
	Node ipld.Node // decoded last node (nil for identity of unknown codec)
	// Roots are the CIDs of the nodes the walk went through before the
	// last one, root first (the gateway's X-Ipfs-Roots, with Cid).
	Roots []cid.Cid
}

// NoLinkError is a path segment that names no entry of its parent; it
// matches ErrNoLink.
type NoLinkError struct {
	Name  string
	Under cid.Cid
}

func (e *NoLinkError) Error() string {
	return fmt.Sprintf("no link named %q under %s", e.Name, e.Under)
}

// Is makes errors.Is(err, ErrNoLink) hold.
func (e *NoLinkError) Is(target error) bool { return target == ErrNoLink }

// Resolve walks s from its root CID through UnixFS directories; a leading
// /ipns/ name is resolved first.
func (dd *Dag) Resolve(ctx context.Context, s string) (Resolved, error) {
	n := dd.n
	p, err := n.Names().ImmutablePath(ctx, s)
	if err != nil {
		return Resolved{}, err
	}
	c := p.RootCid()
	segs := p.Segments()[2:]
	nd, err := n.DAG.Get(ctx, c)
	if err != nil {
		return Resolved{}, err
	}
	var roots []cid.Cid
	for i, seg := range segs {
		if seg == "" {
			continue
		}
		next, err := n.child(ctx, nd, seg)
		if err != nil {
			if errors.Is(err, ErrNoLink) {
				return Resolved{}, &NoLinkError{Name: seg, Under: nd.Cid()}
			}
			return Resolved{}, fmt.Errorf("resolve %s (segment %d): %w", s, i+1, err)
		}
		roots = append(roots, nd.Cid())
		nd = next
	}
	return Resolved{Cid: nd.Cid(), Node: nd, Roots: roots}, nil
}

// child finds name inside nd: a UnixFS directory entry, or a plain dag-pb
// link of that name.
func (n *Node) child(ctx context.Context, nd ipld.Node, name string) (ipld.Node, error) {
	pn, ok := nd.(*merkledag.ProtoNode)
	if !ok {
		return nil, ErrNoLink
	}
	if dir, err := uio.NewDirectoryFromNode(n.DAG, pn); err == nil {
		ch, err := dir.Find(ctx, name)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "not exist") || errors.Is(err, merkledag.ErrLinkNotFound) {
				return nil, ErrNoLink
			}
			return nil, err
		}
		return ch, nil
	}
	l, err := pn.GetNodeLink(name)
	if err != nil {
		return nil, ErrNoLink
	}
	return n.DAG.Get(ctx, l.Cid)
}
