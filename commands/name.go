// name.go: the "name" family (publish, resolve) and dns, as Kubo's
// core/commands/name/ and the dns command of earlier Kubo releases. The
// names themselves are node/names.go and node/dns.go.

package commands

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/namesys"
	"github.com/ipfs/boxo/path"
)

// IpnsEntry is the output of name/publish.
type IpnsEntry struct {
	Name  string
	Value string
}

var nameCommands = []*rpc.Command{{
	Path:     "name/publish",
	Synopsis: "Publish IPNS names.",
	Help: `IPNS is a PKI namespace, where names are the hashes of public keys, and
the private key enables publishing new (signed) values. In both publish
and resolve, the default name used is the node's own PeerID,
which is the hash of its public key.

You can use the 'cairn key' commands to list and generate more names and their
respective keys.

By default, IPNS records are published to the DHT (and, with Routing.Type
auto, to the HTTP publishers of Ipns.DelegatedPublishers); the node must be
online unless --allow-offline is given (the record is then kept in the local
store and served once the node is online) or --allow-delegated (the record
is kept in the local store and sent to Ipns.DelegatedPublishers only, without
the DHT). The republisher signs the records of every key again each
Ipns.RepublishPeriod (docs/names.md).

Examples:

Publish an <ipfs-path> with your default name:

  > cairn name publish /ipfs/QmatmE9msSfkKxoffpHwNLNKgwZG8eT9Bud6YoPab52vpy
  Published to k51qzi5uqu5dgy...: /ipfs/QmatmE9msSfkKxoffpHwNLNKgwZG8eT9Bud6YoPab52vpy

Publish without the DHT (HTTP delegated publishers only):

  > cairn name publish --allow-delegated /ipfs/QmatmE9msSfkKxoffpHwNLNKgwZG8eT9Bud6YoPab52vpy
  Published to k51qzi5uqu5dgy...: /ipfs/QmatmE9msSfkKxoffpHwNLNKgwZG8eT9Bud6YoPab52vpy

The --ttl option specifies the time duration for caching IPNS records.
The --sequence option sets a custom sequence number for the IPNS record; it
must be greater than the current record's.`,
	Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Stdin: true, Help: "ipfs path of the object to be published."}},
	Options: []rpc.Option{
		{Names: []string{"key", "k"}, Type: rpc.String, Default: "self", Help: "Name of the key to be used or a valid PeerID, as listed by 'cairn key list -l'."},
		{Names: []string{"resolve"}, Type: rpc.Bool, Default: true, Help: "Check if the given path can be resolved before publishing."},
		{Names: []string{"lifetime", "t"}, Type: rpc.String, Help: `Time duration the signed record will be valid for. Accepts durations such as "300s", "1.5h" or "7d2h45m". Default: ` + node.DefaultRecordLifetime.String()},
		{Names: []string{"ttl"}, Type: rpc.String, Help: "Time duration to cache this record before checking for updates. Must not exceed --lifetime. Default: " + node.DefaultRecordTTL.String() + " (capped to --lifetime)."},
		{Names: []string{"quieter", "Q"}, Type: rpc.Bool, Help: "Write only final IPNS Name encoded as CIDv1 (for use in /ipns content paths)."},
		{Names: []string{"v1compat"}, Type: rpc.Bool, Default: true, Help: "Produce a backward-compatible IPNS Record by including fields for both V1 and V2 signatures."},
		{Names: []string{"allow-offline"}, Type: rpc.Bool, Help: "Allow publishing when offline - publishes to local datastore without requiring network connectivity."},
		{Names: []string{"allow-delegated"}, Type: rpc.Bool, Help: "Allow publishing without DHT connectivity - uses local datastore and HTTP delegated publishers only."},
		{Names: []string{"sequence"}, Type: rpc.Uint64, Help: "Set a custom sequence number for the IPNS record (must be higher than current)."},
		ipnsBaseOption,
	},
	Output: rpc.OutSingle,
	Run:    runNamePublish,
	Type:   func() any { return &IpnsEntry{} },
	Text:   namePublishText,
}, {
	Path:     "name/resolve",
	Synopsis: "Resolve IPNS names.",
	Help: `IPNS is a PKI namespace, where names are the hashes of public keys, and
the private key enables publishing new (signed) values. In both publish
and resolve, the default name used is the node's own PeerID,
which is the hash of its public key.

Resolve the value of your name:

  > cairn name resolve
  /ipfs/QmatmE9msSfkKxoffpHwNLNKgwZG8eT9Bud6YoPab52vpy

Resolve the value of a DNSLink:

  > cairn name resolve example.org
  /ipfs/QmatmE9msSfkKxoffpHwNLNKgwZG8eT9Bud6YoPab52vpy`,
	Args: []rpc.Arg{{Name: "name", Kind: rpc.ArgString, Stdin: true, Help: "The IPNS name to resolve. Defaults to your node's peerID."}},
	Options: []rpc.Option{
		{Names: []string{"recursive", "r"}, Type: rpc.Bool, Default: true, Help: "Resolve until the result is not an IPNS name."},
		{Names: []string{"nocache", "n"}, Type: rpc.Bool, Help: "Do not use cached entries."},
		{Names: []string{"dht-record-count", "dhtrc"}, Type: rpc.Uint, Default: uint(namesys.DefaultResolverDhtRecordCount), Help: "Number of records to request for DHT resolution."},
		{Names: []string{"dht-timeout", "dhtt"}, Type: rpc.String, Default: namesys.DefaultResolverDhtTimeout.String(), Help: "Max time to collect values during DHT resolution e.g. \"30s\". Pass 0 for no timeout."},
		{Names: []string{"stream", "s"}, Type: rpc.Bool, Help: "Stream entries as they are found."},
	},
	OutputFor: streamIf("stream"),
	Run:       runNameResolve,
	Type:      func() any { return &ResolvedPath{} },
	Text:      resolvedPathText,
}, {
	Path:     "dns",
	Synopsis: "Resolve DNSLink records.",
	Help: `Multihashes are hard to remember, but domain names are usually easy to
remember. To create memorable aliases for multihashes, DNS TXT
records can point to other DNS links, IPFS objects, IPNS keys, etc.
This command resolves those links to the referenced object.

For example, with this DNS TXT record:

	> dig +short TXT _dnslink.ipfs.io
	dnslink=/ipfs/QmRzTuh2Lpuz7Gr39stNr6mTFdqAghsZec1JoUnfySUzcy

The resolver will give:

	> cairn dns ipfs.io
	/ipfs/QmRzTuh2Lpuz7Gr39stNr6mTFdqAghsZec1JoUnfySUzcy

Lookups use DNS.Resolvers from the config (DNS-over-HTTPS per domain
suffix), else the system resolver.`,
	Args:    []rpc.Arg{{Name: "domain-name", Kind: rpc.ArgString, Required: true, Stdin: true, Help: "The domain-name name to resolve."}},
	Options: []rpc.Option{{Names: []string{"recursive", "r"}, Type: rpc.Bool, Default: true, Help: "Resolve until the result is not a DNS link."}},
	Output:  rpc.OutSingle,
	Run:     runDNS,
	Type:    func() any { return &ResolvedPath{} },
	Text:    resolvedPathText,
}}

// parseDuration is an option's Go duration, with the option named in the error.
func parseDuration(r *rpc.Request, opt string) (time.Duration, error) {
	d, err := time.ParseDuration(r.String(opt))
	if err != nil {
		return 0, fmt.Errorf("error parsing %s option: %s", opt, err)
	}
	return d, nil
}

func runNamePublish(r *rpc.Request, e rpc.Emitter) error {
	o := node.PublishOptions{
		Key:            r.String("key"),
		V1Compat:       r.Bool("v1compat"),
		AllowOffline:   r.Bool("allow-offline"),
		AllowDelegated: r.Bool("allow-delegated"),
	}
	if o.AllowOffline && o.AllowDelegated {
		return errors.New("cannot use both --allow-offline and --allow-delegated flags")
	}
	// --lifetime and --ttl have no default in the option table, so that
	// an explicit --ttl can be told from the default one, which is capped
	// to the lifetime rather than refused (Kubo 0.43).
	o.Lifetime = node.DefaultRecordLifetime
	if r.IsSet("lifetime") {
		d, err := parseDuration(r, "lifetime")
		if err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("lifetime must be greater than zero, got %s", r.String("lifetime"))
		}
		o.Lifetime = d
	}
	ttl := min(node.DefaultRecordTTL, o.Lifetime)
	if r.IsSet("ttl") {
		d, err := time.ParseDuration(r.String("ttl"))
		if err != nil {
			return err
		}
		if d < 0 {
			return fmt.Errorf("ttl must not be negative, got %s", r.String("ttl"))
		}
		if d > o.Lifetime {
			return fmt.Errorf("ttl (%s) must not be greater than lifetime (%s)", d, o.Lifetime)
		}
		ttl = d
	}
	o.TTL = &ttl
	if r.IsSet("sequence") {
		seq := uint64(r.Int("sequence"))
		o.Sequence = &seq
	}
	p, err := pathOrCidPath(r.Args[0])
	if err != nil {
		return err
	}
	if r.Bool("resolve") {
		if _, err := r.Node.Dag().Resolve(r.Ctx, p.String()); err != nil {
			return err
		}
	}
	name, err := r.Node.Names().Publish(r.Ctx, p, o)
	if err != nil {
		return err
	}
	return e.Emit(&IpnsEntry{Name: name.String(), Value: p.String()})
}

// pathOrCidPath is Kubo's PathOrCidPath: a path, a native URI
// (node.FromURI), or a CID (with a rest) taken as /ipfs/<cid>.
func pathOrCidPath(s string) (path.Path, error) {
	s = node.FromURI(s)
	p, err := path.NewPath(s)
	if err == nil {
		return p, nil
	}
	if p2, err2 := path.NewPath("/ipfs/" + s); err2 == nil {
		return p2, nil
	}
	return nil, err
}

func namePublishText(t *rpc.TextEnv, v any) error {
	ie := v.(*IpnsEntry)
	var err error
	if t.Req != nil && t.Req.Bool("quieter") {
		_, err = fmt.Fprintln(t.Out, EscNonPrint(ie.Name))
	} else {
		_, err = fmt.Fprintf(t.Out, "Published to %s: %s\n", EscNonPrint(ie.Name), EscNonPrint(ie.Value))
	}
	return err
}

// nameResolveOptions reads the options resolve and name/resolve share
// (only name/resolve has nocache).
func nameResolveOptions(r *rpc.Request, noCache bool) (node.ResolveOptions, error) {
	o := node.ResolveOptions{NoCache: noCache}
	if !r.Bool("recursive") {
		o.Depth = 1
	}
	if n := r.Int("dht-record-count"); n > 0 {
		o.DhtRecordCount = uint(n)
	}
	if r.String("dht-timeout") != "" {
		d, err := time.ParseDuration(r.String("dht-timeout"))
		if err != nil {
			return o, err
		}
		if d < 0 {
			return o, errors.New("DHT timeout value must be >= 0")
		}
		o.DhtTimeout, o.DhtTimeoutSet = d, true
	}
	return o, nil
}

func runNameResolve(r *rpc.Request, e rpc.Emitter) error {
	name := r.Node.PeerID.String()
	if len(r.Args) > 0 {
		name = r.Args[0]
	}
	o, err := nameResolveOptions(r, r.Bool("nocache"))
	if err != nil {
		return err
	}
	if r.Bool("stream") {
		return r.Node.Names().Search(r.Ctx, name, o, func(p path.Path) error {
			return e.Emit(&ResolvedPath{Path: p.String()})
		})
	}
	p, err := r.Node.Names().Resolve(r.Ctx, name, o)
	if err != nil && (o.Depth == 0 || !errors.Is(err, namesys.ErrResolveRecursion)) {
		return err
	}
	return e.Emit(&ResolvedPath{Path: p.String()})
}

func runDNS(r *rpc.Request, e rpc.Emitter) error {
	p, err := r.Node.Names().DNSLink(r.Ctx, strings.TrimPrefix(r.Args[0], "/ipns/"), r.Bool("recursive"))
	if err != nil {
		return err
	}
	return e.Emit(&ResolvedPath{Path: p.String()})
}
