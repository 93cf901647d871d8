// providers.go: the DHT's provider records, capped. kad-dht stores every
// ADD_PROVIDER a peer sends while the DHT serves; cappedProviders wraps
// its provider manager and refuses records past Limits.ProviderRecords
// in all and Limits.ProviderRecordsPerPeer per peer, counting what the
// datastore holds. The node's own provides always pass.

package p2p

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
	logging "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p-kad-dht/records"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/multiformats/go-base32"
)

// providersLog has the name of kad-dht's provider manager's logger.
var providersLog = logging.Logger("providers")

// errProviderCap is what a refused record gets (kad-dht drops it).
var errProviderCap = errors.New("provider records: cap reached, record refused")

// ProviderStats are the provider records the DHT stores for other peers
// and those it refused past the caps since start.
type ProviderStats struct {
	Stored  int    // records of other peers, as last counted plus those accepted since
	Refused uint64 // records refused since start
	Max     int    // Limits.ProviderRecords
	PerPeer int    // Limits.ProviderRecordsPerPeer
}

// Recounts: hourly, since kad-dht's manager removes expired records every
// hour without saying so, and at most once a minute when a cap is hit,
// since a peer announcing one key again counts again until the next one.
const (
	providerRecountEvery = time.Hour
	providerRecountMin   = time.Minute
)

// cappedProviders is a records.ProviderStore that counts the records of
// other peers and refuses those past its caps. The count is the
// datastore's, recounted from its keys (/providers/<key>/<peer>), plus
// what was accepted since the recount began, so it errs on the high side.
type cappedProviders struct {
	inner   records.ProviderStore
	dstore  ds.Datastore
	self    peer.ID
	max     int
	perPeer int
	refused atomic.Uint64
	shun    *shunList // strikes for refused records (nil: none kept)

	mu         sync.Mutex
	total      int
	byPeer     map[peer.ID]int
	recounting bool
	lastCount  time.Time
	during     map[peer.ID]int // accepted while a recount runs

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// newCappedProviders wraps kad-dht's provider manager over dstore with the
// caps max (all other peers) and perPeer, and counts what dstore already
// holds in the background. A cap of 0 is none. Each refused record is a
// strike against its peer in shun (nil: none kept).
func newCappedProviders(ctx context.Context, self peer.ID, ps peerstore.Peerstore, dstore ds.Batching, max, perPeer int, shun *shunList) (*cappedProviders, error) {
	ctx, cancel := context.WithCancel(ctx)
	pm, err := records.NewProviderManager(ctx, self, ps, dstore)
	if err != nil {
		cancel()
		return nil, err
	}
	if max <= 0 {
		max = math.MaxInt
	}
	if perPeer <= 0 {
		perPeer = max
	}
	c := &cappedProviders{inner: pm, dstore: dstore, self: self, max: max, perPeer: perPeer, shun: shun,
		byPeer: map[peer.ID]int{}, ctx: ctx, cancel: cancel}
	c.mu.Lock()
	c.startRecount()
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(providerRecountEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.mu.Lock()
				c.startRecount()
				c.mu.Unlock()
			}
		}
	}()
	return c, nil
}

// AddProvider stores the record unless it is another peer's past a cap.
func (c *cappedProviders) AddProvider(ctx context.Context, key []byte, prov peer.AddrInfo) error {
	if prov.ID == c.self {
		return c.inner.AddProvider(ctx, key, prov)
	}
	c.mu.Lock()
	if c.total >= c.max || c.byPeer[prov.ID] >= c.perPeer {
		if time.Since(c.lastCount) >= providerRecountMin {
			c.startRecount()
		}
		c.mu.Unlock()
		c.refused.Add(1)
		if c.shun != nil {
			c.shun.strike(prov.ID, 1, "keeps sending provider records past the caps") // kad-dht takes only the sender's own records
		}
		return errProviderCap
	}
	c.total++
	c.byPeer[prov.ID]++
	if c.during != nil {
		c.during[prov.ID]++
	}
	c.mu.Unlock()
	return c.inner.AddProvider(ctx, key, prov)
}

// GetProviders is kad-dht's.
func (c *cappedProviders) GetProviders(ctx context.Context, key []byte) ([]peer.AddrInfo, error) {
	return c.inner.GetProviders(ctx, key)
}

// Close stops the recounts and the provider manager; once, since the WAN
// and LAN DHTs share the store and each closes it.
func (c *cappedProviders) Close() error {
	var err error
	c.once.Do(func() {
		c.cancel()
		c.wg.Wait()
		err = c.inner.Close()
	})
	return err
}

// Stats returns the counts.
func (c *cappedProviders) Stats() ProviderStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ProviderStats{Stored: c.total, Refused: c.refused.Load(), Max: c.max, PerPeer: c.perPeer}
}

// has reports whether p has records counted.
func (c *cappedProviders) has(p peer.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byPeer[p] > 0
}

// startRecount counts the datastore's records in the background unless a
// count runs already; c.mu is held.
func (c *cappedProviders) startRecount() {
	if c.recounting || c.ctx.Err() != nil {
		return
	}
	c.recounting = true
	c.lastCount = time.Now()
	c.during = map[peer.ID]int{}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		byPeer, err := c.count()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.recounting = false
		during := c.during
		c.during = nil
		if err != nil {
			if c.ctx.Err() == nil {
				providersLog.Errorf("provider records: counting: %v", err)
			}
			return
		}
		// Records accepted during the count may or may not be in it: they
		// are added again, so the count errs on the high side.
		total := 0
		for p, n := range during {
			byPeer[p] += n
		}
		for _, n := range byPeer {
			total += n
		}
		c.total, c.byPeer = total, byPeer
	}()
}

// count reads the keys of the provider records and counts them per peer
// (the last element of the key, base32 of the peer ID), the node's own
// left out.
func (c *cappedProviders) count() (map[peer.ID]int, error) {
	res, err := c.dstore.Query(c.ctx, dsq.Query{Prefix: records.ProvidersKeyPrefix, KeysOnly: true})
	if err != nil {
		return nil, err
	}
	defer res.Close()
	byPeer := map[peer.ID]int{}
	for e := range res.Next() {
		if e.Error != nil {
			return nil, e.Error
		}
		raw, err := base32.RawStdEncoding.DecodeString(e.Key[strings.LastIndexByte(e.Key, '/')+1:])
		if err != nil {
			continue // not a record kad-dht would read either
		}
		if p := peer.ID(raw); p != c.self {
			byPeer[p]++
		}
	}
	return byPeer, c.ctx.Err()
}
