// status.go: the http_status module: routes and the upload.

package status

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"cairn/modules/httpapp"
	"cairn/modules/modapi"
)

func init() {
	modapi.MustRegister(modapi.Info{Name: "http_status", New: func() modapi.Module { return new(Module) }})
}

// Module serves the status app.
type Module struct {
	ctx *modapi.Context
}

var _ modapi.Module = (*Module)(nil)

// Load implements modapi.Module.
func (m *Module) Load(ctx *modapi.Context) error {
	m.ctx = ctx
	_, err := ctx.Provide(&httpapp.App{
		StreamingUploads: true,
		Routes: map[string]any{
			"GET /":       httpapp.Handler(m.index),
			"POST /":      httpapp.Handler(m.upload),
			"POST /add":   httpapp.Handler(m.upload),
			"GET /health": "ok\n",
		},
	})
	return err
}

func (m *Module) index(ev *httpapp.Event) any {
	ev.Response.Headers["content_type"] = "text/html; charset=utf-8"
	ev.Response.Headers["cache_control"] = "no-store"
	return m.render(ev, m.justAdded(ev))
}

// justAdded is the upload named by the query of the redirect after a
// POST (?added=<cid>&name=<file name>), checked against the node: a CID
// it does not hold shows nothing.
func (m *Module) justAdded(ev *httpapp.Event) *added {
	if !ev.Request.URL.HasQuery {
		return nil
	}
	q := httpapp.FormDecode(ev.Request.URL.Query)
	c := q.Values["added"]
	if c == "" {
		return nil
	}
	e, err := m.ctx.Node.Stat(ev.Ctx, "/ipfs/"+c)
	if err != nil || e.Cid != c {
		return nil
	}
	name := q.Values["name"]
	if name == "" {
		name = "file"
	}
	return &added{Name: name, Cid: c, Size: e.Size}
}

// added is the outcome of an upload shown on the page.
type added struct {
	Name, Cid string
	Size      int64
	Err       string
}

func (m *Module) upload(ev *httpapp.Event) any {
	ev.Response.Headers["content_type"] = "text/html; charset=utf-8"
	ev.Response.Headers["cache_control"] = "no-store"
	if crossSite(ev.Request) {
		return &httpapp.Error{Code: 403, Text: "Cross-site uploads are refused."}
	}
	res := m.addFromForm(ev)
	if res.Err != "" {
		ev.Response.StatusCode = 400
		m.ctx.Log.Warn("status upload failed", "err", res.Err)
		return m.render(ev, res)
	}
	m.ctx.Log.Info("status upload added", "name", res.Name, "cid", res.Cid, "bytes", res.Size)
	// Redirect after POST: reloading the result page must not upload
	// the file again.
	ev.Response.Headers["location"] = strings.TrimSuffix(ev.Base, "/") + "/?" + httpapp.FormEncode([]httpapp.FormField{{Name: "added", Value: res.Cid}, {Name: "name", Value: res.Name}})
	ev.Response.Body = nil
	return 303
}

// crossSite reports a post made by another site's page.
func crossSite(r *httpapp.Request) bool {
	if r.Headers["sec_fetch_site"] == "cross-site" {
		return true
	}
	origin := r.Headers["origin"]
	if origin == "" || origin == "null" {
		return origin == "null"
	}
	u, err := url.Parse(origin)
	return err != nil || !strings.EqualFold(u.Host, r.Headers["host"])
}

// errTooLarge is returned once an upload passes the cap.
var errTooLarge = errors.New("upload larger than Modules.HTTP.MaxUploadSize")

type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (m *Module) addFromForm(ev *httpapp.Event) *added {
	body := ev.Request.BodyStream
	if body == nil {
		body = strings.NewReader(string(ev.Request.Body))
	}
	max := m.ctx.Settings.MaxUploadSize
	if max <= 0 {
		max = 1 << 30
	}
	mr, err := httpapp.MultipartReader(&capReader{r: body, left: max + 64<<10}, ev.Request.Headers["content_type"])
	if err != nil {
		return &added{Err: "expected a multipart/form-data upload"}
	}
	for {
		p, err := mr.NextPart()
		if err != nil {
			if err == io.EOF {
				return &added{Err: "the form had no file"}
			}
			return &added{Err: err.Error()}
		}
		if p.FormName() != "file" {
			continue
		}
		name := p.FileName()
		if name == "" {
			name = "upload"
		}
		cr := &countReader{r: p}
		c, err := m.ctx.Node.Add(ev.Ctx, name, cr)
		if err != nil {
			return &added{Name: name, Err: fmt.Sprintf("adding %s: %v", name, err)}
		}
		return &added{Name: name, Cid: c, Size: cr.n}
	}
}
