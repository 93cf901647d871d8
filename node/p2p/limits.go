// limits.go: the numbers the network layer runs with, derived by the
// caller from the memory budget and the Swarm section of the config.

package p2p

import "time"

// Limits are the numbers the network layer runs with.
type Limits struct {
	MemoryMiB int
	// LibP2PMemory is the resource manager's system memory limit (bytes).
	LibP2PMemory int64
	// ConnsInbound, ConnsOutbound, Streams cap the resource manager's
	// system scope.
	ConnsInbound, ConnsOutbound, Streams int
	// Connection manager water marks and grace period.
	LowWater, HighWater int
	GracePeriod         time.Duration
	// Bitswap: engine workers, bytes queued per peer, want-list entries
	// accepted per peer, blocks prefetched ahead of a reader.
	EngineTaskWorkers       int
	EngineBlockstoreWorkers int
	TaskWorkers             int
	MaxOutstandingBytes     int
	MaxWantlistPerPeer      uint
	PrefetchWindow          int
	// PubsubQueueBytes bounds the queue of each pubsub subscription.
	PubsubQueueBytes int
	// PubsubTopics bounds the topic subscriptions of all peers that
	// pubsub tracks (PubsubPeerTopics bounds each peer's).
	PubsubTopics int
	// ProviderRecords caps the provider records the DHT stores for
	// other peers (ADD_PROVIDER), ProviderRecordsPerPeer those of one
	// peer; past them records are refused (providers.go). 0: no cap.
	ProviderRecords, ProviderRecordsPerPeer int
	// Bandwidth caps in bytes per second (0: none).
	LANIn, LANOut, WANIn, WANOut int64
}
