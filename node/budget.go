// budget.go: the network limits derived from the memory budget
// (Budget.MemoryMiB) and the Swarm section of the config.

package node

import (
	"fmt"
	"time"

	"cairn/board"
	"cairn/node/config"
	"cairn/node/p2p"
)

// DefaultMemoryMiB is the budget assumed when Budget.MemoryMiB is unset.
const DefaultMemoryMiB = 1024

// NetLimitsOf derives the network limits from the config.
func NetLimitsOf(c *config.Config) (p2p.Limits, error) {
	l := p2p.Limits{MemoryMiB: c.Budget.MemoryMiB}
	if l.MemoryMiB <= 0 {
		l.MemoryMiB = DefaultMemoryMiB
	}
	small := l.MemoryMiB <= 512
	l.LibP2PMemory = int64(board.NetMemoryMiB(l.MemoryMiB)) << 20
	l.LowWater, l.HighWater = 20, 40
	if small {
		l.LowWater, l.HighWater = 10, 20
	}
	cm := c.Swarm.ConnMgr
	if v := cm.LowWater.WithDefault(0); v > 0 {
		l.LowWater = int(v)
	}
	if v := cm.HighWater.WithDefault(0); v > 0 {
		l.HighWater = int(v)
	}
	if l.HighWater < l.LowWater {
		return l, fmt.Errorf("config Swarm.ConnMgr: HighWater %d below LowWater %d", l.HighWater, l.LowWater)
	}
	l.GracePeriod = time.Minute
	if !cm.GracePeriod.IsDefault() {
		d := cm.GracePeriod.WithDefault(0)
		if d < 0 {
			return l, fmt.Errorf("config Swarm.ConnMgr.GracePeriod %q: want a duration", d)
		}
		l.GracePeriod = d
	}
	// The resource manager refuses connections well past the high water
	// mark; the connection manager trims back to the low one.
	l.ConnsInbound = 2 * l.HighWater
	if l.ConnsInbound < 64 {
		l.ConnsInbound = 64
	}
	l.ConnsOutbound = l.ConnsInbound
	l.Streams = 16 * l.ConnsInbound
	l.EngineTaskWorkers, l.EngineBlockstoreWorkers, l.TaskWorkers = 4, 16, 4
	l.MaxOutstandingBytes = 1 << 20
	l.MaxWantlistPerPeer = 1024
	l.PrefetchWindow = 32
	// A sixty-fourth of the budget per subscription, between 2 and 16 MiB
	// (at least two messages of the 1 MiB limit).
	l.PubsubQueueBytes = min(max(l.MemoryMiB<<20/64, 2<<20), 16<<20)
	// Peers' topic subscriptions: a sixty-fourth of the budget at about
	// 512 bytes each (a topic of a hundred bytes and the maps that hold
	// it), 32,768 at 1024 MiB, 8,192 at 256 MiB: 8 peers at the
	// per-peer cap, or hundreds at a few topics each.
	l.PubsubTopics = max(l.MemoryMiB<<20/64/512, p2p.PubsubPeerTopics)
	if err := providerLimits(c, &l); err != nil {
		return l, err
	}
	if small {
		l.EngineTaskWorkers, l.EngineBlockstoreWorkers, l.TaskWorkers = 2, 4, 2
		l.MaxOutstandingBytes = 256 << 10
		l.MaxWantlistPerPeer = 256
		l.PrefetchWindow = 16
	}
	bw := c.Swarm.Bandwidth
	for _, f := range []struct {
		key string
		s   string
		dst *int64
	}{{"LANIn", bw.LANIn, &l.LANIn}, {"LANOut", bw.LANOut, &l.LANOut}, {"WANIn", bw.WANIn, &l.WANIn}, {"WANOut", bw.WANOut, &l.WANOut}} {
		if f.s == "" {
			continue
		}
		v, err := config.ParseSize("Swarm.Bandwidth."+f.key, f.s)
		if err != nil {
			return l, err
		}
		if v == 0 || v > 1<<40 {
			return l, fmt.Errorf("config Swarm.Bandwidth.%s %q: want a byte rate such as 512KiB", f.key, f.s)
		}
		*f.dst = int64(v)
	}
	return l, nil
}

// providerRecordBytes is about what a provider record takes in the store
// (its key, /providers/<base32 key>/<base32 peer>, about 130 bytes, a
// time, and bbolt's page overhead), rounded up: 65,536 records grew the
// attack's repo by 27.7 MiB, bbolt growing its file in steps.
const providerRecordBytes = 256

// providerLimits caps the provider records the DHT stores for other
// peers at a thousandth of Datastore.StorageMax (10 GB when unset or 0)
// and at 256 a MiB of the memory budget, since kad-dht's hourly expiry
// and the cap's recount read every record: between 4,096 and 1,048,576
// records, 39,062 at 10 GB (10^10 bytes), 65,536 at 256 MiB. One peer may hold an eighth of them, so that a few peers
// cannot take all; records of any number of peers stay within the total
// and a sixteenth of it (node/p2p/providers.go evicts back under it).
func providerLimits(c *config.Config, l *p2p.Limits) error {
	sm, err := config.ParseStorageMax(c.Datastore.StorageMax)
	if err != nil {
		return err
	}
	if sm == 0 {
		sm = 10e9
	}
	n := min(int(min(sm/1000/providerRecordBytes, 1<<20)), l.MemoryMiB*256)
	l.ProviderRecords = max(n, 4096)
	l.ProviderRecordsPerPeer = max(l.ProviderRecords/8, 1)
	return nil
}
