// Package kuboconf describes the config file of Kubo 0.42: every section
// and key Kubo reads, with the types of their values, and the document
// `ipfs init` writes. cairn's own config type (node.Config) holds only the
// keys cairn acts on; this package lets cairn keep every other Kubo key in
// the file, check key names and value types as Kubo does (config set and
// replace) and write Kubo's defaults at init.
//
// The declarations follow Kubo's config package (github.com/ipfs/kubo,
// tag v0.42.0, config/*.go) field by field; only the JSON shape matters
// here, so values are kept as Kubo writes them and nothing is
// interpreted.
package kuboconf

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Config is Kubo 0.42's config file.
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
	Pinning       Pinning
	Import        Import
	Version       Version
	Internal      Internal
	Bitswap       Bitswap
}

// Identity is the node's key pair.
type Identity struct {
	PeerID  string
	PrivKey string `json:",omitempty"`
}

// Datastore is the storage section.
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
	Type                      *OptionalString `json:",omitempty"`
	AcceleratedDHTClient      Flag            `json:",omitempty"`
	LoopbackAddressesOnLanDHT Flag            `json:",omitempty"`
	IgnoreProviders           []string        `json:",omitempty"`
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

// Ipns is IPNS publishing and resolving.
type Ipns struct {
	RepublishPeriod     string
	RecordLifetime      string
	ResolveCacheSize    int
	MaxCacheTTL         *OptionalDuration `json:",omitempty"`
	UsePubsub           Flag              `json:",omitempty"`
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
}

// RPCAuthScope is one entry of API.Authorizations.
type RPCAuthScope struct {
	AuthSecret   string
	AllowedPaths []string
}

// SwarmConfig is libp2p.
type SwarmConfig struct {
	AddrFilters             []string
	DisableBandwidthMetrics bool
	DisableNatPortMap       bool
	RelayClient             RelayClient
	RelayService            RelayService
	EnableHolePunching      Flag `json:",omitempty"`
	Transports              Transports
	ConnMgr                 ConnMgr
	ResourceMgr             ResourceMgr
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

// ConnMgr is the connection manager.
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

// PubsubConfig is pubsub.
type PubsubConfig struct {
	Router               string
	DisableSigning       bool
	Enabled              Flag              `json:",omitempty"`
	SeenMessagesTTL      *OptionalDuration `json:",omitempty"`
	SeenMessagesStrategy *OptionalString   `json:",omitempty"`
}

// Peering lists peers to stay connected to.
type Peering struct{ Peers []peer.AddrInfo }

// DNS is the DNS resolver.
type DNS struct {
	Resolvers   map[string]string
	MaxCacheTTL *OptionalDuration `json:",omitempty"`
}

// Migration configures repo migrations.
type Migration struct {
	DownloadSources []string `json:",omitempty"`
	Keep            string   `json:",omitempty"`
}

// AutoConf is the remote defaults service.
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

// Experiments are feature gates.
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

// Import are the defaults of add and of the files commands.
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

// Version is the agent version and the swarm version check.
type Version struct {
	AgentSuffix                *OptionalString  `json:",omitempty"`
	SwarmCheckEnabled          Flag             `json:",omitempty"`
	SwarmCheckPercentThreshold *OptionalInteger `json:",omitempty"`
}

// Internal holds experimental settings.
type Internal struct {
	Bitswap                     *InternalBitswap  `json:",omitempty"`
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

// DefaultDoc returns the document Kubo 0.42's `ipfs init` writes, without
// its Identity (an empty PeerID) and with the flatfs datastore spec.
func DefaultDoc() map[string]any {
	c := &Config{
		API:       API{HTTPHeaders: map[string][]string{}},
		Addresses: defaultAddresses(),
		Datastore: Datastore{
			StorageMax: "10GB", StorageGCWatermark: 90, GCPeriod: "1h",
			Spec: map[string]any{
				"type": "mount",
				"mounts": []any{
					map[string]any{
						"mountpoint": "/blocks", "type": "flatfs", "prefix": "flatfs.datastore",
						"path": "blocks", "sync": false, "shardFunc": "/repo/flatfs/shard/v1/next-to-last/2",
					},
					map[string]any{
						"mountpoint": "/", "type": "levelds", "prefix": "leveldb.datastore",
						"path": "datastore", "compression": "none",
					},
				},
			},
		},
		Bootstrap: []string{AutoPlaceholder},
		Discovery: Discovery{MDNS: MDNS{Enabled: true}},
		Mounts:    Mounts{IPFS: "/ipfs", IPNS: "/ipns", MFS: "/mfs"},
		Ipns:      Ipns{ResolveCacheSize: 128, DelegatedPublishers: []string{AutoPlaceholder}},
		Gateway:   Gateway{HTTPHeaders: map[string][]string{}},
		Pinning:   Pinning{RemoteServices: map[string]RemotePinningService{}},
		DNS:       DNS{Resolvers: map[string]string{".": AutoPlaceholder}},
		Routing:   Routing{DelegatedRouters: []string{AutoPlaceholder}},
	}
	doc, err := ToMap(c)
	if err != nil {
		panic(err) // a fixed value that always encodes
	}
	return doc
}

func defaultAddresses() Addresses {
	return Addresses{
		Swarm: []string{
			"/ip4/0.0.0.0/tcp/4001",
			"/ip6/::/tcp/4001",
			"/ip4/0.0.0.0/udp/4001/webrtc-direct",
			"/ip4/0.0.0.0/udp/4001/quic-v1",
			"/ip4/0.0.0.0/udp/4001/quic-v1/webtransport",
			"/ip6/::/udp/4001/webrtc-direct",
			"/ip6/::/udp/4001/quic-v1",
			"/ip6/::/udp/4001/quic-v1/webtransport",
		},
		Announce: []string{}, AppendAnnounce: []string{}, NoAnnounce: []string{},
		API:     Strings{"/ip4/127.0.0.1/tcp/5001"},
		Gateway: Strings{"/ip4/127.0.0.1/tcp/8080"},
	}
}

// FromMap decodes a config document as Kubo does; a value of the wrong
// type fails with Kubo's message ("failure to decode config: ...").
func FromMap(doc map[string]any) (*Config, error) {
	var c Config
	if err := Decode(doc, &c); err != nil {
		return nil, fmt.Errorf("failure to decode config: %w", err)
	}
	return &c, nil
}

// ToMap encodes c as a generic document, every Kubo key present (zero
// values included) except those Kubo omits when empty.
func ToMap(c *Config) (map[string]any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("failure to decode config: %w", err)
	}
	return doc, nil
}

// Normalize returns doc as Kubo would write it after decoding it: Kubo's
// keys only, each with the given value or its zero value.
func Normalize(doc map[string]any) (map[string]any, error) {
	c, err := FromMap(doc)
	if err != nil {
		return nil, err
	}
	return ToMap(c)
}

// CheckKey reports whether key (dot-separated, names matched exactly)
// names a Kubo config key, as Kubo's config.CheckKey does: any name is
// accepted inside a map section or a free-form value. Errors: "A.B not
// found", "A key is not a map".
func CheckKey(key string) error { return CheckKeyIn(reflect.TypeFor[Config](), key) }

// CheckKeyIn is CheckKey for the fields of the struct type t (cairn's own
// config type uses it too).
func CheckKeyIn(t reflect.Type, key string) error {
	parts := strings.Split(key, ".")
	for i, part := range parts {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := t.FieldByName(part)
			if !ok || !f.IsExported() {
				return fmt.Errorf("%s not found", strings.Join(parts[:i+1], "."))
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
		case reflect.Interface:
			return nil
		default:
			return fmt.Errorf("%s key is not a map", strings.Join(parts[:i], "."))
		}
	}
	return nil
}

// FillMissing adds to doc the keys of defaults that doc lacks, where
// they are Kubo keys: it descends into sections that are structs in
// Kubo's config (Datastore, Swarm.ConnMgr, ...) but never into maps of
// the user's entries (DNS.Resolvers, API.HTTPHeaders, ...), so a map the
// user emptied stays empty. Values present in doc, null included, are
// never changed; keys that are not Kubo's are left to the caller. Values
// taken from defaults are copied (CopyValue): doc never shares them.
func FillMissing(doc, defaults map[string]any) {
	fillMissing(doc, defaults, reflect.TypeFor[Config]())
}

func fillMissing(doc, defaults map[string]any, t reflect.Type) {
	for k, dv := range defaults {
		f, ok := t.FieldByName(k)
		if !ok || !f.IsExported() {
			continue
		}
		cur, present := doc[k]
		if !present {
			doc[k] = CopyValue(dv)
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		cm, ok1 := cur.(map[string]any)
		dm, ok2 := dv.(map[string]any)
		if ok1 && ok2 && ft.Kind() == reflect.Struct {
			fillMissing(cm, dm, ft)
		}
	}
}

// CopyValue deep-copies a generic JSON document value (maps and slices;
// other values are shared, as they are immutable).
func CopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = CopyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = CopyValue(e)
		}
		return out
	}
	return v
}
