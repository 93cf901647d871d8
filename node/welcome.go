// welcome.go: what `cairn init` seeds a new repo with, as Kubo's init
// does: the empty directory pinned (PinEmptyDir), and with
// --empty-repo=false the welcome documents:
// cairn's own short texts (initdoc/), stored as one directory whose readme
// the init banner names.

package node

import (
	"context"
	"embed"
	"io/fs"

	"github.com/ipfs/boxo/files"
	ft "github.com/ipfs/boxo/ipld/unixfs"
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

// PinEmptyDir pins the empty directory, as Kubo's init does. Kubo 0.43
// no longer publishes the node's own name at init, and neither does
// cairn: /ipns/<self> of a fresh node does not resolve until the first
// name publish (a record at init would reach the network and make every
// fresh node's name resolve to an empty directory).
func (n *Node) PinEmptyDir(ctx context.Context) error {
	empty := ft.EmptyDirNode()
	if err := n.DAG.Add(ctx, empty); err != nil {
		return err
	}
	return n.Pins().Add(ctx, empty.Cid(), true, "", nil)
}
