// welcome.go: the welcome documents `cairn init --empty-repo=false` adds
// and pins, as Kubo's init seeds its help files: cairn's own short texts
// (initdoc/), stored as one directory whose readme the init banner names.

package node

import (
	"context"
	"embed"
	"io/fs"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

//go:embed initdoc
var initDocs embed.FS

// AddWelcomeDocs adds the welcome documents as one directory, pins it and
// returns its CID.
func (n *Node) AddWelcomeDocs(ctx context.Context) (cid.Cid, error) {
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
	a, err := n.NewAdder(ctx, AddOptions{Pin: true, Wrap: true, Silent: true}, func(AddEvent) error { return nil })
	if err != nil {
		return cid.Undef, err
	}
	roots, err := a.AddAll(files.NewMapDirectory(entries))
	if err != nil {
		return cid.Undef, err
	}
	return roots[0], nil
}
