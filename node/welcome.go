// welcome.go: what `cairn init` seeds a new repo with, as Kubo's init
// does: the empty directory pinned and the node's own name published to
// it (InitKeyspace), and with --empty-repo=false the welcome documents:
// cairn's own short texts (initdoc/), stored as one directory whose readme
// the init banner names.

package node

import (
	"context"
	"embed"
	"io/fs"

	"github.com/ipfs/boxo/files"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
)

//go:embed initdoc
var initDocs embed.FS

// AddWelcomeDocs adds the welcome documents as one directory, pins it and
// returns its CID.
func (u *UnixFS) AddWelcomeDocs(ctx context.Context) (cid.Cid, error) {
	des, err := fs.ReadDir(initDocs, "initdoc")
	if err != nil {
		return cid.Undef, err
	}
	entries := map[string]files.Node{}
	for _, de := range des {
		b, err := initDocs.ReadFile("initdoc/" + de.Name())
		if err != nil {
			return cid.Undef, err
		}
		entries[de.Name()] = files.NewBytesFile(b)
	}
	a, err := u.NewAdder(ctx, AddOptions{Pin: true, Wrap: true, Silent: true}, func(AddEvent) error { return nil })
	if err != nil {
		return cid.Undef, err
	}
	roots, err := a.AddAll(files.NewMapDirectory(entries))
	if err != nil {
		return cid.Undef, err
	}
	return roots[0], nil
}

// InitKeyspace pins the empty directory and publishes the node's own name
// to it in the local record store (not to the network), as Kubo's init
// does: /ipns/<self> of a fresh node resolves to the empty directory
// until the first name publish.
func (m *Names) InitKeyspace(ctx context.Context) error {
	n := m.n
	empty := ft.EmptyDirNode()
	if err := n.DAG.Add(ctx, empty); err != nil {
		return err
	}
	if err := n.Pins().Add(ctx, empty.Cid(), true, "", nil); err != nil {
		return err
	}
	_, err := m.Publish(OfflineContext(ctx), path.FromCid(empty.Cid()),
		PublishOptions{AllowOffline: true, Lifetime: DefaultRecordLifetime})
	return err
}
