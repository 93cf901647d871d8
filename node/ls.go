// ls.go: listing a node's entries as Kubo's ls does (UnixFS directories,
// plain or HAMT-sharded, else the node's raw links), and reading the links
// of any stored block (refs, pin checks).

package node

import (
	"cairn/node/unixfs"
	"context"
	"errors"
	"os"
	"time"

	ft "github.com/ipfs/boxo/ipld/unixfs"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/boxo/verifcid"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"

	// Links of dag-cbor and dag-json blocks come from their IPLD codecs.
	_ "github.com/ipld/go-ipld-prime/codec/dagcbor"
	_ "github.com/ipld/go-ipld-prime/codec/dagjson"
)

// Entry types of a listing: the UnixFS data types Kubo's ls reports.
const (
	LsUnknown   int32 = 0 // not resolved, or not UnixFS
	LsDirectory       = int32(ft.TDirectory)
	LsFile            = int32(ft.TFile)
	LsSymlink         = int32(ft.TSymlink)
)

// LsEntry is one entry of a listing.
type LsEntry struct {
	Name string
	Cid  cid.Cid
	// Size is the file size (link Tsize for raw leaves, the symlink
	// target's length, 0 for directories and unresolved entries).
	Size    uint64
	Type    int32 // LsUnknown, LsDirectory, LsFile or LsSymlink
	Target  string
	Mode    os.FileMode // 0: none stored
	ModTime time.Time   // zero: none stored
}

// Ls calls fn for each entry of nd: the entries of a UnixFS directory
// (link order; shard order for a HAMT), else nd's links (chunks of a file,
// unnamed). With resolve, dag-pb children are read for their type, size,
// mode and mtime; raw children are files either way.
func (u *UnixFS) Ls(ctx context.Context, nd ipld.Node, resolve bool, fn func(LsEntry) error) error {
	n := u.n
	dir, err := uio.NewDirectoryFromNode(n.DAG, nd)
	if err != nil {
		if !errors.Is(err, uio.ErrNotADir) {
			return err
		}
		for _, l := range nd.Links() {
			e, err := n.lsEntry(ctx, l, resolve)
			if err != nil {
				return err
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	for lr := range dir.EnumLinksAsync(ectx) {
		if lr.Err != nil {
			return lr.Err
		}
		e, err := n.lsEntry(ctx, lr.Link, resolve)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (n *Node) lsEntry(ctx context.Context, l *ipld.Link, resolve bool) (LsEntry, error) {
	e := LsEntry{Name: l.Name, Cid: l.Cid}
	switch l.Cid.Type() {
	case cid.Raw:
		e.Type, e.Size = LsFile, l.Size
	case cid.DagProtobuf:
		if !resolve {
			break
		}
		fs, err := n.unixfsNode(ctx, l.Cid)
		if err != nil {
			return e, err
		}
		switch fs.Type() {
		case ft.TFile, ft.TRaw:
			e.Type = LsFile
		case ft.TDirectory, ft.THAMTShard, ft.TMetadata:
			e.Type = LsDirectory
		case ft.TSymlink:
			e.Type = LsSymlink
			e.Target = string(fs.Data())
		}
		e.Size = fs.FileSize()
		e.Mode = fs.Mode()
		e.ModTime = fs.ModTime()
	}
	return e, nil
}

// unixfsNode reads the UnixFS data of the dag-pb block c.
func (n *Node) unixfsNode(ctx context.Context, c cid.Cid) (*ft.FSNode, error) {
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
		return nil, err
	}
	var data []byte
	err := n.view(ctx, c, func(b []byte) error {
		d, _, err := unixfs.Scan(b, false)
		data = append([]byte(nil), d...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ft.FSNodeFromBytes(data)
}

// Links returns the links of the stored block c, in block order: none for
// raw blocks (which must still be present), the links of a dag-pb node,
// and for other codecs whatever the IPLD decoder finds. A missing block
// is an ipld.ErrNotFound ("ipld: could not find <cid>").
func (u *UnixFS) Links(ctx context.Context, c cid.Cid) ([]*ipld.Link, error) {
	n := u.n
	if err := verifcid.ValidateCid(verifcid.DefaultAllowlist, c); err != nil {
		return nil, err
	}
	switch c.Type() {
	case cid.Raw:
		// Present, stored or as a filestore reference (whose file is
		// not read); else an online node fetches it.
		has, err := n.hasBlock(ctx, c)
		if err == nil && !has {
			err = n.view(ctx, c, func([]byte) error { return nil })
		}
		return nil, err
	case cid.DagProtobuf:
		var links []*ipld.Link
		err := n.view(ctx, c, func(b []byte) error {
			var err error
			_, links, err = unixfs.Scan(b, true)
			return err
		})
		return links, err
	}
	nd, err := n.DAG.Get(ctx, c)
	if err != nil {
		return nil, err
	}
	return nd.Links(), nil
}
