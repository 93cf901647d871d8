// names.go: IPNS names and DNSLink: publishing signed records, resolving
// /ipns/ names (IPNS records and DNSLink), through boxo's namesys.
//
// Records this node publishes are kept in the store's "data" bucket under
// /ipns/<base32 of the name's peer ID> (boxo's IpnsDsKey): they are what the
// republisher (republish.go) signs again, so they survive restarts. Records
// go to the network through the DHT when the node is online; offline (and
// for names the node holds) they are kept as DHT records in the same
// /dht namespace the DHT stores into, so a record published offline is
// served to peers once the node is online.

package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"cairn/node/config"

	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/namesys"
	"github.com/ipfs/boxo/path"
	offroute "github.com/ipfs/boxo/routing/offline"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/namespace"
	record "github.com/libp2p/go-libp2p-record"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
	"github.com/libp2p/go-libp2p/p2p/host/peerstore/pstoremem"
)

// Errors of name publishing, as Kubo's.
var (
	// ErrPublishOffline: publishing needs the network unless allowed.
	ErrPublishOffline = errors.New("can't publish while offline: pass `--allow-offline` to override or `--allow-delegated` if Ipns.DelegatedPublishers are set up")
	// ErrNoDelegatedPublishers: --allow-delegated without publishers.
	ErrNoDelegatedPublishers = errors.New("no delegated publishers configured: add Ipns.DelegatedPublishers or use --allow-offline for local-only publishing")
	// ErrNoSuchKey: --key names no key and no key's peer ID.
	ErrNoSuchKey = errors.New("no key by the given name or PeerID was found")
)

// DefaultRecordLifetime and DefaultRecordTTL are Kubo's name publish defaults.
const (
	DefaultRecordLifetime = ipns.DefaultRecordLifetime
	DefaultRecordTTL      = ipns.DefaultRecordTTL
)

// maxNameLen bounds a name to resolve: a peer ID as a CID is under 100
// characters and a DNS name at most 253.
const maxNameLen = 512

// nameSys is the node's name system, built on first use and again after
// a config change (DNS.Resolvers, Ipns.ResolveCacheSize, Ipns.MaxCacheTTL).
type nameSys struct {
	mu      sync.Mutex
	cfg     *config.Config // the config ns was built from
	ns      namesys.NameSystem
	routing *nameRouting
	pubMu   sync.Mutex // one publish at a time (sequence numbers)
}

// dropCache forgets every resolved name (after a publish: boxo's cache
// keeps a name under the spelling it was resolved by, so a publish could
// not replace every stale entry).
func (s *nameSys) dropCache() {
	s.mu.Lock()
	s.ns = nil
	s.mu.Unlock()
}

// nameRouting stores and finds records: through the DHT while the node is
// online, in the local DHT store otherwise; with IPNS over pubsub on,
// IPNS records go through pubsub too (ipnsps.go), and to the HTTP
// publishers of Ipns.DelegatedPublishers as delegated.go says.
type nameRouting struct {
	n         *Node
	offline   routing.Routing
	validator record.Validator // the offline store's (IPNS and public keys)
}

func (r *nameRouting) store() routing.ValueStore {
	if nt := r.n.Net; nt != nil && nt.DHT != nil {
		return nt.DHT
	}
	return r.offline
}

// pubsub is the IPNS-over-pubsub router for key, or nil.
func (r *nameRouting) pubsub(ctx context.Context, k string) *IpnsPubsub {
	if ps := r.n.Network().IpnsPubsub(); ps != nil && isIpnsKey(k) && !isOffline(ctx) {
		return ps
	}
	return nil
}

func (r *nameRouting) PutValue(ctx context.Context, k string, v []byte, o ...routing.Option) error {
	if bases, ok := ctx.Value(delegatedKey{}).([]string); ok {
		// --allow-delegated: the local store and the HTTP publishers only.
		if err := r.offline.PutValue(ctx, k, v, o...); err != nil {
			return err
		}
		putDelegated(ctx, bases, k, v)
		return nil
	}
	if isOffline(ctx) {
		return r.offline.PutValue(ctx, k, v, o...)
	}
	err := r.n.alongsidePublishers(ctx, k, v, func() error { return r.putOnline(ctx, k, v, o...) })
	if err != nil && ctx.Value(ignoreRoutingErrKey{}) != nil {
		log.Warnf("putting the record of %s to the network: %s", k, err)
		return nil
	}
	return err
}

// PutRecord keeps the record v of routing key k (/ipns/ or /pk/ and a
// peer ID's bytes) and sends it where a name publish sends records, as
// Kubo's routing put does: the DHT (which keeps it in the node's record
// store first) or, without one, the record store alone; IPNS over pubsub
// when on; the delegated publishers under Routing.Type auto. The record
// must pass the IPNS (or public key) validator: Kubo 0.42 answers success
// for any value and its routers drop what they refuse, cairn says why.
// Once the record is kept, the network's errors are logged, not returned,
// as Kubo's routing ignores its routers' errors (a node without DHT peers
// puts).
func (m *Names) PutRecord(ctx context.Context, k string, v []byte) error {
	n := m.n
	s, _, err := n.names()
	if err != nil {
		return err
	}
	if err := s.routing.validator.Validate(k, v); err != nil {
		return err
	}
	return s.routing.PutValue(context.WithValue(ctx, ignoreRoutingErrKey{}, true), k, v)
}

// RecordPutOptions are the modes of name put (Kubo 0.43): keep the
// record in the local store only (AllowOffline), or there and with the
// HTTP publishers of Ipns.DelegatedPublishers, without the DHT
// (AllowDelegated).
type RecordPutOptions struct {
	AllowOffline, AllowDelegated bool
}

// ErrPutOffline is Kubo's answer to name put on a node without a network.
var ErrPutOffline = errors.New("can't put while offline: pass `--allow-offline` to store locally or `--allow-delegated` if Ipns.DelegatedPublishers are set up")

// PutSigned keeps the signed record v of routing key k and sends it
// where o says, as PutRecord does; offline it needs o.AllowOffline.
func (m *Names) PutSigned(ctx context.Context, k string, v []byte, o RecordPutOptions) error {
	// Online is running with a network, as routing put reads it: without
	// a DHT the record goes to the local store (nameRouting.store).
	ctx, err := m.n.nameMode(ctx, m.n.Net != nil, o.AllowOffline, o.AllowDelegated, ErrPutOffline)
	if err != nil {
		return err
	}
	return m.PutRecord(ctx, k, v)
}

// nameMode applies --allow-offline and --allow-delegated, as name publish
// and name put read them, to ctx: the delegated publishers only, or the
// local store only when the node is not online (offlineErr without
// --allow-offline).
func (n *Node) nameMode(ctx context.Context, online, allowOffline, allowDelegated bool, offlineErr error) (context.Context, error) {
	if allowOffline && allowDelegated {
		return ctx, errors.New("cannot use both --allow-offline and --allow-delegated flags")
	}
	online = online && !isOffline(ctx)
	switch {
	case allowDelegated:
		bases, err := delegatedPublishers(n.Config())
		if err != nil {
			return ctx, err
		}
		if len(bases) == 0 {
			return ctx, ErrNoDelegatedPublishers
		}
		return context.WithValue(ctx, delegatedKey{}, bases), nil
	case !online && !allowOffline:
		return ctx, offlineErr
	case !online:
		return OfflineContext(ctx), nil
	}
	return ctx, nil
}

// GetRecord finds the best record of routing key k as Kubo's name get
// does: only on a node with a network (ErrOfflineAction otherwise),
// through IPNS over pubsub and the DHT, or the local store when the
// node runs without a DHT.
func (m *Names) GetRecord(ctx context.Context, k string) ([]byte, error) {
	n := m.n
	if n.Net == nil {
		return nil, ErrOfflineAction
	}
	s, _, err := n.names()
	if err != nil {
		return nil, err
	}
	return s.routing.GetValue(n.nameCtx(ctx), k)
}

// Record finds the best record of name as ResolveTTL would find it (the
// local store on a node without network, else the network too), for
// answers that hand the signed record itself out (the gateway's
// ?format=ipns-record).
func (m *Names) Record(ctx context.Context, name ipns.Name) ([]byte, error) {
	n := m.n
	s, _, err := n.names()
	if err != nil {
		return nil, err
	}
	return s.routing.GetValue(n.nameCtx(ctx), string(name.RoutingKey()))
}

// ignoreRoutingErrKey marks a name publish whose record, once in the
// local store, counts as published whatever the network answers: Kubo
// 0.42's routing ignores every router's error (a node online with no DHT
// peer yet publishes), and the republisher puts the record again later.
type ignoreRoutingErrKey struct{}

// putOnline puts to the DHT and, with IPNS over pubsub, to pubsub.
func (r *nameRouting) putOnline(ctx context.Context, k string, v []byte, o ...routing.Option) error {
	ps := r.pubsub(ctx, k)
	if ps == nil {
		return r.store().PutValue(ctx, k, v, o...)
	}
	// Both at once; either one reaching the network is a publish (a
	// board on a LAN with pubsub peers and no DHT peer publishes).
	psErr := make(chan error, 1)
	go func() { psErr <- ps.vs.PutValue(ctx, k, v) }()
	err := r.store().PutValue(ctx, k, v, o...)
	if perr := <-psErr; perr == nil || err == nil {
		return nil
	}
	return err
}

func (r *nameRouting) GetValue(ctx context.Context, k string, o ...routing.Option) ([]byte, error) {
	if isOffline(ctx) {
		return r.offline.GetValue(ctx, k, o...)
	}
	if ps := r.pubsub(ctx, k); ps != nil {
		if v, err := ps.vs.GetValue(ctx, k); err == nil {
			return v, nil
		}
	}
	return r.store().GetValue(ctx, k, o...)
}

func (r *nameRouting) SearchValue(ctx context.Context, k string, o ...routing.Option) (<-chan []byte, error) {
	if isOffline(ctx) {
		return r.offline.SearchValue(ctx, k, o...)
	}
	ps := r.pubsub(ctx, k)
	if ps == nil {
		return r.store().SearchValue(ctx, k, o...)
	}
	ctx, stop := context.WithCancel(ctx)
	pch, perr := ps.vs.SearchValue(ctx, k)
	dch, err := r.store().SearchValue(ctx, k, o...)
	if perr != nil && err != nil {
		stop()
		return nil, err
	}
	return searchBoth(ctx, stop, dch, pch), nil
}

// names returns the node's name system state and the name system in
// effect.
func (n *Node) names() (*nameSys, namesys.NameSystem, error) {
	s := &n.Names().sys
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.routing == nil {
		validator := nameValidator(pstoremem.NewKeyBook())
		dhtStore := namespace.Wrap(n.Store.Datastore(), ds.NewKey("/dht"))
		s.routing = &nameRouting{n: n, offline: offroute.NewOfflineRouter(dhtStore, validator), validator: validator}
	}
	if cfg := n.Config(); s.ns == nil || s.cfg != cfg {
		ns, err := n.newNameSystem(cfg, true)
		if err != nil {
			return nil, nil, err
		}
		s.ns, s.cfg = ns, cfg
	}
	return s, s.ns, nil
}

// newNameSystem builds a name system over the node's routing, store and
// DNS resolvers; with cache, resolved names are kept (ipnsCacheSize
// entries, each for at most its record's TTL).
func (n *Node) newNameSystem(cfg *config.Config, cache bool) (namesys.NameSystem, error) {
	dns, err := NewDNSResolver(cfg.DNS.Resolvers)
	if err != nil {
		return nil, err
	}
	opts := []namesys.Option{namesys.WithDatastore(n.Store.Datastore()), namesys.WithDNSResolver(dns)}
	if cache {
		opts = append(opts, namesys.WithCache(ipnsCacheSize(cfg)))
	}
	if d, ok, err := cfg.Ipns.CacheTTL(); err != nil {
		return nil, err
	} else if ok {
		opts = append(opts, namesys.WithMaxCacheTTL(d))
	}
	return namesys.NewNameSystem(n.Names().sys.routing, opts...)
}

// PublishOptions are name/publish's options.
type PublishOptions struct {
	Key            string // key name or peer ID; "" or "self": the node's own
	Lifetime       time.Duration
	TTL            *time.Duration
	Sequence       *uint64
	V1Compat       bool
	AllowOffline   bool
	AllowDelegated bool
}

// Publish signs a record naming p with the key o.Key and publishes it:
// into the local record store, then to the DHT (or, offline with
// AllowOffline, to the local DHT store only; with AllowDelegated, to the
// local DHT store and Ipns.DelegatedPublishers, delegated.go). As in Kubo,
// a network that does not take the record (no DHT peer yet) fails nothing:
// the republisher puts it again. It returns the name.
func (m *Names) Publish(ctx context.Context, p path.Path, o PublishOptions) (ipns.Name, error) {
	n := m.n
	if o.Lifetime <= 0 {
		return ipns.Name{}, fmt.Errorf("lifetime %s: a record must be valid for a positive time", o.Lifetime)
	}
	if o.TTL != nil && *o.TTL < 0 {
		return ipns.Name{}, fmt.Errorf("ttl %s: must not be negative", *o.TTL)
	}
	ctx, err := n.nameMode(ctx, n.namesOnline(), o.AllowOffline, o.AllowDelegated, ErrPublishOffline)
	if err != nil {
		return ipns.Name{}, err
	}
	sk, err := n.lookupKey(o.Key)
	if err != nil {
		return ipns.Name{}, err
	}
	now, err := n.clockSet()
	if err != nil {
		return ipns.Name{}, err
	}
	s, ns, err := n.names()
	if err != nil {
		return ipns.Name{}, err
	}
	eol := now.Add(o.Lifetime)
	popts := []namesys.PublishOption{namesys.PublishWithEOL(eol),
		namesys.PublishWithIPNSOption(ipns.WithV1Compatibility(o.V1Compat))}
	if o.TTL != nil {
		popts = append(popts, namesys.PublishWithTTL(*o.TTL))
	}
	if o.Sequence != nil {
		popts = append(popts, namesys.PublishWithSequence(*o.Sequence))
	}
	ctx = context.WithValue(ctx, ignoreRoutingErrKey{}, true)
	s.pubMu.Lock()
	err = ns.Publish(ctx, sk, p, popts...)
	s.pubMu.Unlock()
	s.dropCache()
	if err != nil {
		return ipns.Name{}, err
	}
	id, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return ipns.Name{}, err
	}
	return ipns.NameFromPeer(id), nil
}

// lookupKey finds a key by name or by its peer ID, as Kubo's keylookup.
func (n *Node) lookupKey(k string) (crypto.PrivKey, error) {
	if k == "" || k == SelfKey {
		return n.PrivKey, nil
	}
	ks, err := n.keystore()
	if err != nil {
		return nil, err
	}
	if sk, err := ks.Get(k); err == nil {
		return sk, nil
	}
	target, err := peer.Decode(k)
	if err != nil {
		return nil, ErrNoSuchKey
	}
	if target == n.PeerID {
		return n.PrivKey, nil
	}
	names, err := ks.List()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		sk, err := ks.Get(name)
		if err != nil {
			continue
		}
		if id, err := peer.IDFromPrivateKey(sk); err == nil && id == target {
			return sk, nil
		}
	}
	return nil, ErrNoSuchKey
}

// ResolveOptions are name/resolve's options.
type ResolveOptions struct {
	Depth          uint          // 0: recursive (namesys.DefaultDepthLimit)
	NoCache        bool          // skip the cache (results are not cached either)
	DhtRecordCount uint          // 0: namesys's default
	DhtTimeout     time.Duration // 0: none
	DhtTimeoutSet  bool
}

func (o ResolveOptions) namesys() []namesys.ResolveOption {
	var out []namesys.ResolveOption
	if o.Depth > 0 {
		out = append(out, namesys.ResolveWithDepth(o.Depth))
	}
	if o.DhtRecordCount > 0 {
		out = append(out, namesys.ResolveWithDhtRecordCount(o.DhtRecordCount))
	}
	if o.DhtTimeoutSet {
		out = append(out, namesys.ResolveWithDhtTimeout(o.DhtTimeout))
	}
	return out
}

// nameResolver returns the cached name system, or a fresh one without a
// cache.
func (n *Node) nameResolver(noCache bool) (namesys.NameSystem, error) {
	_, ns, err := n.names()
	if err != nil {
		return nil, err
	}
	if !noCache {
		return ns, nil
	}
	return n.newNameSystem(n.Config(), false)
}

// parseName turns "<name>", "/ipns/<name>[/rest]" or "ipns://<name>"
// into a path.
func parseName(name string) (path.Path, error) {
	if len(name) > maxNameLen {
		return nil, fmt.Errorf("name too long (%d bytes; at most %d)", len(name), maxNameLen)
	}
	name = FromURI(name)
	if !strings.HasPrefix(name, "/ipns/") {
		name = "/ipns/" + name
	}
	return path.NewPath(name)
}

// Resolve resolves an IPNS name or DNSLink domain ("/ipns/" optional)
// to the path it names. With a depth limit, a path that is still a name
// is returned with namesys.ErrResolveRecursion.
func (m *Names) Resolve(ctx context.Context, name string, o ResolveOptions) (path.Path, error) {
	n := m.n
	p, err := parseName(name)
	if err != nil {
		return nil, err
	}
	ns, err := n.nameResolver(o.NoCache)
	if err != nil {
		return nil, err
	}
	res, err := ns.Resolve(n.nameCtx(ctx), p, o.namesys()...)
	return res.Path, err
}

// Search is Resolve streaming every better value as it is found.
func (m *Names) Search(ctx context.Context, name string, o ResolveOptions, fn func(path.Path) error) error {
	n := m.n
	p, err := parseName(name)
	if err != nil {
		return err
	}
	ns, err := n.nameResolver(o.NoCache)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(n.nameCtx(ctx))
	defer cancel()
	for res := range ns.ResolveAsync(ctx, p, o.namesys()...) {
		if res.Err != nil {
			if o.Depth > 0 && errors.Is(res.Err, namesys.ErrResolveRecursion) && res.Path != nil {
				if err := fn(res.Path); err != nil {
					return err
				}
				continue
			}
			return res.Err
		}
		if err := fn(res.Path); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// namesOnline says whether names can reach the network: through the
// DHT or IPNS over pubsub.
func (n *Node) namesOnline() bool {
	on := n.online
	return on != nil && (on.net.DHT != nil || on.ipnsps != nil)
}

// nameCtx marks ctx offline when the node has no network, so that names
// resolve from the local store.
func (n *Node) nameCtx(ctx context.Context) context.Context {
	if !n.namesOnline() {
		return OfflineContext(ctx)
	}
	return ctx
}

// ImmutablePath parses s as ParsePath does and resolves a leading /ipns/
// name (IPNS or DNSLink, recursively) to the /ipfs/ path it stands for.
func (m *Names) ImmutablePath(ctx context.Context, s string) (path.ImmutablePath, error) {
	p, _, err := m.ResolveTTL(ctx, s)
	return p, err
}

// ResolveTTL is ImmutablePath that also says how long the answer may be
// cached: the TTL of the IPNS record that named it (0 when unknown, and
// for /ipfs/ paths, which never change).
func (m *Names) ResolveTTL(ctx context.Context, s string) (path.ImmutablePath, time.Duration, error) {
	n := m.n
	s = FromURI(s)
	if !strings.HasPrefix(s, "/ipns/") {
		p, err := ParsePath(s)
		return p, 0, err
	}
	p, err := parseName(s)
	if err != nil {
		return path.ImmutablePath{}, 0, err
	}
	ns, err := n.nameResolver(false)
	if err != nil {
		return path.ImmutablePath{}, 0, err
	}
	res, err := namesys.Resolve(n.nameCtx(ctx), ns, p)
	if err != nil {
		return path.ImmutablePath{}, 0, err
	}
	ip, err := path.NewImmutablePath(res.Path)
	return ip, res.TTL, err
}

// ipnsCacheSize is Ipns.ResolveCacheSize (Kubo's default 128), bounded by
// the memory budget: at most 32 entries per MiB of budget (an entry is a
// name, a path and a time, well under 1 KiB).
func ipnsCacheSize(cfg *config.Config) int {
	size := 128
	if cfg.Ipns.ResolveCacheSize > 0 {
		size = cfg.Ipns.ResolveCacheSize
	}
	if mib := cfg.Budget.MemoryMiB; mib > 0 && size > mib*32 {
		size = mib * 32
	}
	return max(size, 1)
}
