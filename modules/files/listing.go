// listing.go: the http_dir_listing module, which answers the
// directory-index event with an "Index of" page.

package files

import (
	"context"
	"fmt"
	"html"
	"strings"

	"cairn/modules/events"
	"cairn/modules/httpapp"
	"cairn/modules/modapi"

	humanize "github.com/dustin/go-humanize"
)

func init() {
	modapi.MustRegister(modapi.Info{Name: "http_dir_listing", New: func() modapi.Module { return new(DirListing) }})
}

// DirListing renders directory listings for serve() instances that have
// DirectoryIndex on.
type DirListing struct {
	bus     *events.Bus
	name    string
	version string
}

// Load implements modapi.Module.
func (d *DirListing) Load(ctx *modapi.Context) error {
	d.bus, d.name, d.version = ctx.HTTPEvents, ctx.Name, ctx.Settings.Version
	d.bus.Add(ctx.Name, modapi.EventDirectoryIndex, d, 0, func(_ context.Context, data any) any {
		di, ok := data.(*modapi.DirectoryIndex)
		if !ok {
			return nil
		}
		return RenderListing(di, d.version)
	})
	return nil
}

// Unload implements modapi.Unloader.
func (d *DirListing) Unload() error {
	d.bus.RemoveOwner(d.name)
	return nil
}

const listingStyle = `body{font-family:sans-serif;margin:2em}ul.filelist{list-style:none;padding:0}` +
	`ul.filelist li{padding:.2em 0}ul.filelist li.directory a{font-weight:bold}footer{margin-top:2em;color:#777;font-size:.8em}`

// RenderListing renders the "Index of" page of di. Entries whose name
// starts with "." are not listed.
func RenderListing(di *modapi.DirectoryIndex, version string) string {
	var b strings.Builder
	title := html.EscapeString("Index of " + di.Path)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>%s</title><style>%s</style></head><body><h1>%s</h1>\n<ul class=\"filelist\">\n", title, listingStyle, title)
	if di.Path != "/" {
		b.WriteString("<li class=\"directory parent\"><a href=\"..\" rel=\"up\">Parent Directory</a></li>\n")
	}
	for _, e := range di.Entries {
		if strings.HasPrefix(e.Name, ".") {
			continue
		}
		href := httpapp.URLEncode(e.Name)
		if e.IsDir {
			fmt.Fprintf(&b, "<li class=\"directory\"><a href=\"%s/\">%s/</a></li>\n", html.EscapeString(href), html.EscapeString(e.Name))
			continue
		}
		ty := TypeOf(e.Name)
		ext, major := "", ""
		if i := strings.LastIndexByte(e.Name, '.'); i >= 0 {
			ext = strings.ToLower(e.Name[i+1:])
		}
		if m, _, ok := strings.Cut(ty, "/"); ok {
			major = m
		}
		class := strings.TrimSpace(strings.Join([]string{"file", ext, major}, " "))
		fmt.Fprintf(&b, "<li class=\"%s\"><a href=\"%s\"", html.EscapeString(class), html.EscapeString(href))
		if ty != "" {
			fmt.Fprintf(&b, " type=\"%s\"", html.EscapeString(ty))
		}
		fmt.Fprintf(&b, ">%s</a> <small>%s</small></li>\n", html.EscapeString(e.Name), humanSize(e.Size))
	}
	fmt.Fprintf(&b, "</ul>\n<footer>cairn %s</footer></body></html>\n", html.EscapeString(version))
	return b.String()
}

func humanSize(n int64) string {
	if n < 0 {
		n = 0
	}
	return humanize.IBytes(uint64(n))
}
