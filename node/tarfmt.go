// tarfmt.go: Kubo's (deprecated) "ipfs/tar" DAG format of tar add and
// tar cat. It is not UnixFS: the root is a dag-pb node whose Data is
// "ipfs/tar"; each tar entry is a dag-pb node whose Data is the entry's
// tar header (as Go's archive/tar writes it) with, for entries with
// content, a "data" link to a UnixFS file (rabin chunks, balanced). An
// entry named "a/b" hangs under the link "-a" then "-b" (the "-" keeps
// names clear of "data"); missing parents are empty dag-pb nodes.

package node

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"

	chunker "github.com/ipfs/boxo/chunker"
	dag "github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipld/merkledag/dagutils"
	"github.com/ipfs/boxo/ipld/unixfs/importer"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// tarRootData marks the root of an imported tar.
const tarRootData = "ipfs/tar"

// tarHeaderBytes is h as archive/tar writes it (512-byte blocks, with
// PAX or GNU extension blocks when needed).
func tarHeaderBytes(h *tar.Header) ([]byte, error) {
	var buf bytes.Buffer
	if err := tar.NewWriter(&buf).WriteHeader(h); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarLinkPath escapes an entry name into the link path of the format.
func tarLinkPath(name string) string {
	elems := strings.Split(strings.Trim(name, "/"), "/")
	for i, e := range elems {
		elems[i] = "-" + e
	}
	return strings.Join(elems, "/")
}

// ImportTar stores the tar stream r in the "ipfs/tar" format and returns
// its root. On failure nothing of it stays stored.
func (u *UnixFS) ImportTar(ctx context.Context, r io.Reader) (cid.Cid, error) {
	n := u.n
	var root cid.Cid
	err := n.Dag().Edit(ctx, func(ds ipld.DAGService) error {
		tr := tar.NewReader(r)
		top := new(dag.ProtoNode)
		top.SetData([]byte(tarRootData))
		ed := dagutils.NewDagEditor(top, ds)
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			hb, err := tarHeaderBytes(h)
			if err != nil {
				return err
			}
			hdr := new(dag.ProtoNode)
			hdr.SetData(hb)
			if h.Size > 0 {
				spl := chunker.NewRabin(inputReader{ctx: ctx, r: tr, cut: errTarTruncated}, uint64(chunker.DefaultBlockSize))
				file, err := importer.BuildDagFromReader(ds, spl)
				if err != nil {
					return err
				}
				if err := hdr.AddNodeLink("data", file); err != nil {
					return err
				}
			}
			if err := ds.Add(ctx, hdr); err != nil {
				return err
			}
			err = ed.InsertNodeAtPath(ctx, tarLinkPath(h.Name), hdr, func() *dag.ProtoNode { return new(dag.ProtoNode) })
			if err != nil {
				return err
			}
		}
		nd, err := ed.Finalize(ctx, ds)
		if err != nil {
			return err
		}
		root = nd.Cid()
		return nil
	})
	return root, err
}

// tarBlock is the tar block size.
const tarBlock = 512

// countWriter counts what goes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	k, err := c.w.Write(p)
	c.n += int64(k)
	return k, err
}

// ExportTar writes the tar stream stored under root (made by ImportTar or
// Kubo's tar add) to w, as Kubo's tar cat does: every entry's header, its
// content padded to 512 bytes, children after their parent; no
// end-of-archive blocks. File content streams from the store.
func (u *UnixFS) ExportTar(ctx context.Context, root ipld.Node, w io.Writer) error {
	n := u.n
	pb, ok := root.(*dag.ProtoNode)
	if !ok {
		return dag.ErrNotProtobuf
	}
	if string(pb.Data()) != tarRootData {
		return ErrNotTarchive
	}
	return n.exportTarLinks(ctx, pb.Links(), w)
}

func (n *Node) exportTarLinks(ctx context.Context, links []*ipld.Link, w io.Writer) error {
	for _, l := range links {
		if err := ctx.Err(); err != nil {
			return err
		}
		nd, err := n.DAG.Get(ctx, l.Cid)
		if err != nil {
			return err
		}
		hdr, ok := nd.(*dag.ProtoNode)
		if !ok {
			return dag.ErrNotProtobuf
		}
		if _, err := w.Write(hdr.Data()); err != nil {
			return err
		}
		data, err := hdr.GetNodeLink("data")
		switch {
		case err == nil:
			cw := &countWriter{w: w}
			if err := n.UnixFS().WriteFile(ctx, data.Cid, 0, -1, cw); err != nil {
				return err
			}
			if pad := (tarBlock - cw.n%tarBlock) % tarBlock; pad > 0 {
				if _, err := w.Write(make([]byte, pad)); err != nil {
					return err
				}
			}
		case errors.Is(err, dag.ErrLinkNotFound):
			if len(hdr.Links()) > 0 {
				if err := n.exportTarLinks(ctx, hdr.Links(), w); err != nil {
					return err
				}
			}
		default:
			return err
		}
	}
	return nil
}
