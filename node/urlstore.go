// urlstore.go: adding a URL's content as filestore references to the URL
// (Kubo 0.9's urlstore add): the content is streamed once to hash it and
// nothing of it is stored; reads fetch byte ranges from the URL again.

package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/filestore"
	"github.com/ipfs/go-cid"
)

// URLStoreMaxSize caps how many bytes urlstore add reads from one URL.
var URLStoreMaxSize int64 = 16 << 30

// URLStoreTimeout bounds the wait for the response headers and for each
// read of the body (a stalled server fails the add).
var URLStoreTimeout = 30 * time.Second

var urlClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	ResponseHeaderTimeout: URLStoreTimeout,
	TLSHandshakeTimeout:   URLStoreTimeout,
	IdleConnTimeout:       90 * time.Second,
}}

// AddURL adds the content at url with raw leaves and CIDv1 as references
// to the URL, pinning the root when pin is set. It returns the root and
// the byte count read.
func (u *UnixFS) AddURL(ctx context.Context, url string, trickle, pin bool) (cid.Cid, int64, error) {
	if !filestore.IsURL(url) {
		return cid.Undef, 0, fmt.Errorf("unsupported url syntax: %s", url)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wf := &webFile{ctx: ctx, cancel: cancel, url: url, max: URLStoreMaxSize}
	defer wf.Close()
	ver, raw := 1, true
	a, err := u.NewAdder(ctx, AddOptions{
		CidVersion: &ver, RawLeaves: &raw, NoCopy: true, Trickle: trickle,
		Pin: pin, Silent: true, EmptyDirs: true,
	}, func(AddEvent) error { return nil })
	if err != nil {
		return cid.Undef, 0, err
	}
	roots, err := a.AddAll(files.NewMapDirectory(map[string]files.Node{"url": wf}))
	if err != nil {
		return cid.Undef, 0, err
	}
	return roots[0], wf.read, nil
}

// webFile streams a URL's body for the importer, with a size cap and an
// idle timeout; its AbsPath (the URL) makes the importer write URL
// references.
type webFile struct {
	ctx    context.Context
	cancel context.CancelFunc
	url    string
	max    int64

	once    sync.Once
	err     error
	body    io.ReadCloser
	size    int64
	read    int64
	timer   *time.Timer
	stalled atomic.Bool
}

var _ files.FileInfo = (*webFile)(nil)

func (w *webFile) start() error {
	w.once.Do(func() {
		req, err := http.NewRequestWithContext(w.ctx, http.MethodGet, w.url, nil)
		if err != nil {
			w.err = err
			return
		}
		resp, err := urlClient.Do(req)
		if err != nil {
			w.err = err
			return
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			resp.Body.Close()
			w.err = fmt.Errorf("got non-2XX status code %d: %s", resp.StatusCode, w.url)
			return
		}
		if resp.ContentLength > w.max {
			resp.Body.Close()
			w.err = fmt.Errorf("%s is %d bytes, over the urlstore limit of %d bytes", w.url, resp.ContentLength, w.max)
			return
		}
		w.body, w.size = resp.Body, resp.ContentLength
		w.timer = time.AfterFunc(URLStoreTimeout, func() {
			w.stalled.Store(true)
			w.cancel()
		})
	})
	return w.err
}

func (w *webFile) Read(b []byte) (int, error) {
	if err := w.start(); err != nil {
		return 0, err
	}
	w.timer.Reset(URLStoreTimeout)
	k, err := w.body.Read(b)
	w.read += int64(k)
	if w.read > w.max {
		return k, fmt.Errorf("%s: over the urlstore limit of %d bytes", w.url, w.max)
	}
	if err != nil && !errors.Is(err, io.EOF) && w.stalled.Load() {
		return k, fmt.Errorf("%s: no data for %s: %w", w.url, URLStoreTimeout, err)
	}
	return k, err
}

func (w *webFile) Close() error {
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.body != nil {
		return w.body.Close()
	}
	return nil
}

func (w *webFile) Size() (int64, error) {
	if err := w.start(); err != nil {
		return 0, err
	}
	if w.size < 0 {
		return -1, errors.New("Content-Length header was not set")
	}
	return w.size, nil
}

func (w *webFile) Mode() os.FileMode  { return 0 }
func (w *webFile) ModTime() time.Time { return time.Time{} }
func (w *webFile) AbsPath() string    { return w.url }
func (w *webFile) Stat() os.FileInfo  { return nil }
