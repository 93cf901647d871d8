// republish.go: the IPNS republisher. Every Ipns.RepublishPeriod (4h) the
// online node signs the record of each of its keys again (the value kept in
// the local record store, a new lifetime of Ipns.RecordLifetime, 48h, never
// shorter than the record had) and puts it to the DHT (and pubsub). Keys go one at a
// time, at most one per republishGap, so a node with many names does not
// flood its uplink; a key that fails is retried after
// republishRetry, the others go on. The records live in the store, so a
// restart (or a board that was off for the night) republishes on the
// first round, one minute after the network starts.

package node

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"cairn/node/config"

	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/namesys"
	ds "github.com/ipfs/go-datastore"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Republisher timing (variables so that tests can shorten them).
var (
	republishFirst = time.Minute
	republishGap   = time.Second
	republishRetry = 5 * time.Minute
)

// RepublishStats counts what the republisher did (for tests and logs).
type RepublishStats struct {
	Rounds, Republished, Failed int
}

// defaultRepublishPeriod is Ipns.RepublishPeriod's default, as Kubo's.
const defaultRepublishPeriod = 4 * time.Hour

// checkRepublishTimes refuses, as Kubo 0.43 does when its node goes
// online, a record lifetime shorter than the republish period: the
// records would expire before they are signed again.
func checkRepublishTimes(cfg *config.Config) error {
	period, err := config.DurationOr(cfg.Ipns.RepublishPeriod, defaultRepublishPeriod, "Ipns.RepublishPeriod")
	if err != nil {
		return err
	}
	lifetime, err := config.DurationOr(cfg.Ipns.RecordLifetime, DefaultRecordLifetime, "Ipns.RecordLifetime")
	if err != nil {
		return err
	}
	if lifetime < period {
		return fmt.Errorf("config setting IPNS.RecordLifetime (%s) must be >= IPNS.RepublishPeriod (%s), otherwise records expire before they are republished", lifetime, period)
	}
	return nil
}

// republishLoop runs the republisher until ctx ends (the network's).
func (n *Node) republishLoop(ctx context.Context) {
	period, err := config.DurationOr(n.Config().Ipns.RepublishPeriod, defaultRepublishPeriod, "Ipns.RepublishPeriod")
	if err != nil {
		period = defaultRepublishPeriod
	}
	wait := min(republishFirst, period)
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if _, failed := n.Names().Republish(ctx); failed > 0 && republishRetry < period {
			wait = republishRetry
		} else {
			wait = period
		}
	}
}

// Republish signs again and publishes the record of every key that
// has one in the local record store. It returns how many were
// republished and how many failed.
func (m *Names) Republish(ctx context.Context) (done, failed int) {
	n := m.n
	lifetime, err := config.DurationOr(n.Config().Ipns.RecordLifetime, DefaultRecordLifetime, "Ipns.RecordLifetime")
	if err != nil {
		lifetime = DefaultRecordLifetime
	}
	keys := []crypto.PrivKey{n.PrivKey}
	if ks, err := n.keystore(); err == nil {
		names, _ := ks.List()
		sort.Strings(names)
		for _, name := range names {
			if sk, err := ks.Get(name); err == nil {
				keys = append(keys, sk)
			}
		}
	}
	s, ns, err := n.names()
	if err != nil {
		return 0, len(keys)
	}
	for i, sk := range keys {
		if i > 0 {
			select {
			case <-ctx.Done():
				return done, failed
			case <-time.After(republishGap):
			}
		}
		switch err := n.republishOne(ctx, s, ns, sk, lifetime); {
		case errors.Is(err, errNoRecord):
		case err != nil:
			failed++
		default:
			done++
		}
	}
	m.repubMu.Lock()
	m.repub.Rounds++
	m.repub.Republished += done
	m.repub.Failed += failed
	m.repubMu.Unlock()
	return done, failed
}

var errNoRecord = errors.New("no record")

func (n *Node) republishOne(ctx context.Context, s *nameSys, ns namesys.NameSystem, sk crypto.PrivKey, lifetime time.Duration) error {
	id, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return err
	}
	raw, err := n.Store.Datastore().Get(ctx, namesys.IpnsDsKey(ipns.NameFromPeer(id)))
	if errors.Is(err, ds.ErrNotFound) {
		return errNoRecord
	}
	if err != nil {
		return err
	}
	rec, err := ipns.UnmarshalRecord(raw)
	if err != nil {
		return err
	}
	val, err := rec.Value()
	if err != nil {
		return err
	}
	now, err := n.clockSet()
	if err != nil {
		log.Warnf("republishing %s: %v", id, err)
		return err
	}
	eol := now.Add(lifetime)
	if prev, err := rec.Validity(); err == nil && prev.After(eol) {
		eol = prev
	}
	opts := []namesys.PublishOption{namesys.PublishWithEOL(eol)}
	if ttl, err := rec.TTL(); err == nil {
		opts = append(opts, namesys.PublishWithTTL(ttl))
	}
	if !n.namesOnline() {
		ctx = OfflineContext(ctx)
	}
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	return ns.Publish(ctx, sk, val, opts...)
}

// RepublishStats returns the republisher's counters.
func (m *Names) RepublishStats() RepublishStats {
	m.repubMu.Lock()
	defer m.repubMu.Unlock()
	return m.repub
}
