// module.go: the built-in modules http_files and http_ipfs.

package files

import (
	"errors"

	"cairn/modules/httpapp"
	"cairn/modules/modapi"

	"github.com/valyala/fasthttp"
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

// ipfsModule mounts the node's HTTP gateway at /ipfs/<cid>/... (app
// "ipfs"): its requests are answered by the gateway package's handler
// (Settings.Gateway), the one implementation of /ipfs/ over HTTP, so the
// module ports serve what the gateway port serves, under their own host
// checks and logins.
type ipfsModule struct{}

// Load implements modapi.Module.
func (ipfsModule) Load(ctx *modapi.Context) error {
	gw := ctx.Settings.Gateway
	if gw == nil {
		return errors.New("http_ipfs: the node's HTTP gateway was not given to the module host")
	}
	h := func(ev *httpapp.Event) any {
		return httpapp.Raw(func(c *fasthttp.RequestCtx) {
			// The module ports' origin is the status page's too: content
			// runs in an opaque origin, and is never sniffed by browsers.
			c.Response.Header.Set("Content-Security-Policy", sandboxCSP)
			c.Response.Header.Set("X-Content-Type-Options", "nosniff")
			gw(c, "/ipfs/"+ev.Arg)
		})
	}
	_, err := ctx.Provide(&httpapp.App{Routes: map[string]any{"GET /*": httpapp.Handler(h)}})
	return err
}
