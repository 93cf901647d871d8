// config.go: the config file's Go type, every section with Kubo 0.42's
// key names and value types, and cairn's own keys beside them.

package config

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"cairn/board"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Config is the repo's config file. Sections and keys are Kubo 0.42's
// (config/*.go of github.com/ipfs/kubo, tag v0.42.0, field by field);
// the keys only cairn has carry the tag kubo:"-": Kubo's checks and
// defaults (CheckKey's messages, FillMissing) pass over them. Values
// keep Kubo's JSON shape, so a decode and encode leaves a Kubo document
// as Kubo wrote it; cairn reads only some of them.
type Config struct {
	Identity      Identity
	Datastore     Datastore
	Addresses     Addresses
	Mounts        Mounts
	Discovery     Discovery
	Routing       Routing
	Ipns          Ipns
	Bootstrap     []string
	Gateway       Gateway
	API           API
	Swarm         SwarmConfig
	AutoNAT       AutoNATConfig
	AutoTLS       AutoTLS
	Pubsub        PubsubConfig
	Peering       Peering
	DNS           DNS
	Migration     Migration
	AutoConf      AutoConf
	Provide       Provide
	Provider      Provider
	Reprovider    Reprovider
	HTTPRetrieval HTTPRetrieval
	Experimental  Experiments
	Plugins       Plugins
	// Pinning holds the remote pinning services of pin/remote. Each
	// service's API.Key is a secret: it stays in this file (mode 0600,
	// beside Identity.PrivKey) and is never shown by config show, service
	// ls or any error.
	Pinning  Pinning
	Import   Import
	Version  Version
	Internal Internal
	Bitswap  Bitswap
	// Budget is cairn's: the memory budget every limit is derived from
	// (package board).
	Budget board.Budget `kubo:"-"`
	// Modules is cairn's: the module facility (web apps on 5280/5281).
	Modules ModulesConfig `kubo:"-"`
}

// Identity is the node's key pair.
type Identity struct {
	PeerID  string
	PrivKey string `json:",omitempty"`
}

// Datastore is the storage section. cairn reads StorageMax (e.g. "10GB"),
// StorageGCWatermark (percent of StorageMax) and GCPeriod (a Go
// duration); its store is always <repo>/blocks.db, whatever Spec says.
type Datastore struct {
	StorageMax         string
	StorageGCWatermark int64
	GCPeriod           string
	Type               string           `json:",omitempty"`
	Path               string           `json:",omitempty"`
	NoSync             bool             `json:",omitempty"`
	Params             *json.RawMessage `json:",omitempty"`
	Spec               map[string]any
	HashOnRead         bool
	BloomFilterSize    int
	BlockKeyCacheSize  OptionalInteger
	WriteThrough       Flag `json:",omitempty"`
}

// Addresses lists listen and announce addresses.
type Addresses struct {
	Swarm          []string
	Announce       []string
	AppendAnnounce []string
	NoAnnounce     []string
	API            Strings
	Gateway        Strings
}

// Mounts are the FUSE mount points.
type Mounts struct {
	IPFS           string
	IPNS           string
	MFS            string
	FuseAllowOther Flag
	StoreMtime     Flag
	StoreMode      Flag
}

// Discovery is local peer discovery.
type Discovery struct{ MDNS MDNS }

// MDNS is multicast DNS discovery.
type MDNS struct{ Enabled bool }

// Routing is content and peer routing.
type Routing struct {
	Type                 *OptionalString `json:",omitempty"`
	AcceleratedDHTClient Flag            `json:",omitempty"`
	// LoopbackAddressesOnLanDHT keeps loopback addresses in the LAN DHT's
	// peer and provider records (the test profile sets it), so nodes on
	// one machine find each other.
	LoopbackAddressesOnLanDHT Flag     `json:",omitempty"`
	IgnoreProviders           []string `json:",omitempty"`
	DelegatedRouters          []string
	Routers                   map[string]Router `json:",omitempty"`
	Methods                   map[string]Method `json:",omitempty"`
}

// Router is one custom router.
type Router struct {
	Type       string
	Parameters any
}

// Method names the router a routing method uses.
type Method struct{ RouterName string }

// Ipns is IPNS publishing and resolving (docs/names.md).
type Ipns struct {
	// RepublishPeriod is how often the node signs its records again
	// (Go duration; "" is 4h).
	RepublishPeriod string
	// RecordLifetime is the lifetime of republished records ("" is 48h).
	RecordLifetime string
	// ResolveCacheSize is the number of resolved names kept (0 is 128;
	// capped by the memory budget).
	ResolveCacheSize int
	// MaxCacheTTL caps how long a resolved name is cached (null: the
	// record's TTL).
	MaxCacheTTL *OptionalDuration `json:",omitempty"`
	// UsePubsub turns IPNS over pubsub on (daemon --enable-namesys-pubsub
	// too); it starts pubsub as well.
	UsePubsub Flag `json:",omitempty"`
	// DelegatedPublishers are the HTTP publishers of IPNS records: base
	// URLs or URLs ending in /routing/v1/ipns, and "auto" (the node's
	// DelegatedPublishers says what it stands for).
	DelegatedPublishers []string
}

// Gateway is the HTTP gateway.
type Gateway struct {
	HTTPHeaders             map[string][]string
	RootRedirect            string
	NoFetch                 bool
	NoDNSLink               bool
	DeserializedResponses   Flag
	AllowCodecConversion    Flag
	DisableHTMLErrors       Flag
	PublicGateways          map[string]*GatewaySpec
	ExposeRoutingAPI        Flag
	RetrievalTimeout        *OptionalDuration `json:",omitempty"`
	MaxRequestDuration      *OptionalDuration `json:",omitempty"`
	MaxConcurrentRequests   *OptionalInteger  `json:",omitempty"`
	MaxRangeRequestFileSize *OptionalBytes    `json:",omitempty"`
	DiagnosticServiceURL    *OptionalString   `json:",omitempty"`
}

// GatewaySpec is one entry of Gateway.PublicGateways.
type GatewaySpec struct {
	Paths                 []string
	UseSubdomains         bool
	NoDNSLink             bool
	InlineDNSLink         Flag
	DeserializedResponses Flag
}

// API is the RPC server.
type API struct {
	HTTPHeaders    map[string][]string
	Authorizations map[string]*RPCAuthScope `json:",omitempty"`
	// AllowUnauthenticated is cairn's: allow a non-loopback API address
	// without Authorizations.
	AllowUnauthenticated bool `json:",omitempty" kubo:"-"`
}

// RPCAuthScope is one entry of API.Authorizations (Kubo's format), and of
// Modules.Authorizations.
type RPCAuthScope struct {
	AuthSecret   string
	AllowedPaths []string
}

// AuthHeaderValue turns an AuthSecret ("bearer:T", "basic:u:p",
// "basic:<b64>", or a bare token) into the Authorization header it expects.
func AuthHeaderValue(secret string) (string, bool) {
	typ, val, ok := strings.Cut(secret, ":")
	if !ok {
		return "Bearer " + secret, true
	}
	switch strings.ToLower(typ) {
	case "bearer":
		return "Bearer " + val, true
	case "basic":
		if strings.Contains(val, ":") {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(val)), true
		}
		return "Basic " + val, true
	}
	return "", false
}

// SwarmConfig is libp2p (docs/networking.md).
type SwarmConfig struct {
	// AddrFilters are /ip4|ip6/<addr>/ipcidr/<bits> ranges the node
	// neither dials nor accepts (swarm/filters).
	AddrFilters             []string
	DisableBandwidthMetrics bool
	DisableNatPortMap       bool
	RelayClient             RelayClient
	RelayService            RelayService
	EnableHolePunching      Flag `json:",omitempty"`
	Transports              Transports
	ConnMgr                 ConnMgr
	ResourceMgr             ResourceMgr
	// Bandwidth is cairn's: caps per direction for LAN (private and
	// loopback) and WAN peers, e.g. "512KiB" (per second); "" is no cap.
	Bandwidth BandwidthCaps `json:",omitempty" kubo:"-"`
}

// BandwidthCaps are byte rates per second, as sizes ("1MB", "256KiB");
// empty means unlimited.
type BandwidthCaps struct {
	LANIn  string `json:",omitempty"`
	LANOut string `json:",omitempty"`
	WANIn  string `json:",omitempty"`
	WANOut string `json:",omitempty"`
}

// RelayClient is the circuit relay client.
type RelayClient struct {
	Enabled      Flag     `json:",omitempty"`
	StaticRelays []string `json:",omitempty"`
}

// RelayService is the circuit relay service.
type RelayService struct {
	Enabled                 Flag              `json:",omitempty"`
	ConnectionDurationLimit *OptionalDuration `json:",omitempty"`
	ConnectionDataLimit     *OptionalInteger  `json:",omitempty"`
	ReservationTTL          *OptionalDuration `json:",omitempty"`
	MaxReservations         *OptionalInteger  `json:",omitempty"`
	MaxCircuits             *OptionalInteger  `json:",omitempty"`
	BufferSize              *OptionalInteger  `json:",omitempty"`
	MaxReservationsPerIP    *OptionalInteger  `json:",omitempty"`
	MaxReservationsPerASN   *OptionalInteger  `json:",omitempty"`
}

// Transports turns transports, security and muxers on and off.
type Transports struct {
	Network struct {
		QUIC         Flag `json:",omitempty"`
		TCP          Flag `json:",omitempty"`
		Websocket    Flag `json:",omitempty"`
		Relay        Flag `json:",omitempty"`
		WebTransport Flag `json:",omitempty"`
		WebRTCDirect Flag `json:",omitempty"`
	}
	Security struct {
		TLS   Priority `json:",omitempty"`
		Noise Priority `json:",omitempty"`
	}
	Multiplexers struct {
		Yamux Priority `json:",omitempty"`
	}
}

// ConnMgr is the connection manager. cairn reads LowWater, HighWater and
// GracePeriod (unset: derived from the memory budget).
type ConnMgr struct {
	Type          *OptionalString   `json:",omitempty"`
	LowWater      *OptionalInteger  `json:",omitempty"`
	HighWater     *OptionalInteger  `json:",omitempty"`
	GracePeriod   *OptionalDuration `json:",omitempty"`
	SilencePeriod *OptionalDuration `json:",omitempty"`
}

// ResourceMgr is the libp2p resource manager.
type ResourceMgr struct {
	Enabled            Flag             `json:",omitempty"`
	Limits             swarmLimits      `json:",omitempty"`
	MaxMemory          *OptionalBytes   `json:",omitempty"`
	MaxFileDescriptors *OptionalInteger `json:",omitempty"`
	Allowlist          []string         `json:",omitempty"`
}

// AutoNATConfig is the AutoNAT service.
type AutoNATConfig struct {
	ServiceMode AutoNATServiceMode     `json:",omitempty"`
	Throttle    *AutoNATThrottleConfig `json:",omitempty"`
}

// AutoNATThrottleConfig limits AutoNAT.
type AutoNATThrottleConfig struct {
	GlobalLimit, PeerLimit int
	Interval               OptionalDuration
}

// AutoTLS is the p2p-forge certificate client.
type AutoTLS struct {
	Enabled              Flag              `json:",omitempty"`
	AutoWSS              Flag              `json:",omitempty"`
	SkipDNSLookup        Flag              `json:",omitempty"`
	DomainSuffix         *OptionalString   `json:",omitempty"`
	RegistrationEndpoint *OptionalString   `json:",omitempty"`
	RegistrationToken    *OptionalString   `json:",omitempty"`
	RegistrationDelay    *OptionalDuration `json:",omitempty"`
	CAEndpoint           *OptionalString   `json:",omitempty"`
	ShortAddrs           Flag              `json:",omitempty"`
}

// PubsubConfig is pubsub (docs/pubsub.md).
type PubsubConfig struct {
	// Router is "gossipsub" (also for "") or "floodsub".
	Router string
	// DisableSigning sends unsigned messages (and accepts them).
	DisableSigning bool
	// Enabled turns pubsub on (daemon --enable-pubsub-experiment too).
	Enabled Flag `json:",omitempty"`
	// SeenMessagesTTL is how long a message ID is remembered (default
	// 120s).
	SeenMessagesTTL *OptionalDuration `json:",omitempty"`
	// SeenMessagesStrategy is "last-seen" (default) or "first-seen".
	SeenMessagesStrategy *OptionalString `json:",omitempty"`
}

// Peering lists peers the node keeps connected (reconnecting with a
// backoff). swarm/peering/add and rm change the running set only, as in
// Kubo.
type Peering struct{ Peers []peer.AddrInfo }

// DNS is DNSLink lookups.
type DNS struct {
	// Resolvers maps a domain suffix ("eth.", or "." for all) to a
	// DNS-over-HTTPS URL; domains not listed use the system resolver.
	Resolvers map[string]string
	// MaxCacheTTL caps how long DNS answers are cached (not used: cairn
	// keeps no DNS cache of its own beyond the name cache).
	MaxCacheTTL *OptionalDuration `json:",omitempty"`
}

// Migration configures repo migrations.
type Migration struct {
	DownloadSources []string `json:",omitempty"`
	Keep            string   `json:",omitempty"`
}

// AutoConf is the remote defaults service. cairn fetches no AutoConf:
// Enabled false only makes "auto" in Ipns.DelegatedPublishers stand for
// nothing, as in Kubo.
type AutoConf struct {
	URL                   *OptionalString   `json:",omitempty"`
	Enabled               Flag              `json:",omitempty"`
	RefreshInterval       *OptionalDuration `json:",omitempty"`
	TLSInsecureSkipVerify Flag              `json:",omitempty"`
}

// Provide is announcing content to the routing system.
type Provide struct {
	Enabled     Flag             `json:",omitempty"`
	Strategy    *OptionalString  `json:",omitempty"`
	BloomFPRate *OptionalInteger `json:",omitempty"`
	DHT         ProvideDHT
}

// ProvideDHT is providing to the DHT.
type ProvideDHT struct {
	Interval                  *OptionalDuration `json:",omitempty"`
	MaxWorkers                *OptionalInteger  `json:",omitempty"`
	SweepEnabled              Flag              `json:",omitempty"`
	DedicatedPeriodicWorkers  *OptionalInteger  `json:",omitempty"`
	DedicatedBurstWorkers     *OptionalInteger  `json:",omitempty"`
	MaxProvideConnsPerWorker  *OptionalInteger  `json:",omitempty"`
	KeystoreBatchSize         *OptionalInteger  `json:",omitempty"`
	OfflineDelay              *OptionalDuration `json:",omitempty"`
	SendProviderRecordTimeout *OptionalDuration `json:",omitempty"`
	ResumeEnabled             Flag              `json:",omitempty"`
}

// Provider is deprecated (use Provide).
type Provider struct {
	Enabled     Flag             `json:",omitempty"`
	Strategy    *OptionalString  `json:",omitempty"`
	WorkerCount *OptionalInteger `json:",omitempty"`
}

// Reprovider is deprecated (use Provide).
type Reprovider struct {
	Interval *OptionalDuration `json:",omitempty"`
	Strategy *OptionalString   `json:",omitempty"`
}

// HTTPRetrieval is fetching blocks over HTTP.
type HTTPRetrieval struct {
	Enabled               Flag             `json:",omitempty"`
	Allowlist             []string         `json:",omitempty"`
	Denylist              []string         `json:",omitempty"`
	NumWorkers            *OptionalInteger `json:",omitempty"`
	MaxBlockSize          *OptionalString  `json:",omitempty"`
	TLSInsecureSkipVerify Flag             `json:",omitempty"`
}

// Experiments are feature gates. cairn reads FilestoreEnabled,
// UrlstoreEnabled and Libp2pStreamMounting (the p2p commands).
type Experiments struct {
	FilestoreEnabled              bool
	UrlstoreEnabled               bool
	ShardingEnabled               bool `json:",omitempty"`
	Libp2pStreamMounting          bool
	P2pHttpProxy                  bool //nolint:revive // Kubo's name
	StrategicProviding            bool `json:",omitempty"`
	OptimisticProvide             bool
	OptimisticProvideJobsPoolSize int
	GatewayOverLibp2p             bool                             `json:",omitempty"`
	GraphsyncEnabled              graphsyncEnabled                 `json:",omitempty"`
	AcceleratedDHTClient          experimentalAcceleratedDHTClient `json:",omitempty"`
}

// Plugins configures plugins.
type Plugins struct{ Plugins map[string]Plugin }

// Plugin is one plugin's settings.
type Plugin struct {
	Disabled bool
	Config   any `json:",omitempty"`
}

// Pinning is remote pinning services.
type Pinning struct {
	RemoteServices map[string]RemotePinningService
}

// RemotePinningService is one remote pinning service.
type RemotePinningService struct {
	API      RemotePinningServiceAPI
	Policies RemotePinningServicePolicies
}

// RemotePinningServiceAPI is where a service is and its key.
type RemotePinningServiceAPI struct {
	Endpoint string
	Key      string
}

// RemotePinningServicePolicies are a service's policies.
type RemotePinningServicePolicies struct {
	MFS RemotePinningServiceMFSPolicy
}

// RemotePinningServiceMFSPolicy pins the MFS root remotely.
type RemotePinningServiceMFSPolicy struct {
	Enable        bool
	PinName       string
	RepinInterval string
}

// Import are the defaults of add and of the files commands; unset
// (null) means Kubo's default.
type Import struct {
	CidVersion                        OptionalInteger
	UnixFSRawLeaves                   Flag
	UnixFSChunker                     OptionalString
	HashFunction                      OptionalString
	UnixFSFileMaxLinks                OptionalInteger
	UnixFSDirectoryMaxLinks           OptionalInteger
	UnixFSHAMTDirectoryMaxFanout      OptionalInteger
	UnixFSHAMTDirectorySizeThreshold  OptionalBytes
	UnixFSHAMTDirectorySizeEstimation OptionalString
	UnixFSDAGLayout                   OptionalString
	BatchMaxNodes                     OptionalInteger
	BatchMaxSize                      OptionalInteger
	FastProvideRoot                   Flag
	FastProvideDAG                    Flag
	FastProvideWait                   Flag
}

// ImportSettings returns Import as Kubo 0.42 reads it: a deprecated
// Internal.UnixFSShardingSizeThreshold stands for an unset
// Import.UnixFSHAMTDirectorySizeThreshold (Decode refuses both).
func (c *Config) ImportSettings() Import {
	imp := c.Import
	if t := c.Internal.UnixFSShardingSizeThreshold; t != nil && !t.IsDefault() && imp.UnixFSHAMTDirectorySizeThreshold.IsDefault() {
		imp.UnixFSHAMTDirectorySizeThreshold = OptionalBytes{*t}
	}
	return imp
}

// DeprecatedShardingThreshold is Kubo's message for a config that still
// sets Internal.UnixFSShardingSizeThreshold beside its successor.
const DeprecatedShardingThreshold = "The `Internal.UnixFSShardingSizeThreshold` field was renamed to `Import.UnixFSHAMTDirectorySizeThreshold`. Please update your config."

// Version is the agent version and the swarm version check.
type Version struct {
	AgentSuffix                *OptionalString  `json:",omitempty"`
	SwarmCheckEnabled          Flag             `json:",omitempty"`
	SwarmCheckPercentThreshold *OptionalInteger `json:",omitempty"`
}

// Internal holds experimental settings.
type Internal struct {
	Bitswap *InternalBitswap `json:",omitempty"`
	// UnixFSShardingSizeThreshold is the deprecated name of
	// Import.UnixFSHAMTDirectorySizeThreshold (see ImportSettings).
	UnixFSShardingSizeThreshold *OptionalString   `json:",omitempty"`
	Libp2pForceReachability     *OptionalString   `json:",omitempty"`
	BackupBootstrapInterval     *OptionalDuration `json:",omitempty"`
	MFSNoFlushLimit             *OptionalInteger  `json:",omitempty"`
	ShutdownTimeout             *OptionalDuration `json:",omitempty"`
}

// InternalBitswap tunes bitswap.
type InternalBitswap struct {
	TaskWorkerCount             OptionalInteger
	EngineBlockstoreWorkerCount OptionalInteger
	EngineTaskWorkerCount       OptionalInteger
	MaxOutstandingBytesPerPeer  OptionalInteger
	ProviderSearchDelay         OptionalDuration
	ProviderSearchMaxResults    OptionalInteger
	WantHaveReplaceSize         OptionalInteger
	BroadcastControl            *BitswapBroadcastControl
}

// BitswapBroadcastControl limits want broadcasts.
type BitswapBroadcastControl struct {
	Enable             Flag `json:",omitempty"`
	MaxPeers           OptionalInteger
	LocalPeers         Flag `json:",omitempty"`
	PeeredPeers        Flag `json:",omitempty"`
	MaxRandomPeers     OptionalInteger
	SendToPendingPeers Flag `json:",omitempty"`
}

// Bitswap turns the bitswap client and server on and off.
type Bitswap struct {
	Libp2pEnabled Flag `json:",omitempty"`
	ServerEnabled Flag `json:",omitempty"`
}

// AutoPlaceholder is the value that stands for "the defaults" in
// Bootstrap, DNS.Resolvers, Routing.DelegatedRouters and
// Ipns.DelegatedPublishers.
const AutoPlaceholder = "auto"
