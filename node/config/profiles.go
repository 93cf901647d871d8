// profiles.go: config profiles (init --profile, config profile apply).
// Each edits the config document and sets the keys Kubo 0.42's profile
// of the same name sets, to the same values, except where cairn's
// defaults differ (docs/rpc.md, "Config"); cairn's own sections follow
// (the test profile also moves the module listeners to random ports).

package config

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
)

// Profile changes a config document; profiles compose left to right.
type Profile struct {
	Description string
	Apply       func(doc map[string]any) error
}

// serverFilters are the ranges Kubo's server profile adds to
// Addresses.NoAnnounce and Swarm.AddrFilters: private, local-only and
// other not globally reachable IPv4 and IPv6 prefixes (RFC 6890).
var serverFilters = []string{
	"/ip4/10.0.0.0/ipcidr/8",
	"/ip4/100.64.0.0/ipcidr/10",
	"/ip4/127.0.0.0/ipcidr/8",
	"/ip4/169.254.0.0/ipcidr/16",
	"/ip4/172.16.0.0/ipcidr/12",
	"/ip4/192.0.0.0/ipcidr/24",
	"/ip4/192.0.2.0/ipcidr/24",
	"/ip4/192.168.0.0/ipcidr/16",
	"/ip4/198.18.0.0/ipcidr/15",
	"/ip4/198.51.100.0/ipcidr/24",
	"/ip4/203.0.113.0/ipcidr/24",
	"/ip4/240.0.0.0/ipcidr/4",
	"/ip6/::/ipcidr/3",
	"/ip6/::1/ipcidr/128",
	"/ip6/100::/ipcidr/64",
	"/ip6/2001:2::/ipcidr/48",
	"/ip6/2001:db8::/ipcidr/32",
	"/ip6/fc00::/ipcidr/7",
	"/ip6/fe80::/ipcidr/10",
}

// set assigns key=value pairs in order (keys dot-separated, exact names).
func set(doc map[string]any, kv ...any) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if err := SetKeyExact(doc, kv[i].(string), kv[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// list turns strings into a document value.
func list(ss ...string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// stringsAt reads a list of strings (or one string) at key; anything
// else reads as empty.
func stringsAt(doc map[string]any, key string) []string {
	v, _ := GetKeyExact(doc, key)
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// appendMissing adds the entries of add that list lacks, in order.
func appendMissing(have, add []string) []any {
	out := list(have...)
	for _, s := range add {
		if !slices.Contains(have, s) {
			out = append(out, s)
			have = append(have, s)
		}
	}
	return out
}

// without drops the entries of del from have, keeping the order.
func without(have, del []string) []any {
	out := []any{}
	for _, s := range have {
		if !slices.Contains(del, s) {
			out = append(out, s)
		}
	}
	return out
}

// defaultSection returns a section of the default document.
func defaultSection(key string) any {
	v, _ := GetKeyExact(defaultDocOnce(), key)
	return CopyValue(v)
}

func unixfsProfile(cidVer int, raw bool, chunker string, fileLinks int, estimation string) func(map[string]any) error {
	return func(doc map[string]any) error {
		return set(doc,
			"Import.CidVersion", cidVer, "Import.UnixFSRawLeaves", raw, "Import.UnixFSChunker", chunker,
			"Import.HashFunction", "sha2-256", "Import.UnixFSFileMaxLinks", fileLinks,
			"Import.UnixFSDirectoryMaxLinks", 0, "Import.UnixFSHAMTDirectoryMaxFanout", 256,
			"Import.UnixFSHAMTDirectorySizeThreshold", "256KiB",
			"Import.UnixFSHAMTDirectorySizeEstimation", estimation, "Import.UnixFSDAGLayout", "balanced")
	}
}

var unixfsV02015 = Profile{
	Description: "Legacy UnixFS import profile (IPIP-499 unixfs-v0-2015): CIDv0, no raw leaves, sha2-256,\n" +
		"256 KiB chunks, 174 links per file node, link-based HAMT size estimation. Alias: legacy-cid-v0.",
	Apply: unixfsProfile(0, false, "size-262144", 174, "links"),
}

// Profiles are the names `init --profile` and `config profile apply`
// accept.
var Profiles = map[string]Profile{
	"test": {
		Description: "Loopback addresses on random ports, no bootstrap peers, no mDNS, no delegated\n" +
			"routing or autoconf, module listeners on random loopback ports: for tests.",
		Apply: func(doc map[string]any) error {
			return set(doc,
				"Addresses.API", "/ip4/127.0.0.1/tcp/0", "Addresses.Gateway", "/ip4/127.0.0.1/tcp/0",
				"Addresses.Swarm", list("/ip4/127.0.0.1/tcp/0"),
				"Swarm.DisableNatPortMap", true, "Routing.LoopbackAddressesOnLanDHT", true,
				"Bootstrap", list(), "Discovery.MDNS.Enabled", false,
				"AutoTLS.Enabled", false, "AutoConf.Enabled", false,
				"DNS.Resolvers", map[string]any{}, "Routing.DelegatedRouters", list(), "Ipns.DelegatedPublishers", list(),
				"Modules.HTTP.Ports", []any{0}, "Modules.HTTP.Interfaces", list("127.0.0.1"),
				"Modules.HTTPS.Ports", []any{0}, "Modules.HTTPS.Interfaces", list("127.0.0.1"))
		},
	},
	"default-networking": {
		Description: "Restores cairn's default network settings (the inverse of the test profile):\n" +
			"addresses, bootstrap peers, NAT port mapping, mDNS (off in cairn) and module listeners.",
		Apply: func(doc map[string]any) error {
			return set(doc,
				"Addresses", defaultSection("Addresses"), "Bootstrap", list(DefaultBootstrap...),
				"Swarm.DisableNatPortMap", false, "Discovery.MDNS.Enabled", false,
				"Modules.HTTP.Ports", defaultSection("Modules.HTTP.Ports"),
				"Modules.HTTP.Interfaces", defaultSection("Modules.HTTP.Interfaces"),
				"Modules.HTTPS.Ports", defaultSection("Modules.HTTPS.Ports"),
				"Modules.HTTPS.Interfaces", defaultSection("Modules.HTTPS.Interfaces"))
		},
	},
	"server": {
		Description: "Disables local host discovery, recommended when running on machines with\n" +
			"public IPv4 addresses: private and local ranges are neither announced nor dialed.",
		Apply: func(doc map[string]any) error {
			return set(doc,
				"Addresses.NoAnnounce", appendMissing(stringsAt(doc, "Addresses.NoAnnounce"), serverFilters),
				"Swarm.AddrFilters", appendMissing(stringsAt(doc, "Swarm.AddrFilters"), serverFilters),
				"Discovery.MDNS.Enabled", false, "Swarm.DisableNatPortMap", true)
		},
	},
	"local-discovery": {
		Description: "Sets default values to fields affected by the server profile, enables\n" +
			"discovery (mDNS) in local networks.",
		Apply: func(doc map[string]any) error {
			return set(doc,
				"Addresses.NoAnnounce", without(stringsAt(doc, "Addresses.NoAnnounce"), serverFilters),
				"Swarm.AddrFilters", without(stringsAt(doc, "Swarm.AddrFilters"), serverFilters),
				"Discovery.MDNS.Enabled", true, "Swarm.DisableNatPortMap", false)
		},
	},
	"lowpower": {
		Description: "Reduces daemon overhead on the system: DHT client with delegated routing\n" +
			"(autoclient), no AutoNAT or relay service, 20-40 connections.",
		Apply: func(doc map[string]any) error {
			return set(doc,
				"Routing.Type", "autoclient", "AutoNAT.ServiceMode", "disabled", "Swarm.RelayService.Enabled", false,
				"Swarm.ConnMgr.Type", "basic", "Swarm.ConnMgr.LowWater", 20, "Swarm.ConnMgr.HighWater", 40,
				"Swarm.ConnMgr.GracePeriod", "1m0s")
		},
	},
	"announce-off": {
		Description: "Disables the Provide system (announcing to the DHT).",
		Apply: func(doc map[string]any) error {
			return set(doc, "Provide.Enabled", false, "Provide.DHT.Interval", "0s")
		},
	},
	"announce-on": {
		Description: "Re-enables the Provide system (reverts announce-off).",
		Apply: func(doc map[string]any) error {
			return set(doc, "Provide.Enabled", true, "Provide.DHT.Interval", "22h0m0s")
		},
	},
	"randomports": {
		Description: "Use a random port number for swarm.",
		Apply: func(doc map[string]any) error {
			// A port free on loopback (Kubo probes [::]:0; cairn's
			// tools bind nothing beyond loopback).
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			return set(doc, "Addresses.Swarm", list(fmt.Sprintf("/ip4/0.0.0.0/tcp/%d", port), fmt.Sprintf("/ip6/::/tcp/%d", port)))
		},
	},
	"unixfs-v0-2015": unixfsV02015,
	"legacy-cid-v0":  {Description: "Alias for the unixfs-v0-2015 profile.", Apply: unixfsV02015.Apply},
	"unixfs-v1-2025": {
		Description: "Recommended UnixFS import profile (IPIP-499 unixfs-v1-2025): CIDv1, raw leaves,\n" +
			"sha2-256, 1 MiB chunks, 1024 links per file node, block-based HAMT size estimation.",
		Apply: unixfsProfile(1, true, "size-1048576", 1024, "block"),
	},
}

// ProfileNames returns the profile names, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(Profiles))
	for n := range Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ApplyProfiles applies a comma-separated list of profile names to doc.
func ApplyProfiles(doc map[string]any, names string) error {
	if names == "" {
		return nil
	}
	for _, name := range strings.Split(names, ",") {
		name = strings.TrimSpace(name)
		p, ok := Profiles[name]
		if !ok {
			return fmt.Errorf("invalid configuration profile: %s (known: %s)", name, strings.Join(ProfileNames(), ", "))
		}
		if err := p.Apply(doc); err != nil {
			return fmt.Errorf("profile %s: %w", name, err)
		}
	}
	return nil
}
