// sweep.go: announcing every stored block (Provide.Strategy "all") with
// kad-dht's sweeping provider, a slice of the DHT keyspace at a time, so
// that a reprovide never holds more than one slice of the store's keys.

package p2p

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ipfs/go-cid"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p-kad-dht/dual"
	"github.com/libp2p/go-libp2p-kad-dht/provider"
	mh "github.com/multiformats/go-multihash"
)

// DefaultSweepBatch is how many keys a reprovide aims to hand the
// providers at once (Kubo's Provide.DHT.KeystoreBatchSize default).
const DefaultSweepBatch = 1 << 14

// maxSweepPasses bounds the passes over the index a reprovide takes: past
// DefaultSweepBatch*maxSweepPasses keys, a slice holds more than a batch.
const maxSweepPasses = 64

// sweepPoll is how often a reprovide looks whether the providers have sent
// a slice's records.
const sweepPoll = 100 * time.Millisecond

// AllKeys lists every stored block's multihash (Options.AllKeys).
type AllKeys struct {
	// Count is about how many keys ForEach will list.
	Count func() (int, error)
	// ForEach calls fn for every key; fn must copy what it keeps.
	ForEach func(ctx context.Context, fn func(mh.Multihash) error) error
}

// sweeper drives kad-dht's sweeping providers (one per DHT of the dual
// DHT) without their own schedule or keystore: Kubo's keystore-driven
// reprovide reads every key of a keyspace region at once, and with fewer
// than a bucket of peers (a LAN) one region is the whole keyspace. Each
// pass over the index instead takes the keys whose SHA-256 (their place
// in the DHT keyspace) falls in one slice, hands them to the providers
// with ProvideOnce and waits until they are sent.
type sweeper struct {
	provs []*provider.SweepingProvider // LAN, WAN
	dhts  []*dht.IpfsDHT               // the same order
	names []string
	keys  AllKeys
	batch int

	mu   sync.Mutex // serialises cycles
	last SweepStats
	stMu sync.Mutex
}

// SweepStats sums up the last reprovide of every stored block.
type SweepStats struct {
	Start    time.Time
	Duration time.Duration
	Keys     int // keys handed to the providers
	Passes   int
	// MaxSlice is the most keys one pass held.
	MaxSlice int
	// Online names the DHTs whose provider was online (the others were
	// skipped: nothing to announce to).
	Online []string
	// OneByOne counts the keys announced one at a time after the sweep
	// left some of their slice (summed over the providers); Unsent those
	// that failed even so.
	OneByOne, Unsent int
}

func newSweeper(d *dual.DHT, keys AllKeys, batch int) (*sweeper, error) {
	if batch <= 0 {
		batch = DefaultSweepBatch
	}
	sw := &sweeper{keys: keys, batch: batch}
	for i, x := range []*dht.IpfsDHT{d.LAN, d.WAN} {
		name := [...]string{"LAN", "WAN"}[i]
		p, err := provider.New(
			provider.WithHost(x.Host()),
			provider.WithRouter(x),
			provider.WithMessageSender(x.MessageSender()),
			provider.WithSelfAddrs(x.FilteredAddrs),
			provider.WithReplicationFactor(x.BucketSize()),
			// No schedule and no keystore: the reprovide below feeds it.
			provider.WithReprovideInterval(0),
			provider.WithLoggerName("dht/provider/"+name),
		)
		if err != nil {
			sw.close()
			return nil, fmt.Errorf("starting the %s sweeping provider: %w", name, err)
		}
		sw.provs = append(sw.provs, p)
		sw.dhts = append(sw.dhts, x)
		sw.names = append(sw.names, name)
	}
	return sw, nil
}

func (sw *sweeper) close() {
	for _, p := range sw.provs {
		_ = p.Close()
	}
}

// online returns the indexes in sw.provs of the providers online now.
func (sw *sweeper) online(ctx context.Context) []int {
	var idx []int
	for i, p := range sw.provs {
		if st, err := p.Stats(ctx); err == nil && st.Connectivity.Status == "online" {
			idx = append(idx, i)
		}
	}
	return idx
}

// provideEachWorkers is how many keys provideEach announces at once.
const provideEachWorkers = 8

// provideEach announces keys one at a time through d (a lookup and the
// records for each), and returns how many failed.
func provideEach(ctx context.Context, d *dht.IpfsDHT, keys []mh.Multihash) (int, error) {
	var failed atomic.Int64
	ch := make(chan mh.Multihash)
	var wg sync.WaitGroup
	for range provideEachWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range ch {
				if d.Provide(ctx, cid.NewCidV1(cid.Raw, k), true) != nil {
					failed.Add(1)
				}
			}
		}()
	}
	for _, k := range keys {
		select {
		case ch <- k:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(ch)
	wg.Wait()
	return int(failed.Load()), ctx.Err()
}

// errSweepOffline is a reprovide's error when no provider is online.
var errSweepOffline = errors.New("reprovide: no DHT peers to announce to yet")

// cycle announces every stored block once, a keyspace slice per pass.
func (sw *sweeper) cycle(ctx context.Context) (SweepStats, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	st := SweepStats{Start: time.Now()}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	online := sw.online(ctx)
	for _, i := range online {
		st.Online = append(st.Online, sw.names[i])
	}
	if len(online) == 0 {
		return st, errSweepOffline
	}
	n, err := sw.keys.Count()
	if err != nil {
		return st, err
	}
	st.Passes = min(max(1, (n+sw.batch-1)/sw.batch), maxSweepPasses)
	for pass := 0; pass < st.Passes; pass++ {
		var slice []mh.Multihash
		err := sw.keys.ForEach(ctx, func(h mh.Multihash) error {
			if keyspaceSlice(h, st.Passes) == pass {
				slice = append(slice, append(mh.Multihash(nil), h...))
			}
			return nil
		})
		if err != nil {
			return st, err
		}
		st.MaxSlice = max(st.MaxSlice, len(slice))
		st.Keys += len(slice)
		for _, i := range online {
			short, err := sw.provide(ctx, sw.provs[i], slice)
			if err == nil && short > 0 {
				// The sweep left keys (seen with fewer peers than a
				// bucket, where a keyspace region may hold none but
				// this node): announce the slice one key at a time.
				st.OneByOne += len(slice)
				short, err = provideEach(ctx, sw.dhts[i], slice)
			}
			if err != nil {
				return st, err
			}
			st.Unsent += short
		}
	}
	st.Duration = time.Since(st.Start)
	sw.stMu.Lock()
	sw.last = st
	sw.stMu.Unlock()
	return st, nil
}

// sweepTries is how many times a slice is handed to a provider that sent
// fewer of its keys than it was given.
const sweepTries = 2

// provide hands slice to p and waits until p has sent it, and hands it
// again (up to sweepTries times, 2 s apart) when p sent fewer
// keys than it holds: a provider drops what it is handed while it is not
// ready (it has gone online but not yet sized the network), and what it
// was sending when it went offline. It returns how many keys of slice p
// did not send.
func (sw *sweeper) provide(ctx context.Context, p *provider.SweepingProvider, slice []mh.Multihash) (int, error) {
	sent := 0
	for try := 0; try < sweepTries && sent < len(slice); try++ {
		if try > 0 {
			// A provider that just dropped keys is often between a
			// failed connectivity check and the next: give it time.
			select {
			case <-ctx.Done():
				return len(slice) - sent, ctx.Err()
			case <-time.After(time.Second << try):
			}
		}
		if ok, err := waitReady(ctx, p); err != nil || !ok {
			return len(slice) - sent, err
		}
		st, err := p.Stats(ctx)
		if err != nil {
			return len(slice) - sent, err
		}
		before := st.Operations.Past.KeysProvided
		if err := p.ProvideOnce(slice...); err != nil {
			return len(slice) - sent, err
		}
		if err := drain(ctx, p); err != nil {
			return len(slice) - sent, err
		}
		if st, err = p.Stats(ctx); err != nil {
			return len(slice) - sent, err
		}
		sent = max(sent, int(st.Operations.Past.KeysProvided-before))
	}
	return max(0, len(slice)-sent), nil
}

// sweepReadyWait bounds the wait for a provider to be ready again.
const sweepReadyWait = 2 * time.Minute

// waitReady waits until p is online and has sized the network (false
// when it is still not ready after sweepReadyWait).
func waitReady(ctx context.Context, p *provider.SweepingProvider) (bool, error) {
	deadline := time.Now().Add(sweepReadyWait)
	for {
		st, err := p.Stats(ctx)
		if err != nil {
			return false, err
		}
		if st.Connectivity.Status == "online" && st.Schedule.AvgPrefixLength >= 0 {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(sweepPoll):
		}
	}
}

// drain waits until p holds no key waiting or being sent. A provider
// that failed a region puts its keys back in its queue and checks its
// connectivity: while it is disconnected they wait there, and are sent
// once it is back; only one gone offline (no peers for
// Provide.DHT.OfflineDelay) drops them.
func drain(ctx context.Context, p *provider.SweepingProvider) error {
	t := time.NewTicker(sweepPoll)
	defer t.Stop()
	for {
		st, err := p.Stats(ctx)
		if err != nil {
			return err
		}
		if st.Connectivity.Status == "offline" || (st.Queues.PendingKeyProvides == 0 && st.Operations.Ongoing.KeyProvides == 0) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// keyspaceSlice is which of n equal slices of the DHT keyspace h's
// provider records go to: by the first 32 bits of its SHA-256, the key
// kad-dht places them by.
func keyspaceSlice(h mh.Multihash, n int) int {
	k := sha256.Sum256(h)
	return int(uint64(binary.BigEndian.Uint32(k[:4])) * uint64(n) >> 32)
}
