// provide.go: announcing content to the DHT: the provide queue drained
// at a bounded rate, the periodic reprovide of the roots Options.Roots
// lists (the node's pinned roots) or of every stored block (sweep.go),
// and their counters (stats/provide).

package p2p

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/routing"
	"golang.org/x/time/rate"
)

// ProvideStats are the counters of stats/provide.
type ProvideStats struct {
	TotalProvides          int64
	AvgProvideDuration     time.Duration
	LastReprovideBatchSize int
	LastReprovideDuration  time.Duration
	// LastReprovide is when the last reprovide of the pinned roots
	// started (zero before the first).
	LastReprovide time.Time
	Queued        int
	Dropped       int64
}

// Provide queues c for announcement to the DHT (dropped when the queue
// is full; the periodic reprovide catches up). Without a DHT it does
// nothing.
func (nt *Net) Provide(c cid.Cid) {
	if nt.DHT == nil {
		return
	}
	select {
	case nt.provideQ <- c:
	default:
		nt.provMu.Lock()
		nt.prov.Dropped++
		nt.provMu.Unlock()
	}
}

// ProvideOnce queues c for announcement as Provide does, but waits for
// room in the queue rather than dropping c (provide once); it ends with
// ctx. Without a DHT it returns routing.ErrNotSupported.
func (nt *Net) ProvideOnce(ctx context.Context, c cid.Cid) error {
	if nt.DHT == nil {
		return routing.ErrNotSupported
	}
	select {
	case nt.provideQ <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-nt.ctx.Done():
		return nt.ctx.Err()
	}
}

// ClearProvideQueue drops every CID waiting in the provide queue and
// returns how many (provide clear); the periodic reprovide is unchanged.
func (nt *Net) ClearProvideQueue() int {
	n := 0
	for {
		select {
		case <-nt.provideQ:
			n++
		default:
			return n
		}
	}
}

// ProvideNow announces c and waits for the DHT to accept it.
func (nt *Net) ProvideNow(ctx context.Context, c cid.Cid) error {
	if nt.DHT == nil {
		return routing.ErrNotSupported
	}
	start := time.Now()
	err := nt.DHT.Provide(ctx, c, true)
	if err == nil {
		nt.provMu.Lock()
		d := time.Since(start)
		tot := nt.prov.TotalProvides
		nt.prov.AvgProvideDuration = time.Duration((int64(nt.prov.AvgProvideDuration)*tot + int64(d)) / (tot + 1))
		nt.prov.TotalProvides++
		nt.provMu.Unlock()
	}
	return err
}

// SweepStats returns the last reprovide of every stored block (zero
// without Options.ProvideAll or before the first).
func (nt *Net) SweepStats() SweepStats {
	if nt.sweep == nil {
		return SweepStats{}
	}
	nt.sweep.stMu.Lock()
	defer nt.sweep.stMu.Unlock()
	return nt.sweep.last
}

// ProvideStats returns the provide counters.
func (nt *Net) ProvideStats() ProvideStats {
	nt.provMu.Lock()
	defer nt.provMu.Unlock()
	s := nt.prov
	s.Queued = len(nt.provideQ)
	return s
}

// Reprovide schedule of the pinned roots.
const (
	reprovideFirst = time.Minute
	// ReprovideInterval is the period of the reprovide.
	ReprovideInterval = 22 * time.Hour
)

// provideRate bounds announcements: a board should not flood the DHT.
var provideRate = rate.Limit(2)

// provider drains the provide queue at provideRate, and reprovides the
// pinned roots a minute after start, then every 22 hours.
func (nt *Net) provider() {
	defer nt.wg.Done()
	lim := rate.NewLimiter(provideRate, 4)
	// The first reprovide comes a minute after start (the bootstrap
	// peers are connected by then), the next ones every 22 hours.
	tick := time.NewTicker(reprovideFirst)
	defer tick.Stop()
	first := true
	for {
		select {
		case <-nt.ctx.Done():
			return
		case c := <-nt.provideQ:
			if lim.Wait(nt.ctx) != nil {
				return
			}
			ctx, cancel := context.WithTimeout(nt.ctx, time.Minute)
			_ = nt.ProvideNow(ctx, c)
			cancel()
		case <-tick.C:
			if first {
				tick.Reset(ReprovideInterval)
				first = false
			}
			nt.reprovideTick()
		}
	}
}

func (nt *Net) reprovideTick() {
	if nt.roots != nil || nt.sweep != nil {
		_, _ = nt.Reprovide(nt.ctx, nt.roots)
	}
}

// Reprovide announces the CIDs roots lists now (bitswap reprovide), or
// with Options.ProvideAll every stored block, and returns how many it
// announced.
func (nt *Net) Reprovide(ctx context.Context, roots func(context.Context) ([]cid.Cid, error)) (int, error) {
	if nt.DHT == nil {
		return 0, errors.New("reprovide: Routing.Type is none")
	}
	if nt.sweep != nil {
		st, err := nt.sweep.cycle(ctx)
		if err == nil {
			nt.provMu.Lock()
			nt.prov.LastReprovideBatchSize = st.Keys
			nt.prov.LastReprovideDuration = st.Duration
			nt.prov.LastReprovide = st.Start
			nt.prov.TotalProvides += int64(st.Keys)
			nt.provMu.Unlock()
		}
		return st.Keys, err
	}
	start := time.Now()
	cids, err := roots(ctx)
	if err != nil {
		return 0, err
	}
	var errs []string
	for _, c := range cids {
		if err := nt.ProvideNow(ctx, c); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", c, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	nt.provMu.Lock()
	nt.prov.LastReprovideBatchSize = len(cids)
	nt.prov.LastReprovideDuration = time.Since(start)
	nt.prov.LastReprovide = start
	nt.provMu.Unlock()
	if len(errs) > 0 {
		return len(cids) - len(errs), fmt.Errorf("reprovide: %s", strings.Join(errs, "; "))
	}
	return len(cids), nil
}
