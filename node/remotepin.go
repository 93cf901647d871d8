// remotepin.go: the remote pinning services of the config
// (Pinning.RemoteServices, Kubo's keys), the remote pin workflow (Pin:
// the request, the node offered as an origin, the wait for the service)
// and the holds that keep a DAG from garbage collection while a remote
// service copies it from this node.

package node

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	gopath "path"
	"strings"
	"time"

	"cairn/node/pinsvc"

	pinclient "github.com/ipfs/boxo/pinning/remote/client"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"
)

// Errors of the remote pinning services, with Kubo's texts.
var (
	ErrServiceUnknown     = errors.New("service not known")
	ErrServicePresent     = errors.New("service already present")
	ErrServiceNameMissing = errors.New("remote pinning service name not specified")
	// ErrServiceKeyInvalid refuses a key that cannot travel in an HTTP
	// header (a newline, say); the key itself is never quoted.
	ErrServiceKeyInvalid = errors.New("service key must not be empty or contain control characters such as a newline")
)

// NormalizeEndpoint checks a Pinning Service API endpoint and cleans its
// path, as Kubo does: an http(s) URL, no query, no /pins suffix, no
// trailing or doubled slashes.
func NormalizeEndpoint(endpoint string) (string, error) {
	uri, err := neturl.ParseRequestURI(endpoint)
	if err != nil || (uri.Scheme != "http" && uri.Scheme != "https") || uri.Host == "" {
		return "", errors.New("service endpoint must be a valid HTTP URL")
	}
	uri.Path = gopath.Clean(uri.Path)
	uri.Path = strings.TrimSuffix(uri.Path, ".")
	uri.Path = strings.TrimSuffix(uri.Path, "/")
	if uri.RawQuery != "" {
		return "", errors.New("service endpoint should be provided without any query parameters")
	}
	if strings.HasSuffix(uri.Path, "/pins") {
		return "", errors.New("service endpoint should be provided without the /pins suffix")
	}
	return uri.String(), nil
}

// checkServiceKey refuses keys that are empty or hold control characters.
func checkServiceKey(key string) error {
	if key == "" {
		return ErrServiceKeyInvalid
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return ErrServiceKeyInvalid
		}
	}
	return nil
}

// AddService stores a pinning service under name (Kubo's service
// add): the endpoint normalised, the key with the config's other secrets.
func (r *RemotePins) AddService(name, endpoint, key string) error {
	n := r.n
	if name == "" {
		return ErrServiceNameMissing
	}
	ep, err := NormalizeEndpoint(endpoint)
	if err != nil {
		return err
	}
	if err := checkServiceKey(key); err != nil {
		return err
	}
	return n.ConfigFile().Update(func(doc map[string]any) error {
		svcs, err := remoteServicesDoc(doc, true)
		if err != nil {
			return err
		}
		if _, ok := svcs[name]; ok {
			return ErrServicePresent
		}
		svcs[name] = map[string]any{
			"API": map[string]any{"Endpoint": ep, "Key": key},
			"Policies": map[string]any{
				"MFS": map[string]any{"Enable": false, "PinName": "", "RepinInterval": ""},
			},
		}
		return nil
	})
}

// RemoveService forgets a pinning service (Kubo's service rm; an
// unknown name is not an error).
func (r *RemotePins) RemoveService(name string) error {
	n := r.n
	return n.ConfigFile().Update(func(doc map[string]any) error {
		svcs, err := remoteServicesDoc(doc, false)
		if err != nil || svcs == nil {
			return err
		}
		delete(svcs, name)
		return nil
	})
}

// Service returns the endpoint and key of the named service.
func (r *RemotePins) Service(name string) (endpoint, key string, err error) {
	n := r.n
	if name == "" {
		return "", "", ErrServiceNameMissing
	}
	svc, ok := n.Config().Pinning.RemoteServices[name]
	if !ok {
		return "", "", ErrServiceUnknown
	}
	if endpoint, err = NormalizeEndpoint(svc.API.Endpoint); err != nil {
		return "", "", err
	}
	if err := checkServiceKey(svc.API.Key); err != nil {
		return "", "", fmt.Errorf("service %q: %w", name, err)
	}
	return endpoint, svc.API.Key, nil
}

// remoteServicesDoc returns the Pinning.RemoteServices map of a config
// document, creating it (and Pinning) when create is set.
func remoteServicesDoc(doc map[string]any, create bool) (map[string]any, error) {
	pin, _ := doc["Pinning"].(map[string]any)
	if pin == nil {
		if doc["Pinning"] != nil {
			return nil, errors.New("config: Pinning is not a map")
		}
		if !create {
			return nil, nil
		}
		pin = map[string]any{}
		doc["Pinning"] = pin
	}
	svcs, _ := pin["RemoteServices"].(map[string]any)
	if svcs == nil {
		if pin["RemoteServices"] != nil {
			return nil, errors.New("config: Pinning.RemoteServices is not a map")
		}
		if !create {
			return nil, nil
		}
		svcs = map[string]any{}
		pin["RemoteServices"] = svcs
	}
	return svcs, nil
}

// Hold keeps the DAG under root from garbage collection until release is
// called (each Hold needs its own release; releasing twice is harmless).
// A collection marks the held DAG's stored blocks as it marks pins; a
// block missing from the store ends that walk without failing the
// collection, so only the stored part is kept.
func (r *RemotePins) Hold(root cid.Cid) (release func()) {
	n := r.n
	r.holdMu.Lock()
	if r.holds == nil {
		r.holds = map[cid.Cid]int{}
	}
	r.holds[root]++
	r.holdMu.Unlock()
	if n.Storage().gc.running.Load() {
		// A collection already past its mark: mark the DAG now.
		mark := func(c cid.Cid) error { n.Storage().gc.mark(c.Hash()); return nil }
		_ = n.Dag().Walk(context.Background(), root, nil, mark)
	}
	var done bool
	return func() {
		r.holdMu.Lock()
		defer r.holdMu.Unlock()
		if done {
			return
		}
		done = true
		if r.holds[root]--; r.holds[root] <= 0 {
			delete(r.holds, root)
		}
	}
}

// MaxHeldWatches caps the DAGs HoldUntil keeps at once.
const MaxHeldWatches = 64

// HoldUntil holds root (as Hold) in the background while the network
// runs, asking poll at growing intervals (500 ms doubling to 30 s) until
// it reports done, for at most maxHold; pin/remote/add --background uses
// it to keep the blocks a service is copying. It reports false, holding
// nothing, when the node is offline, root is an identity CID (no stored
// block) or MaxHeldWatches holds are running.
func (r *RemotePins) HoldUntil(root cid.Cid, maxHold time.Duration, poll func(ctx context.Context) (done bool)) bool {
	n := r.n
	nt := n.Net
	if nt == nil || root.Prefix().MhType == mh.IDENTITY {
		return false
	}
	if r.watches.Add(1) > MaxHeldWatches {
		r.watches.Add(-1)
		return false
	}
	release := r.Hold(root)
	ctx, cancel := context.WithTimeout(nt.Ctx(), maxHold)
	nt.Go(func(context.Context) {
		defer r.watches.Add(-1)
		defer release()
		defer cancel()
		wait := 500 * time.Millisecond
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if poll(ctx) {
				return
			}
			wait = min(2*wait, 30*time.Second)
		}
	})
	return true
}

// markLive names every held root: a held DAG is live as far as it is
// stored (a remote service may still be fetching it).
func (r *RemotePins) markLive(_ context.Context, walk func(cid.Cid) error, _ func(cid.Cid)) error {
	r.holdMu.Lock()
	roots := make([]cid.Cid, 0, len(r.holds))
	for c := range r.holds {
		roots = append(roots, c)
	}
	r.holdMu.Unlock()
	for _, c := range roots {
		if err := walk(c); err != nil && !IsNotFound(err) {
			return fmt.Errorf("held DAG %s: %w", c, err)
		}
	}
	return nil
}

// remotePinPoll is how often Pin asks for the status while it waits
// (Kubo's 500 ms).
const remotePinPoll = 500 * time.Millisecond

// remoteBackgroundHold bounds how long a background request keeps its
// blocks from GC while the service has not pinned it.
const remoteBackgroundHold = 24 * time.Hour

// Client returns a client of the named service.
func (r *RemotePins) Client(name string) (*pinsvc.Client, error) {
	endpoint, key, err := r.Service(name)
	if err != nil {
		return nil, err
	}
	return pinsvc.New(endpoint, key), nil
}

// RemotePinOptions tune RemotePins.Pin.
type RemotePinOptions struct {
	// Name is the pin's name at the service (checked by the caller).
	Name string
	// Background returns the service's first answer at once; the blocks
	// stay held from GC until the service pins them or fails (for at
	// most a day).
	Background bool
	// Progress, if set, is called with each new status while Pin waits.
	Progress func(pinclient.PinStatusGetter) error
}

// Pin asks svc to pin root, as Kubo's pin remote add does, and returns
// the last status the service gave. When root is stored here the node
// offers itself as an origin, dials the service's delegates, and holds
// the DAG from GC until the service has it. Without Background it waits
// for the pinned or failed status, polling every remotePinPoll; a caller
// that gives up leaves the request on the service.
func (r *RemotePins) Pin(ctx context.Context, svc *pinsvc.Client, root cid.Cid, o RemotePinOptions) (pinclient.PinStatusGetter, error) {
	n := r.n
	var opts []pinclient.AddOption
	if o.Name != "" {
		opts = append(opts, pinclient.PinOpts.WithName(o.Name))
	}
	stored, err := n.Blocks.Has(ctx, root)
	if err != nil {
		return nil, err
	}
	nt := n.Net
	if stored && nt != nil {
		addrs, err := peer.AddrInfoToP2pAddrs(host.InfoFromHost(nt.Host))
		if err != nil {
			return nil, err
		}
		opts = append(opts, pinclient.PinOpts.WithOrigins(addrs...))
	}
	var ps pinclient.PinStatusGetter
	if err := svc.Call(ctx, func(ctx context.Context) (err error) {
		ps, err = svc.C.Add(ctx, root, opts...)
		return err
	}); err != nil {
		return nil, err
	}
	// Delegates are the service's peers for this transfer: dial them
	// (best effort, in the background, as Kubo tries them).
	if nt != nil {
		for _, d := range ps.GetDelegates() {
			if ai, err := peer.AddrInfoFromP2pAddr(d); err == nil {
				go func() {
					ctx, cancel := context.WithTimeout(nt.Ctx(), 30*time.Second)
					defer cancel()
					_ = nt.Connect(ctx, *ai)
				}()
			}
		}
	}
	requestID := ps.GetRequestId()
	status := func(ctx context.Context) (pinclient.PinStatusGetter, error) {
		var got pinclient.PinStatusGetter
		err := svc.Call(ctx, func(ctx context.Context) (err error) {
			got, err = svc.C.GetStatusByID(ctx, requestID)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("failed to check pin status for requestid=%q due to error: %v", requestID, err)
		}
		if got.GetRequestId() != requestID {
			return nil, fmt.Errorf("failed to check pin status for requestid=%q, remote service sent unexpected requestid=%q", requestID, got.GetRequestId())
		}
		return got, nil
	}
	if o.Background {
		if stored && ps.GetStatus() != pinclient.StatusPinned {
			r.HoldUntil(root, remoteBackgroundHold, func(ctx context.Context) bool {
				got, err := status(ctx)
				if err != nil {
					return false
				}
				s := got.GetStatus()
				return s == pinclient.StatusPinned || s == pinclient.StatusFailed
			})
		}
		return ps, nil
	}
	if stored {
		defer r.Hold(root)()
	}
	last := pinclient.StatusUnknown
	tick := time.NewTicker(remotePinPoll)
	defer tick.Stop()
	for {
		s := ps.GetStatus()
		if s == pinclient.StatusPinned {
			return ps, nil
		}
		if s == pinclient.StatusFailed {
			return nil, fmt.Errorf("remote service failed to pin requestid=%q", requestID)
		}
		if o.Progress != nil && s != last {
			if err := o.Progress(ps); err != nil {
				return nil, err
			}
			last = s
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for pin interrupted, requestid=%q remains on remote service", requestID)
		}
		if ps, err = status(ctx); err != nil {
			return nil, err
		}
	}
}
