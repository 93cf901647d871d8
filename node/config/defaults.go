// defaults.go: the config init writes: Kubo 0.42's init values with
// cairn's own defaults over them, and the same document read from
// defaultdoc.json at run time.

package config

import (
	_ "embed"
	"encoding/json"
	"sync"
)

// DefaultBootstrap is Kubo's default bootstrap list.
var DefaultBootstrap = []string{
	"/dnsaddr/bootstrap.libp2p.io/p2p/QmNnooDu7bfjPFoTZYxMNLWUQJyrVwtbZg5gBMjTezGAJN",
	"/dnsaddr/bootstrap.libp2p.io/p2p/QmQCU2EcMqAqQPR2i9bChDtGNJchTbq5TbXJJ16u19uLTa",
	"/dnsaddr/bootstrap.libp2p.io/p2p/QmbLHAnMoJPWSCR5Zhtx6BHJX9KiKNN6tpvbUcqanj75Nb",
	"/dnsaddr/bootstrap.libp2p.io/p2p/QmcZf59bWwK5XFi76CZX8cbJ4BhTzzA3gU1ZjYZcYW3dwt",
	"/ip4/104.131.131.82/tcp/4001/p2p/QmaCpDMGvV2BGHeYERUEnRQAwe3N8SzbUtfsmvsqQLuvuJ",
	"/ip4/104.131.131.82/udp/4001/quic-v1/p2p/QmaCpDMGvV2BGHeYERUEnRQAwe3N8SzbUtfsmvsqQLuvuJ",
}

// kuboDefault is the config Kubo 0.42's `ipfs init` writes, without its
// Identity (an empty PeerID) and with the flatfs datastore spec.
func kuboDefault() *Config {
	return &Config{
		API:       API{HTTPHeaders: map[string][]string{}},
		Addresses: kuboAddresses(),
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
}

func kuboAddresses() Addresses {
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

// DefaultConfig returns the config init writes before profiles: Kubo 0.42's
// init values except where cairn differs (Addresses.Swarm without the
// transports cairn lacks, mDNS off, the bootstrap list written out,
// Datastore.Spec), and cairn's own sections (Budget, Modules).
func DefaultConfig(id Identity) *Config {
	c := kuboDefault()
	c.Identity = id
	c.Datastore.Spec = DatastoreSpec()
	c.Addresses.Swarm = []string{
		"/ip4/0.0.0.0/tcp/4001", "/ip6/::/tcp/4001",
		"/ip4/0.0.0.0/udp/4001/quic-v1", "/ip6/::/udp/4001/quic-v1",
	}
	// mDNS is opt-in (profile local-discovery): a board should not
	// announce itself on every LAN it joins.
	c.Discovery.MDNS.Enabled = false
	c.Bootstrap = append([]string{}, DefaultBootstrap...)
	c.Modules = DefaultModules()
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

// buildDefaultDoc builds the document init writes, without Identity. It
// encodes the config type with encoding/json, which costs the daemon the
// json package's tables for it, so the daemon reads the same document
// from defaultdoc.json instead (TestDefaultDocFile keeps the two equal;
// `go test ./node/config -run TestDefaultDocFile -update` rewrites it).
func buildDefaultDoc() map[string]any {
	doc, err := DefaultConfig(Identity{}).ToDoc()
	if err != nil {
		panic(err) // a fixed value that always encodes
	}
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
func defaultDoc() map[string]any { return CopyValue(defaultDocOnce()).(map[string]any) }

// DefaultDoc returns DefaultConfig(id) as a document, read from defaultdoc.json.
func DefaultDoc(id Identity) map[string]any {
	doc := defaultDoc()
	ident := map[string]any{"PeerID": id.PeerID}
	if id.PrivKey != "" {
		ident["PrivKey"] = id.PrivKey
	}
	doc["Identity"] = ident
	return doc
}
