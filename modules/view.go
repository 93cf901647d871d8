// view.go: the narrow node view modules get (modapi.NodeView over
// *node.Node).

package modules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"cairn/modules/modapi"
	"cairn/node"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// maxListEntries caps a directory listing.
const maxListEntries = 10000

// View is the modapi.NodeView of a node. It is read-only for modules not
// in Modules.AllowWrite (the host wraps it).
type View struct{ n *node.Node }

// ViewOf returns the module view of n.
func ViewOf(n *node.Node) *View { return &View{n: n} }

var _ modapi.NodeView = (*View)(nil)

// ID implements modapi.NodeView.
func (v *View) ID() string { return v.n.PeerID.String() }

func ipfsPath(p string) string {
	if strings.HasPrefix(p, "/ipfs/") {
		return p
	}
	return "/ipfs/" + strings.TrimPrefix(p, "/")
}

// Stat implements modapi.NodeView.
func (v *View) Stat(ctx context.Context, p string) (modapi.Entry, error) {
	res, err := v.n.Dag().Resolve(ctx, ipfsPath(p))
	if err != nil {
		return modapi.Entry{}, err
	}
	e := modapi.Entry{Cid: res.Cid.String()}
	if i := strings.LastIndexByte(strings.TrimSuffix(p, "/"), '/'); i >= 0 {
		e.Name = strings.TrimSuffix(p, "/")[i+1:]
	}
	return e, describe(res.Node, &e)
}

// describe fills IsDir and Size from a decoded node.
func describe(nd ipld.Node, e *modapi.Entry) error {
	switch t := nd.(type) {
	case *merkledag.RawNode:
		e.Size = int64(len(t.RawData()))
		return nil
	case *merkledag.ProtoNode:
		fsn, err := ft.FSNodeFromBytes(t.Data())
		if err != nil {
			return fmt.Errorf("%s is not a UnixFS node: %w", nd.Cid(), err)
		}
		switch fsn.Type() {
		case ft.TDirectory, ft.THAMTShard:
			e.IsDir = true
		case ft.TFile, ft.TRaw:
			e.Size = int64(fsn.FileSize())
		default:
			return fmt.Errorf("%s: unsupported UnixFS type %s", nd.Cid(), fsn.Type())
		}
		return nil
	}
	return fmt.Errorf("%s is not a UnixFS node", nd.Cid())
}

// List implements modapi.NodeView.
func (v *View) List(ctx context.Context, p string) ([]modapi.Entry, error) {
	res, err := v.n.Dag().Resolve(ctx, ipfsPath(p))
	if err != nil {
		return nil, err
	}
	pn, ok := res.Node.(*merkledag.ProtoNode)
	if !ok {
		return nil, errors.New("not a directory")
	}
	dir, err := uio.NewDirectoryFromNode(v.n.DAG, pn)
	if err != nil {
		return nil, err
	}
	var out []modapi.Entry
	err = dir.ForEachLink(ctx, func(l *ipld.Link) error {
		if len(out) >= maxListEntries {
			return errors.New("directory too large to list")
		}
		e := modapi.Entry{Name: l.Name, Cid: l.Cid.String()}
		if nd, err := v.n.DAG.Get(ctx, l.Cid); err == nil {
			_ = describe(nd, &e)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// Cat implements modapi.NodeView.
func (v *View) Cat(ctx context.Context, p string, w io.Writer) error {
	res, err := v.n.Dag().Resolve(ctx, ipfsPath(p))
	if err != nil {
		return err
	}
	return v.n.UnixFS().WriteFile(ctx, res.Cid, 0, -1, w)
}

// Add implements modapi.NodeView: one file, pinned, with the config's
// import settings.
func (v *View) Add(ctx context.Context, name string, r io.Reader) (string, error) {
	if name == "" {
		name = "file"
	}
	a, err := v.n.UnixFS().NewAdder(ctx, node.AddOptions{Pin: true}, func(node.AddEvent) error { return nil })
	if err != nil {
		return "", err
	}
	roots, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{name: files.NewReaderFile(r)}))
	if err != nil {
		return "", err
	}
	return roots[0].String(), nil
}

// Pin implements modapi.NodeView.
func (v *View) Pin(ctx context.Context, p string) error {
	var c cid.Cid
	if parsed, err := cid.Decode(p); err == nil {
		c = parsed
	} else {
		res, err := v.n.Dag().Resolve(ctx, ipfsPath(p))
		if err != nil {
			return err
		}
		c = res.Cid
	}
	return v.n.Pins().AddRecursive(ctx, c)
}

// Repo implements modapi.NodeView.
func (v *View) Repo(ctx context.Context) (modapi.RepoStat, error) {
	st, err := v.n.Store.Stat()
	if err != nil {
		return modapi.RepoStat{}, err
	}
	// UsedBytes is the figure StorageMax bounds (n.Storage().Usage), not the
	// store file's allocated size; the figures are the metrics' (Vitals).
	vt := v.n.Vitals()
	rs := modapi.RepoStat{UsedBytes: int64(vt.StorageUsed), BlockBytes: int64(st.BlockBytes), NumBlocks: int64(st.NumBlocks),
		StorageMax: int64(vt.StorageMax), WrittenBytes: int64(vt.Written), LifetimeWrittenBytes: int64(vt.WrittenTotal),
		Fault: vt.StoreFault}
	rs.Pins, err = v.n.Pins().Count(ctx)
	return rs, err
}

// Peers implements modapi.NodeView: connected peers (0 offline).
func (v *View) Peers() int { return v.n.Network().PeerCount() }

// Bandwidth implements modapi.NodeView: one sample a minute for the last
// hour (none offline).
func (v *View) Bandwidth() []modapi.BandwidthSample {
	var out []modapi.BandwidthSample
	for _, s := range v.n.Network().BandwidthHistory() {
		out = append(out, modapi.BandwidthSample{Time: s.Time, BytesIn: s.BytesIn, BytesOut: s.BytesOut})
	}
	return out
}

// Memory implements modapi.NodeView: the metrics' figures (Vitals).
func (v *View) Memory() modapi.MemoryStat {
	vt := v.n.Vitals()
	h, _ := vt.Headroom()
	return modapi.MemoryStat{Budget: int64(vt.MemoryBudget), Used: int64(vt.MemoryUsed), Headroom: h}
}

// Networking implements modapi.NodeView.
func (v *View) Networking() bool { return v.n.Online() }
