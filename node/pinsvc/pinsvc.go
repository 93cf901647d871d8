// Package pinsvc is cairn's client of remote pinning services (the IPFS
// Pinning Service API): boxo's client with a bound on every wait and
// errors that are clear and never hold the service's key. The node's
// RemotePins facet (node/remotepin.go) makes its clients from the
// services of the config and runs the remote pin workflow with them.
package pinsvc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	pinclient "github.com/ipfs/boxo/pinning/remote/client"
	"github.com/ipfs/boxo/pinning/remote/client/openapi"
)

// Timeout bounds each wait for a service's answer (a listing waits that
// long for each page). Kubo waits forever.
var Timeout = 60 * time.Second

// PageSize is how many requests a listing asks for at a time (the API's
// maximum; Kubo leaves boxo's 10). Fewer round trips, and a service whose
// paging is loose (IPFS Cluster's pinsvcapi neither sorts by date nor
// excludes the 'before' date itself) pages only past it.
var PageSize = 1000

// Client talks to one service.
type Client struct {
	// C is boxo's client, for the calls Call wraps.
	C   *pinclient.Client
	key string
}

// New returns a client of the service at endpoint with its key.
func New(endpoint, key string) *Client {
	return &Client{C: pinclient.NewClient(endpoint, key), key: key}
}

// Call runs fn with a deadline of Timeout and makes its error clear and
// safe to show (see clean).
func (s *Client) Call(ctx context.Context, fn func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	err := fn(cctx)
	return s.clean(err, ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded))
}

// Ls lists the requests matching opts (PageSize a page), calling fn for
// each. The wait for each page is bounded by Timeout; a request seen
// twice is skipped, and a whole page of them (the service's paging does
// not move on) ends the listing with an error rather than a loop.
func (s *Client) Ls(parent context.Context, fn func(pinclient.PinStatusGetter) error, opts ...pinclient.LsOption) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var timedOut atomic.Bool
	idle := time.AfterFunc(Timeout, func() { timedOut.Store(true); cancel() })
	defer idle.Stop()
	ch := make(chan pinclient.PinStatusGetter)
	errc := make(chan error, 1)
	opts = append(opts, pinclient.PinOpts.Limit(PageSize))
	go func() { errc <- s.C.Ls(ctx, ch, opts...) }()
	seen := map[string]bool{}
	var fnErr error
	dups := 0
	for ps := range ch {
		idle.Reset(Timeout)
		if fnErr != nil {
			continue
		}
		if id := ps.GetRequestId(); seen[id] {
			if dups++; dups >= PageSize {
				fnErr = fmt.Errorf("remote pinning service repeats the same pins from page to page (after %d pins)", len(seen))
				cancel()
			}
			continue
		} else {
			seen[id] = true
		}
		if fnErr = fn(ps); fnErr != nil {
			cancel()
		}
	}
	err := <-errc
	if fnErr != nil {
		return fnErr
	}
	return s.clean(err, parent.Err() == nil && timedOut.Load())
}

// Counts are a service's requests per status.
type Counts struct {
	Queued  int
	Pinning int
	Pinned  int
	Failed  int
}

// Count asks the service for its count of each status.
func (s *Client) Count(ctx context.Context) (*Counts, error) {
	pc := &Counts{}
	counts := map[pinclient.Status]*int{
		pinclient.StatusQueued: &pc.Queued, pinclient.StatusPinning: &pc.Pinning,
		pinclient.StatusPinned: &pc.Pinned, pinclient.StatusFailed: &pc.Failed,
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(counts))
	for status, dst := range counts {
		wg.Go(func() {
			errs <- s.Call(ctx, func(ctx context.Context) (err error) {
				_, *dst, err = s.C.LsBatchSync(ctx, pinclient.PinOpts.Limit(1), pinclient.PinOpts.FilterStatus(status))
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return pc, nil
}

// httpErrStatus is compiled at its first use, not at every start.
var httpErrStatus = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^remote pinning service returned http error (\d{3}): `)
})

// clean makes a client error clear and safe to show: a wait cut short by
// Timeout says so; an answer that is not the API's JSON says what came
// back (a 401 or 403 that the key was refused); Kubo's texts stay where
// they are clear. The key never appears: any copy of it (a service may
// echo it) becomes "<key>".
func (s *Client) clean(err error, timedOut bool) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var oerr openapi.GenericOpenAPIError
	switch {
	case timedOut:
		msg = fmt.Sprintf("remote pinning service did not answer within %s", Timeout)
	case errors.As(err, &oerr) && oerr.Model() == nil:
		m := httpErrStatus().FindStringSubmatch(msg)
		if m == nil {
			break
		}
		code, _ := strconv.Atoi(m[1])
		switch {
		case code < 300:
			msg = "remote pinning service answered invalid JSON: " + oerr.Error()
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			msg = m[0] + "the service refused the key (" + http.StatusText(code) + ")"
		default:
			msg = m[0] + bodySnippet(oerr.Body(), code)
		}
	}
	if len(s.key) >= 4 {
		msg = strings.ReplaceAll(msg, s.key, "<key>")
	}
	return errors.New(msg)
}

// bodySnippet is the first line of an error body, at most 200 bytes, or
// the status text.
func bodySnippet(b []byte, code int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return http.StatusText(code)
	}
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, line)
}
