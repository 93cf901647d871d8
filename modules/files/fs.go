// fs.go: the two places files come from: a folder on disk and the node's
// storage (/ipfs/ paths).

package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"cairn/modules/modapi"
)

// info is what a stat yields.
type info struct {
	isDir        bool
	size         int64
	etag         string
	lastModified string // "" when unknown
	immutable    bool   // content-addressed: never changes
}

// errForbidden means the entry exists but cannot be read (403).
var errForbidden = errors.New("forbidden")

// source is where a serve() reads from. rel is a sanitised path: "/" or
// "/a/b", never with "..".
type source interface {
	stat(ctx context.Context, rel string) (info, error)
	// open returns the content and whether the caller must close it.
	open(ctx context.Context, rel string, inf info) (io.Reader, error)
	list(ctx context.Context, rel string) ([]modapi.Entry, error)
	full(rel string) string
}

// dirSource is a folder (or a single file) on disk.
type dirSource struct{ base string }

func (d dirSource) full(rel string) string {
	if rel == "/" {
		return d.base
	}
	return filepath.Join(d.base, filepath.FromSlash(rel))
}

func (d dirSource) stat(_ context.Context, rel string) (info, error) {
	st, err := os.Stat(d.full(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return info{}, fs.ErrNotExist
		}
		return info{}, errForbidden
	}
	ctime := changeTime(st)
	mtime := st.ModTime()
	return info{
		isDir:        st.IsDir(),
		size:         st.Size(),
		etag:         fmt.Sprintf(`"%x-%x-%x"`, ctime, st.Size(), mtime.Unix()),
		lastModified: mtime.UTC().Format(http.TimeFormat),
	}, nil
}

func (d dirSource) open(_ context.Context, rel string, inf info) (io.Reader, error) {
	f, err := os.Open(d.full(rel))
	if err != nil {
		return nil, errForbidden
	}
	if inf.size <= smallFile {
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return nil, errForbidden
		}
		return bytes.NewReader(b), nil
	}
	return f, nil
}

func (d dirSource) list(_ context.Context, rel string) ([]modapi.Entry, error) {
	des, err := os.ReadDir(d.full(rel))
	if err != nil {
		return nil, err
	}
	out := make([]modapi.Entry, 0, len(des))
	for _, de := range des {
		e := modapi.Entry{Name: de.Name(), IsDir: de.IsDir()}
		if st, err := os.Stat(filepath.Join(d.full(rel), de.Name())); err == nil {
			e.IsDir, e.Size = st.IsDir(), st.Size()
			if e.IsDir {
				e.Size = 0
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// ipfsSource serves from the node's storage; base is "/ipfs" (any CID,
// the first segment of rel) or "/ipfs/<cid>[/sub]".
type ipfsSource struct {
	base string
	node modapi.NodeView
}

func (s ipfsSource) full(rel string) string {
	if rel == "/" {
		return s.base
	}
	return s.base + rel
}

func (s ipfsSource) stat(ctx context.Context, rel string) (info, error) {
	if s.node == nil {
		return info{}, errors.New("no node view for /ipfs/ paths")
	}
	p := s.full(rel)
	if strings.Trim(p, "/") == "ipfs" {
		return info{}, fs.ErrNotExist // the gateway root lists nothing
	}
	e, err := s.node.Stat(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return info{}, ctx.Err()
		}
		return info{}, fmt.Errorf("%w: %v", fs.ErrNotExist, err)
	}
	return info{isDir: e.IsDir, size: e.Size, etag: `"` + e.Cid + `"`, immutable: true}, nil
}

func (s ipfsSource) open(ctx context.Context, rel string, inf info) (io.Reader, error) {
	p := s.full(rel)
	if inf.size <= smallFile {
		var buf bytes.Buffer
		if err := s.node.Cat(ctx, p, &buf); err != nil {
			return nil, err
		}
		return &buf, nil
	}
	// The body is written after the handler returns, so the handler's
	// context must not stop it; the server closing the reader does.
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.node.Cat(context.WithoutCancel(ctx), p, pw)) }()
	return pr, nil
}

func (s ipfsSource) list(ctx context.Context, rel string) ([]modapi.Entry, error) {
	return s.node.List(ctx, s.full(rel))
}
