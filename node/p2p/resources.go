// resources.go: what the libp2p resource manager allows and what is in
// use, scope by scope (swarm resources).

package p2p

import (
	"errors"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
)

// ErrNoResourceMgr is Kubo's answer to swarm resources without a
// resource manager (an offline node).
var ErrNoResourceMgr = errors.New("missing ResourceMgr: make sure the daemon is running with Swarm.ResourceMgr.Enabled")

// ScopeUsage is one scope's limits beside its usage, in the order and
// with the names of Kubo's swarm resources.
type ScopeUsage struct {
	Memory               rcmgr.LimitVal64
	MemoryUsage          int64
	FD                   rcmgr.LimitVal
	FDUsage              int
	Conns                rcmgr.LimitVal
	ConnsUsage           int
	ConnsInbound         rcmgr.LimitVal
	ConnsInboundUsage    int
	ConnsOutbound        rcmgr.LimitVal
	ConnsOutboundUsage   int
	Streams              rcmgr.LimitVal
	StreamsUsage         int
	StreamsInbound       rcmgr.LimitVal
	StreamsInboundUsage  int
	StreamsOutbound      rcmgr.LimitVal
	StreamsOutboundUsage int
}

// ResourceUsage is every scope the resource manager tracks.
type ResourceUsage struct {
	System    ScopeUsage
	Transient ScopeUsage
	Services  map[string]ScopeUsage `json:",omitempty"`
	Protocols map[string]ScopeUsage `json:",omitempty"`
	Peers     map[string]ScopeUsage `json:",omitempty"`
}

func scopeUsage(l rcmgr.ResourceLimits, s network.ScopeStat) ScopeUsage {
	return ScopeUsage{
		Memory: l.Memory, MemoryUsage: s.Memory,
		FD: l.FD, FDUsage: s.NumFD,
		Conns: l.Conns, ConnsUsage: s.NumConnsInbound + s.NumConnsOutbound,
		ConnsInbound: l.ConnsInbound, ConnsInboundUsage: s.NumConnsInbound,
		ConnsOutbound: l.ConnsOutbound, ConnsOutboundUsage: s.NumConnsOutbound,
		Streams: l.Streams, StreamsUsage: s.NumStreamsInbound + s.NumStreamsOutbound,
		StreamsInbound: l.StreamsInbound, StreamsInboundUsage: s.NumStreamsInbound,
		StreamsOutbound: l.StreamsOutbound, StreamsOutboundUsage: s.NumStreamsOutbound,
	}
}

// Resources reports the resource manager's limits and usage: a scope
// without limits of its own shows its kind's default ones.
func (nt *Net) Resources() (*ResourceUsage, error) {
	st, ok := nt.rm.(rcmgr.ResourceManagerState)
	if !ok {
		return nil, ErrNoResourceMgr
	}
	lim := nt.rmLimits.ToPartialLimitConfig()
	stat := st.Stat()
	out := &ResourceUsage{
		System:    scopeUsage(lim.System, stat.System),
		Transient: scopeUsage(lim.Transient, stat.Transient),
	}
	out.Services = scopesUsage(stat.Services, lim.Service, lim.ServiceDefault, func(k string) string { return k })
	out.Protocols = scopesUsage(stat.Protocols, lim.Protocol, lim.ProtocolDefault, func(k protocol.ID) string { return string(k) })
	out.Peers = scopesUsage(stat.Peers, lim.Peer, lim.PeerDefault, peer.ID.String)
	return out, nil
}

// scopesUsage pairs each scope of one kind with its limits, or the
// kind's default ones; nil when there is no such scope.
func scopesUsage[K comparable](stats map[K]network.ScopeStat, lims map[K]rcmgr.ResourceLimits,
	def rcmgr.ResourceLimits, name func(K) string) map[string]ScopeUsage {
	if len(stats) == 0 {
		return nil
	}
	out := make(map[string]ScopeUsage, len(stats))
	for k, s := range stats {
		l, ok := lims[k]
		if !ok {
			l = def
		}
		out[name(k)] = scopeUsage(l, s)
	}
	return out
}
