// config.go: the repo config, with Kubo's key names, and its profiles.

package node

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"cairn/board"
	"cairn/node/kuboconf"

	"github.com/alecthomas/units"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Strings is a list that also accepts a single JSON string, as Kubo's
// config.Strings does (Addresses.API is written as a string).
type Strings []string

// UnmarshalJSON accepts "a", ["a","b"] or null.
func (s *Strings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// MarshalJSON writes a single value as a string, as Kubo does.
func (s Strings) MarshalJSON() ([]byte, error) {
	if len(s) == 1 {
		return json.Marshal(s[0])
	}
	if s == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]string(s))
}

// Config is the repo's config file, as far as cairn acts on it. Field
// names are Kubo's; sections that only cairn has are marked. The file
// holds every other key of Kubo 0.42 too (package kuboconf describes
// them): the config commands edit the JSON document, which keeps them
// and any unknown key, and they are ignored here.
type Config struct {
	Identity     Identity
	Datastore    DatastoreConfig
	Addresses    Addresses
	Discovery    Discovery
	Routing      Routing
	Bootstrap    []string
	API          APIConfig
	Swarm        SwarmConfig
	Import       Import
	Experimental Experimental
	Internal     Internal
	Ipns         IpnsConfig
	AutoConf     AutoConfConfig
	DNS          DNSConfig
	Peering      Peering
	Pubsub       PubsubConfig
	// Pinning holds the remote pinning services of pin/remote
	// (node/remotepin.go). Each service's API.Key is a secret: it stays
	// in this file (mode 0600, beside Identity.PrivKey) and is never
	// shown by config show, service ls or any error.
	Pinning kuboconf.Pinning
	// Budget is cairn's: the memory budget every limit is derived from
	// (package board; the network's limits in budget.go).
	Budget board.Budget
	// Modules is cairn's: the module facility (web apps on 5280/5281).
	Modules ModulesConfig
}

// Identity is the node's key pair.
type Identity struct {
	PeerID  string
	PrivKey string `json:",omitempty"`
}

// DatastoreConfig holds the storage limits.
type DatastoreConfig struct {
	StorageMax         string // e.g. "10GB"
	StorageGCWatermark int64  // percent of StorageMax
	GCPeriod           string // Go duration
}

// Addresses lists where the node listens.
type Addresses struct {
	Swarm          []string
	Announce       []string
	AppendAnnounce []string
	NoAnnounce     []string
	API            Strings
	Gateway        Strings
}

// Discovery configures local peer discovery.
type Discovery struct {
	MDNS struct{ Enabled bool }
}

// Routing selects the content routing system.
type Routing struct {
	Type *string `json:",omitempty"`
	// LoopbackAddressesOnLanDHT keeps loopback addresses in the LAN DHT's
	// peer and provider records (Kubo's key; the test profile sets it),
	// so nodes on one machine find each other.
	LoopbackAddressesOnLanDHT *bool `json:",omitempty"`
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

// APIConfig configures the RPC server.
type APIConfig struct {
	HTTPHeaders    map[string][]string
	Authorizations map[string]*RPCAuthScope `json:",omitempty"`
	// AllowUnauthenticated is cairn's: allow a non-loopback API address
	// without Authorizations.
	AllowUnauthenticated bool `json:",omitempty"`
}

// SwarmConfig holds the libp2p settings (node/net.go, docs/networking.md).
type SwarmConfig struct {
	DisableNatPortMap bool
	// AddrFilters (Kubo's key) are /ip4|ip6/<addr>/ipcidr/<bits> ranges
	// the node neither dials nor accepts (swarm/filters).
	AddrFilters []string `json:",omitempty"`
	ConnMgr     struct {
		LowWater    int    `json:",omitempty"`
		HighWater   int    `json:",omitempty"`
		GracePeriod string `json:",omitempty"`
	}
	// Bandwidth is cairn's: caps per direction for LAN (private and
	// loopback) and WAN peers, e.g. "512KiB" (per second); "" is no cap.
	Bandwidth BandwidthCaps `json:",omitempty"`
}

// BandwidthCaps are byte rates per second, as humanize sizes ("1MB",
// "256KiB"); empty means unlimited.
type BandwidthCaps struct {
	LANIn  string `json:",omitempty"`
	LANOut string `json:",omitempty"`
	WANIn  string `json:",omitempty"`
	WANOut string `json:",omitempty"`
}

// Import holds the defaults of add (Kubo's Import section). Nil means
// "Kubo's default".
type Import struct {
	CidVersion                        *int    `json:",omitempty"`
	UnixFSRawLeaves                   *bool   `json:",omitempty"`
	UnixFSChunker                     *string `json:",omitempty"`
	HashFunction                      *string `json:",omitempty"`
	UnixFSFileMaxLinks                *int    `json:",omitempty"`
	UnixFSDirectoryMaxLinks           *int    `json:",omitempty"`
	UnixFSHAMTDirectoryMaxFanout      *int    `json:",omitempty"`
	UnixFSHAMTDirectorySizeThreshold  *string `json:",omitempty"`
	UnixFSHAMTDirectorySizeEstimation *string `json:",omitempty"`
	UnixFSDAGLayout                   *string `json:",omitempty"`
}

// Internal holds Kubo's experimental settings cairn reads.
type Internal struct {
	// UnixFSShardingSizeThreshold is the deprecated name of
	// Import.UnixFSHAMTDirectorySizeThreshold (see ImportSettings).
	UnixFSShardingSizeThreshold *string `json:",omitempty"`
}

// ImportSettings returns Import as Kubo 0.42 reads it: a deprecated
// Internal.UnixFSShardingSizeThreshold stands for an unset
// Import.UnixFSHAMTDirectorySizeThreshold (DecodeConfig refuses both).
func (c *Config) ImportSettings() Import {
	imp := c.Import
	if t := c.Internal.UnixFSShardingSizeThreshold; t != nil && imp.UnixFSHAMTDirectorySizeThreshold == nil {
		imp.UnixFSHAMTDirectorySizeThreshold = t
	}
	return imp
}

// DeprecatedShardingThreshold is Kubo's message for a config that still
// sets Internal.UnixFSShardingSizeThreshold.
const DeprecatedShardingThreshold = "The `Internal.UnixFSShardingSizeThreshold` field was renamed to `Import.UnixFSHAMTDirectorySizeThreshold`. Please update your config."

// IpnsConfig is Kubo's Ipns section (docs/names.md). Zero values are
// left out when cairn writes a config, so Kubo's defaults (kuboconf) stay.
type IpnsConfig struct {
	// RepublishPeriod is how often the node signs its records again
	// (Go duration; "" is 4h).
	RepublishPeriod string `json:",omitempty"`
	// RecordLifetime is the lifetime of republished records ("" is 48h).
	RecordLifetime string `json:",omitempty"`
	// ResolveCacheSize is the number of resolved names kept (0 is 128;
	// capped by the memory budget).
	ResolveCacheSize int `json:",omitempty"`
	// MaxCacheTTL caps how long a resolved name is cached (null: the
	// record's TTL).
	MaxCacheTTL *string `json:",omitempty"`
	// UsePubsub turns IPNS over pubsub on (daemon --enable-namesys-pubsub
	// too); it starts pubsub as well (ipnsps.go).
	UsePubsub *bool `json:",omitempty"`
	// DelegatedPublishers are the HTTP publishers of IPNS records
	// (delegated.go): base URLs or URLs ending in /routing/v1/ipns, and
	// "auto" (Config.DelegatedPublishers says what it stands for).
	DelegatedPublishers []string `json:",omitempty"`
}

// AutoConfConfig is the part of Kubo's AutoConf section cairn reads.
// cairn fetches no AutoConf: Enabled false only makes "auto" in
// Ipns.DelegatedPublishers stand for nothing, as in Kubo.
type AutoConfConfig struct {
	Enabled *bool `json:",omitempty"` // nil: true
}

// DNSConfig is Kubo's DNS section: DNSLink lookups.
type DNSConfig struct {
	// Resolvers maps a domain suffix ("eth.", or "." for all) to a
	// DNS-over-HTTPS URL; domains not listed use the system resolver.
	Resolvers map[string]string `json:",omitempty"`
	// MaxCacheTTL caps how long DNS answers are cached (not used: cairn
	// keeps no DNS cache of its own beyond the name cache).
	MaxCacheTTL *string `json:",omitempty"`
}

// durationOr parses a Go duration, "" giving def.
func durationOr(s string, def time.Duration, key string) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("config %s: %w", key, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("config %s: %s is not positive", key, s)
	}
	return d, nil
}

func (c IpnsConfig) maxCacheTTL() (time.Duration, bool, error) {
	if c.MaxCacheTTL == nil || *c.MaxCacheTTL == "" {
		return 0, false, nil
	}
	d, err := durationOr(*c.MaxCacheTTL, 0, "Ipns.MaxCacheTTL")
	return d, err == nil, err
}

// Experimental holds feature gates.
type Experimental struct {
	FilestoreEnabled bool
	UrlstoreEnabled  bool
	// Libp2pStreamMounting enables the p2p commands (p2p.go).
	Libp2pStreamMounting bool
}

// Peering lists peers the node keeps connected (reconnecting with a
// backoff), as Kubo's Peering section. swarm/peering/add and rm change
// the running set only, as in Kubo.
type Peering struct {
	Peers []peer.AddrInfo
}

// PubsubConfig is Kubo's Pubsub section (docs/pubsub.md). Nil means
// Kubo's default.
type PubsubConfig struct {
	// Enabled turns pubsub on (daemon --enable-pubsub-experiment too).
	Enabled *bool `json:",omitempty"`
	// Router is "gossipsub" (also for "") or "floodsub".
	Router string
	// DisableSigning sends unsigned messages (and accepts them).
	DisableSigning bool
	// SeenMessagesTTL is how long a message ID is remembered, a Go
	// duration (default 120s).
	SeenMessagesTTL *string `json:",omitempty"`
	// SeenMessagesStrategy is "last-seen" (default) or "first-seen".
	SeenMessagesStrategy *string `json:",omitempty"`
}

// ModulesConfig is cairn's module facility (Kubo has no such section).
// Modules publish web apps, as Prosody's mod_http does; see
// docs/modules.md. Zero values mean the defaults named below.
type ModulesConfig struct {
	// Enabled lists modules to load at daemon start, by internal name
	// (Prosody's modules_enabled): a built-in ("http_status",
	// "http_files", "http_ipfs", "http_dir_listing") or a Lua file
	// <Dir>/mod_<name>.lua. Empty: no module, no listener.
	Enabled []string
	// Dir is where Lua modules live (default <repo>/modules).
	Dir string `json:",omitempty"`
	// AllowWrite lists modules whose node view may add and pin; every
	// other module gets a read-only view.
	AllowWrite []string
	// Authorizations, in API.Authorizations' shape, protect every module
	// request: AuthSecret "basic:user:password" (browsers prompt for it)
	// or "bearer:TOKEN"; AllowedPaths are URL path prefixes ("/" is every
	// app). They are required for a listener off loopback, and for
	// writing modules (AllowWrite) when API.Authorizations is set; the
	// daemon refuses to start otherwise (see docs/modules.md).
	Authorizations map[string]*RPCAuthScope `json:",omitempty"`
	// AllowUnauthenticated lifts that requirement, at the owner's risk.
	AllowUnauthenticated bool `json:",omitempty"`
	HTTP                 ModulesHTTP
	HTTPS                ModulesHTTPS
	Files                ModulesFiles
	Lua                  ModulesLua
	// Options holds free-form options per module, read by Lua modules
	// with module:get_option(name, default).
	Options map[string]map[string]any `json:",omitempty"`
}

// ModulesHTTP is the plain-HTTP service and the limits of both services.
type ModulesHTTP struct {
	// Ports (default [5280]) on each of Interfaces (default loopback
	// only: ["127.0.0.1"]).
	Ports      []int
	Interfaces []string
	// MaxBodySize caps a buffered request body (default "10MiB"; larger:
	// 413). MaxUploadSize caps a streamed upload to the status app
	// (default "1GiB").
	MaxBodySize   string
	MaxUploadSize string
	// Go durations: reading a request (30s), writing a response (5m), an
	// idle keep-alive connection (2m), one handler chain (60s).
	ReadTimeout    string
	WriteTimeout   string
	IdleTimeout    string
	HandlerTimeout string
	// TrustedProxies (IPs or CIDRs) may set X-Forwarded-For and
	// X-Forwarded-Proto (default ["127.0.0.1", "::1"]).
	TrustedProxies []string
	// Hosts are extra names the Host header may carry (e.g. "pi.lan"),
	// on both services. "localhost", IP literals, the machine's host name
	// (and <name>.local) and names in Interfaces are always accepted;
	// any other Host gets 403 (DNS rebinding).
	Hosts []string `json:",omitempty"`
	// CORS turns on Access-Control-* headers and OPTIONS answers.
	CORS bool
	// Paths maps an app name to its base path (Prosody's http_paths),
	// e.g. {"files": "/"}.
	Paths map[string]string `json:",omitempty"`
}

// ModulesHTTPS is the TLS service. Certificate and Key are PEM files,
// relative to the repo unless absolute; init generates a self-signed
// pair there (default tls/modules.crt, tls/modules.key).
type ModulesHTTPS struct {
	Ports       []int // default [5281]
	Interfaces  []string
	Certificate string
	Key         string
}

// ModulesFiles configures the http_files app.
type ModulesFiles struct {
	// Path is the folder served at /files, or an /ipfs/<cid> path served
	// from the node's storage.
	Path string
	// DirListing shows directory listings (needs http_dir_listing, which
	// is then loaded too).
	DirListing bool
	// IndexFiles are tried in a directory (default index.html, index.htm).
	IndexFiles []string `json:",omitempty"`
}

// ModulesLua limits each Lua handler call and module load.
type ModulesLua struct {
	// MaxRunTime is a Go duration (default "1s"); a call still running
	// then is stopped with an error.
	MaxRunTime string
	// MaxMemory is how much the Go heap may grow during a call before the
	// call is stopped and the module's Lua state is thrown away and
	// rebuilt. Empty (the default): a sixteenth of Budget.MemoryMiB
	// (DefaultMemoryMiB without one), between 8 and 64 MiB.
	MaxMemory string
}

// ModulesLimits are the sizes and durations of the Modules section, with
// DefaultModules' values for those not set.
type ModulesLimits struct {
	MaxBodySize, MaxUploadSize int64
	LuaMaxMemory               int64 // 0 when not set (the host derives it from the budget)
	LuaMaxRunTime              time.Duration
	ReadTimeout, WriteTimeout  time.Duration
	IdleTimeout                time.Duration
	HandlerTimeout             time.Duration
}

// Limits parses the Modules sizes (go-units, strict: "10MiB", "1GB") and
// durations; the error names every bad one.
func (m ModulesConfig) Limits() (ModulesLimits, error) {
	def := DefaultModules()
	var l ModulesLimits
	var errs []error
	size := func(key, v, d string, dst *int64) {
		s := cmp.Or(v, d)
		if s == "" {
			return
		}
		b, err := units.ParseStrictBytes(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("config Modules.%s %q: %w", key, v, err))
		}
		*dst = b
	}
	dur := func(key, v, d string, dst *time.Duration) {
		t, err := time.ParseDuration(cmp.Or(v, d))
		if err != nil {
			errs = append(errs, fmt.Errorf("config Modules.%s %q: %w", key, v, err))
		}
		*dst = t
	}
	size("HTTP.MaxBodySize", m.HTTP.MaxBodySize, def.HTTP.MaxBodySize, &l.MaxBodySize)
	size("HTTP.MaxUploadSize", m.HTTP.MaxUploadSize, def.HTTP.MaxUploadSize, &l.MaxUploadSize)
	size("Lua.MaxMemory", m.Lua.MaxMemory, "", &l.LuaMaxMemory)
	dur("Lua.MaxRunTime", m.Lua.MaxRunTime, def.Lua.MaxRunTime, &l.LuaMaxRunTime)
	dur("HTTP.ReadTimeout", m.HTTP.ReadTimeout, def.HTTP.ReadTimeout, &l.ReadTimeout)
	dur("HTTP.WriteTimeout", m.HTTP.WriteTimeout, def.HTTP.WriteTimeout, &l.WriteTimeout)
	dur("HTTP.IdleTimeout", m.HTTP.IdleTimeout, def.HTTP.IdleTimeout, &l.IdleTimeout)
	dur("HTTP.HandlerTimeout", m.HTTP.HandlerTimeout, def.HTTP.HandlerTimeout, &l.HandlerTimeout)
	return l, errors.Join(errs...)
}

// DefaultModules returns the Modules section init writes.
func DefaultModules() ModulesConfig {
	return ModulesConfig{
		Enabled:    []string{"http_status"},
		AllowWrite: []string{"http_status"},
		HTTP: ModulesHTTP{
			Ports: []int{5280}, Interfaces: []string{"127.0.0.1"},
			MaxBodySize: "10MiB", MaxUploadSize: "1GiB",
			ReadTimeout: "30s", WriteTimeout: "5m", IdleTimeout: "2m", HandlerTimeout: "60s",
			TrustedProxies: []string{"127.0.0.1", "::1"},
		},
		HTTPS: ModulesHTTPS{
			Ports: []int{5281}, Interfaces: []string{"127.0.0.1"},
			Certificate: "tls/modules.crt", Key: "tls/modules.key",
		},
		Lua: ModulesLua{MaxRunTime: "1s"},
	}
}

// DefaultBootstrap is Kubo's default bootstrap list.
var DefaultBootstrap = []string{
	"/dnsaddr/bootstrap.libp2p.io/p2p/QmNnooDu7bfjPFoTZYxMNLWUQJyrVwtbZg5gBMjTezGAJN",
	"/dnsaddr/bootstrap.libp2p.io/p2p/QmQCU2EcMqAqQPR2i9bChDtGNJchTbq5TbXJJ16u19uLTa",
	"/dnsaddr/bootstrap.libp2p.io/p2p/QmbLHAnMoJPWSCR5Zhtx6BHJX9KiKNN6tpvbUcqanj75Nb",
	"/dnsaddr/bootstrap.libp2p.io/p2p/QmcZf59bWwK5XFi76CZX8cbJ4BhTzzA3gU1ZjYZcYW3dwt",
	"/ip4/104.131.131.82/tcp/4001/p2p/QmaCpDMGvV2BGHeYERUEnRQAwe3N8SzbUtfsmvsqQLuvuJ",
	"/ip4/104.131.131.82/udp/4001/quic-v1/p2p/QmaCpDMGvV2BGHeYERUEnRQAwe3N8SzbUtfsmvsqQLuvuJ",
}

// DefaultConfig returns the config init writes before profiles.
func DefaultConfig(id Identity) *Config {
	c := &Config{Identity: id}
	c.Datastore = DatastoreConfig{StorageMax: "10GB", StorageGCWatermark: 90, GCPeriod: "1h"}
	c.Addresses = Addresses{
		Swarm: []string{
			"/ip4/0.0.0.0/tcp/4001", "/ip6/::/tcp/4001",
			"/ip4/0.0.0.0/udp/4001/quic-v1", "/ip6/::/udp/4001/quic-v1",
		},
		Announce: []string{}, AppendAnnounce: []string{}, NoAnnounce: []string{},
		API:     Strings{"/ip4/127.0.0.1/tcp/5001"},
		Gateway: Strings{"/ip4/127.0.0.1/tcp/8080"},
	}
	// mDNS is opt-in (profile local-discovery): a board should not
	// announce itself on every LAN it joins.
	c.Discovery.MDNS.Enabled = false
	c.Bootstrap = append([]string{}, DefaultBootstrap...)
	c.API.HTTPHeaders = map[string][]string{}
	c.Modules = DefaultModules()
	c.Pinning.RemoteServices = map[string]kuboconf.RemotePinningService{}
	return c
}

// DatastoreSpec is Datastore.Spec in cairn's config: Kubo's mount shape
// naming cairn's one store file. cairn does not read it (its store is
// always <repo>/blocks.db); it is there for tools that look.
func DatastoreSpec() map[string]any {
	return map[string]any{
		"type": "mount",
		"mounts": []any{
			map[string]any{"mountpoint": "/", "type": "bbolt", "path": "blocks.db"},
		},
	}
}

// buildDefaultDoc builds the document init writes, without Identity:
// Kubo 0.42's init document with cairn's defaults and sections over it.
// It encodes both config types with encoding/json, which costs the daemon
// the json package's tables for them, so the daemon reads the same
// document from defaultdoc.json instead (TestDefaultDocFile keeps the two
// equal; `go test ./node -run TestDefaultDocFile -update` rewrites it).
func buildDefaultDoc() map[string]any {
	own, err := DefaultConfig(Identity{}).ToDoc()
	if err != nil {
		panic(err) // a fixed value that always encodes
	}
	doc := overlayDefaults(kuboconf.DefaultDoc(), own)
	doc["Datastore"].(map[string]any)["Spec"] = DatastoreSpec()
	delete(doc, "Identity")
	return doc
}

//go:embed defaultdoc.json
var defaultDocJSON []byte

// defaultDocOnce is buildDefaultDoc's document, read from defaultDocJSON.
var defaultDocOnce = sync.OnceValue(func() map[string]any {
	var doc map[string]any
	if err := json.Unmarshal(defaultDocJSON, &doc); err != nil {
		panic(err) // a fixed file TestDefaultDocFile checks
	}
	return doc
})

// defaultDoc returns a fresh copy of the default document (no Identity).
func defaultDoc() map[string]any { return kuboconf.CopyValue(defaultDocOnce()).(map[string]any) }

// DefaultConfigDoc returns the config document init writes before
// profiles: every Kubo 0.42 key with Kubo's default, except where cairn
// differs (Addresses.Swarm without the transports cairn lacks, mDNS off,
// the bootstrap list written out, Datastore.Spec), and cairn's own
// sections (Budget, Modules).
func DefaultConfigDoc(id Identity) map[string]any {
	doc := defaultDoc()
	ident := map[string]any{"PeerID": id.PeerID}
	if id.PrivKey != "" {
		ident["PrivKey"] = id.PrivKey
	}
	doc["Identity"] = ident
	return doc
}

// overlayDefaults merges right into left (maps recursively); a null in
// right leaves left's value.
func overlayDefaults(left, right map[string]any) map[string]any {
	for k, rv := range right {
		if rv == nil {
			continue
		}
		if rm, ok := rv.(map[string]any); ok {
			if lm, ok := left[k].(map[string]any); ok {
				left[k] = overlayDefaults(lm, rm)
				continue
			}
		}
		left[k] = rv
	}
	return left
}

// ConfigFile is the config's file name inside a repo.
const ConfigFile = "config"

// ReadConfigDoc reads the config file as a generic JSON document. Kubo
// keys the file lacks (a repo made before cairn wrote them all) read as
// Kubo's defaults (kuboconf.FillMissing); the file itself changes only
// when the config is next written.
func ReadConfigDoc(repo string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(repo, ConfigFile))
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("config %s: %w", filepath.Join(repo, ConfigFile), err)
	}
	if doc == nil {
		return nil, fmt.Errorf("config %s: not a JSON object", filepath.Join(repo, ConfigFile))
	}
	kuboconf.FillMissing(doc, defaultDocOnce())
	return doc, nil
}

// DecodeConfig turns a JSON document into a Config, failing on values of
// the wrong type: first for Kubo's keys, with Kubo's messages ("failure
// to decode config: ..."), then for cairn's. Both the deprecated
// Internal.UnixFSShardingSizeThreshold and its successor set is an error,
// as Kubo's daemon refuses to start on it.
func DecodeConfig(doc map[string]any) (*Config, error) {
	if _, err := kuboconf.FromMap(doc); err != nil {
		return nil, err
	}
	var c Config
	if err := kuboconf.Decode(doc, &c); err != nil {
		return nil, fmt.Errorf("invalid config: %w", err)
	}
	if c.Internal.UnixFSShardingSizeThreshold != nil && c.Import.UnixFSHAMTDirectorySizeThreshold != nil {
		return nil, errors.New(DeprecatedShardingThreshold)
	}
	return &c, nil
}

// NormalizeConfigDoc returns doc as a config replace stores it: every
// key of Kubo and of cairn's Config present, with doc's value or the zero
// value, as Kubo's decode and encode leave them (keys neither knows are
// not in the result).
func NormalizeConfigDoc(doc map[string]any) (map[string]any, error) {
	kubo, err := kuboconf.Normalize(doc)
	if err != nil {
		return nil, err
	}
	c, err := DecodeConfig(doc)
	if err != nil {
		return nil, err
	}
	own, err := c.ToDoc()
	if err != nil {
		return nil, err
	}
	return MergeConfigDocs(own, kubo), nil
}

// WriteConfig stores the typed values of c over the repo's config file,
// keeping every key Config does not hold.
func WriteConfig(repo string, c *Config) error {
	doc, err := ReadConfigDoc(repo)
	if err != nil {
		return err
	}
	own, err := c.ToDoc()
	if err != nil {
		return err
	}
	return WriteConfigDoc(repo, MergeConfigDocs(doc, own))
}

// ToDoc turns a Config into a generic JSON document.
func (c *Config) ToDoc() (map[string]any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	err = json.Unmarshal(b, &doc)
	return doc, err
}

// WriteConfigDoc writes doc durably: to a temporary file, fsync, rename.
func WriteConfigDoc(repo string, doc map[string]any) error {
	if _, err := DecodeConfig(doc); err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(repo, ConfigFile), append(b, '\n'), 0o600)
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// GetKey looks up a dotted key in a config document.
func GetKey(doc map[string]any, key string) (any, error) {
	var cur any = doc
	parts := strings.Split(key, ".")
	for i, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s key is not a map", strings.Join(parts[:i], "."))
		}
		v, ok := lookupFold(m, p)
		if !ok {
			return nil, fmt.Errorf("key has no attribute %s", p)
		}
		cur = v
	}
	return cur, nil
}

// SetKey sets a dotted key in a config document, creating maps on the way.
func SetKey(doc map[string]any, key string, value any) error {
	parts := strings.Split(key, ".")
	cur := doc
	for i, p := range parts[:len(parts)-1] {
		name := foldName(cur, p)
		next, ok := cur[name]
		if !ok || next == nil {
			nm := map[string]any{}
			cur[name] = nm
			cur = nm
			continue
		}
		nm, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s key is not a map", strings.Join(parts[:i+1], "."))
		}
		cur = nm
	}
	cur[foldName(cur, parts[len(parts)-1])] = value
	return nil
}

func lookupFold(m map[string]any, k string) (any, bool) {
	if v, ok := m[k]; ok {
		return v, true
	}
	for name, v := range m {
		if strings.EqualFold(name, k) {
			return v, true
		}
	}
	return nil, false
}

func foldName(m map[string]any, k string) string {
	if _, ok := m[k]; ok {
		return k
	}
	for name := range m {
		if strings.EqualFold(name, k) {
			return name
		}
	}
	return k
}
