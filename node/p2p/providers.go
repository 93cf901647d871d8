// providers.go: the DHT's provider records, capped. kad-dht stores every
// ADD_PROVIDER a peer sends while the DHT serves; cappedProviders wraps
// its provider manager and refuses records past Limits.ProviderRecords
// in all and Limits.ProviderRecordsPerPeer per peer, counting what the
// datastore holds. The node's own provides always pass.
//
// The room is shared fairly: past the cap, a peer holding fewer than half
// as many records as the largest holder may still store some (up to a
// sixteenth of the cap more), and the next count then evicts records of
// the largest holders until the total is that sixteenth under the cap.
// So a flood from many peer IDs cannot keep honest peers' new records out
// until its own expire (48 h).

package p2p

import (
	"context"
	"crypto/rand"
	"errors"
	"math"
	"sort"
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
// and those it refused past the caps or evicted since start.
type ProviderStats struct {
	Stored  int    // records of other peers, as last counted plus those accepted since
	Refused uint64 // records refused since start
	Evicted uint64 // records of the largest holders removed to make room, since start
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

// providerEvictEvery is how often at most a count runs to evict records
// once the total has passed the cap (a variable for tests).
var providerEvictEvery = 10 * time.Second

// cappedProviders is a records.ProviderStore that counts the records of
// other peers and refuses those past its caps. The count is the
// datastore's, recounted from its keys (/providers/<key>/<peer>), plus
// what was accepted since the recount began, so it errs on the high side.
type cappedProviders struct {
	inner   records.ProviderStore
	dstore  ds.Batching
	self    peer.ID
	max     int
	perPeer int
	slack   int // past max, for peers holding less than half of top
	refused atomic.Uint64
	evicted atomic.Uint64
	shun    *shunList // strikes for refused records (nil: none kept)

	mu         sync.Mutex
	total      int
	byPeer     map[peer.ID]int
	top        int // the most records one peer holds, as counted and accepted since
	recounting bool
	evictSoon  bool // a count to evict is due at lastCount+providerEvictEvery
	lastCount  time.Time
	during     map[peer.ID]int // accepted while a recount runs
	writing    map[peer.ID]int // accepted, not yet handed to the provider manager

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
		slack: providerSlack(max), byPeer: map[peer.ID]int{}, writing: map[peer.ID]int{}, ctx: ctx, cancel: cancel}
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

// providerSlack is how far past a cap of max records peers holding few
// may go: a sixteenth of it, at least one (none without a cap).
func providerSlack(max int) int {
	if max == math.MaxInt {
		return 0
	}
	return (max + 15) / 16
}

// AddProvider stores the record unless it is another peer's past a cap.
func (c *cappedProviders) AddProvider(ctx context.Context, key []byte, prov peer.AddrInfo) error {
	if prov.ID == c.self {
		return c.inner.AddProvider(ctx, key, prov)
	}
	c.mu.Lock()
	n := c.byPeer[prov.ID]
	if n >= c.perPeer || c.total >= c.max && (c.total >= c.max+c.slack || n >= c.top/2) {
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
	c.byPeer[prov.ID] = n + 1
	c.top = max(c.top, n+1)
	if c.during != nil {
		c.during[prov.ID]++
	}
	c.writing[prov.ID]++
	over := c.total > c.max
	c.mu.Unlock()
	err := c.inner.AddProvider(ctx, key, prov)
	c.mu.Lock()
	if c.writing[prov.ID]--; c.writing[prov.ID] == 0 {
		delete(c.writing, prov.ID)
	}
	if over {
		c.evictLater() // now that the count can see this record
	}
	c.mu.Unlock()
	return err
}

// evictLater starts a count, which evicts past the cap, once
// providerEvictEvery has passed since the last; c.mu is held.
func (c *cappedProviders) evictLater() {
	if c.evictSoon || c.recounting || c.ctx.Err() != nil {
		return
	}
	wait := time.Until(c.lastCount.Add(providerEvictEvery))
	if wait <= 0 {
		c.startRecount()
		return
	}
	c.evictSoon = true
	time.AfterFunc(wait, func() { // after Close, startRecount does nothing
		c.mu.Lock()
		defer c.mu.Unlock()
		c.evictSoon = false
		c.startRecount()
	})
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
	return ProviderStats{Stored: c.total, Refused: c.refused.Load(), Evicted: c.evicted.Load(), Max: c.max, PerPeer: c.perPeer}
}

// has reports whether p has records counted.
func (c *cappedProviders) has(p peer.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byPeer[p] > 0
}

// startRecount counts the datastore's records in the background unless a
// count runs already, and evicts if they are past the cap; c.mu is held.
func (c *cappedProviders) startRecount() {
	if c.recounting || c.ctx.Err() != nil {
		return
	}
	c.recounting = true
	c.lastCount = time.Now()
	// Records accepted but not yet written may be missed by the count:
	// they are added to it like those accepted during it.
	c.during = make(map[peer.ID]int, len(c.writing))
	for p, n := range c.writing {
		c.during[p] = n
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		byPeer, keys, err := c.count()
		if err == nil {
			err = c.evict(byPeer, keys)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.recounting = false
		during := c.during
		c.during = nil
		if err != nil {
			if c.ctx.Err() == nil {
				providersLog.Errorf("provider records: counting or evicting: %v", err)
			}
			return
		}
		// Records accepted during the count (or before it, not yet
		// written) may or may not be in it: they are added again, so the
		// count errs on the high side.
		total, top := 0, 0
		for p, n := range during {
			byPeer[p] += n
		}
		for _, n := range byPeer {
			total += n
			top = max(top, n)
		}
		c.total, c.byPeer, c.top = total, byPeer, top
		if total > c.max {
			c.evictLater() // accepted during the count, past the cap
		}
	}()
}

// evict removes records of the peers holding the most, each down to the
// same level, until the total counted in byPeer is a slack under the cap,
// and updates byPeer; keys are the records counted.
func (c *cappedProviders) evict(byPeer map[peer.ID]int, keys []string) error {
	total := 0
	for _, n := range byPeer {
		total += n
	}
	if total <= c.max {
		return nil
	}
	level := evictLevel(byPeer, total-(c.max-c.slack))
	var drop []ds.Key
	for _, k := range keys {
		if p, _ := providerPeer(k); byPeer[p] > level {
			byPeer[p]--
			drop = append(drop, ds.RawKey(k))
		}
	}
	b, err := c.dstore.Batch(c.ctx)
	if err != nil {
		return err
	}
	for _, k := range drop {
		if err := b.Delete(c.ctx, k); err != nil {
			return err
		}
	}
	if err := b.Commit(c.ctx); err != nil {
		return err
	}
	c.evicted.Add(uint64(len(drop)))
	providersLog.Infof("provider records: %d past the cap of %d, %d of the largest holders' evicted (each down to %d)", total-c.max, c.max, len(drop), level)
	return nil
}

// evictLevel is the highest count to which cutting every peer above it
// removes at least excess records.
func evictLevel(byPeer map[peer.ID]int, excess int) int {
	counts := make([]int, 0, len(byPeer))
	for _, n := range byPeer {
		counts = append(counts, n)
	}
	if len(counts) == 0 {
		return 0
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	level, above, removed := counts[0], 0, 0
	for removed < excess && level > 0 {
		for above < len(counts) && counts[above] >= level {
			above++
		}
		level--
		removed += above
	}
	return level
}

// count reads the keys of the provider records and counts them per peer
// (the last element of the key, base32 of the peer ID), the node's own
// left out; it returns the keys it counted too.
func (c *cappedProviders) count() (map[peer.ID]int, []string, error) {
	c.flush()
	res, err := c.dstore.Query(c.ctx, dsq.Query{Prefix: records.ProvidersKeyPrefix, KeysOnly: true})
	if err != nil {
		return nil, nil, err
	}
	defer res.Close()
	byPeer := map[peer.ID]int{}
	var keys []string
	for e := range res.Next() {
		if e.Error != nil {
			return nil, nil, e.Error
		}
		if p, ok := providerPeer(e.Key); ok && p != c.self {
			byPeer[p]++
			keys = append(keys, e.Key)
		}
	}
	return byPeer, keys, c.ctx.Err()
}

// flush has kad-dht's provider manager write the records it holds in its
// batch (up to 256) to the datastore, so that a count sees them: asking it
// for the providers of a key it has not cached reads the datastore, which
// flushes the batch first. The key is new each time (one entry of its
// cache), under a prefix no multihash has.
func (c *cappedProviders) flush() {
	k := make([]byte, 16)
	rand.Read(k)
	_, _ = c.inner.GetProviders(c.ctx, append([]byte("cairn/flush/"), k...))
}

// providerPeer is the peer of a provider record's key (its last element,
// base32 of the peer ID); false for a key kad-dht would not read either.
func providerPeer(key string) (peer.ID, bool) {
	raw, err := base32.RawStdEncoding.DecodeString(key[strings.LastIndexByte(key, '/')+1:])
	return peer.ID(raw), err == nil
}
