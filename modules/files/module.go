// module.go: the built-in modules http_files and http_ipfs.

package files

import (
	"errors"

	"cairn/modules/httpapp"
	"cairn/modules/modapi"
)

func init() {
	modapi.MustRegister(modapi.Info{Name: "http_files", New: func() modapi.Module { return filesModule{} }})
	modapi.MustRegister(modapi.Info{Name: "http_ipfs", New: func() modapi.Module { return ipfsModule{} }})
}

// filesModule serves Modules.Files.Path at /files (app "files").
type filesModule struct{}

// Load implements modapi.Module.
func (filesModule) Load(ctx *modapi.Context) error {
	s := ctx.Settings
	if s.FilesPath == "" {
		return errors.New("Modules.Files.Path is not set: nothing to serve")
	}
	if s.DirListing {
		if err := ctx.Depends("http_dir_listing"); err != nil {
			return err
		}
	}
	h := Serve(Options{Path: s.FilesPath, DirectoryIndex: s.DirListing, IndexFiles: s.IndexFiles, Node: ctx.Node, Events: ctx.HTTPEvents})
	_, err := ctx.Provide(&httpapp.App{Routes: map[string]any{"GET /*": h}})
	return err
}

// ipfsModule is a read-only gateway over the node's storage at
// /ipfs/<cid>/... (app "ipfs").
type ipfsModule struct{}

// Load implements modapi.Module.
func (ipfsModule) Load(ctx *modapi.Context) error {
	if err := ctx.Depends("http_dir_listing"); err != nil {
		return err
	}
	h := Serve(Options{Path: "/ipfs", DirectoryIndex: true, IndexFiles: ctx.Settings.IndexFiles, Node: ctx.Node, Events: ctx.HTTPEvents})
	_, err := ctx.Provide(&httpapp.App{Routes: map[string]any{"GET /*": h}})
	return err
}
