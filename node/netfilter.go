// netfilter.go: address filters (swarm/filters, Swarm.AddrFilters) as a
// connection gater, and the bandwidth caps (Swarm.Bandwidth) as token
// buckets on the streams bitswap and the DHT use.

package node

import (
	"context"
	"fmt"
	"net"
	"sort"
	"sync"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
	"golang.org/x/time/rate"
)

// AddrFilters is a set of denied IP ranges; it gates dials and accepts.
type AddrFilters struct {
	mu    sync.RWMutex
	nets  map[string]*net.IPNet // key: the filter's multiaddr string
	order []string
}

// ParseAddrFilter parses /ip4/<addr>/ipcidr/<bits> (or ip6).
func ParseAddrFilter(s string) (*net.IPNet, error) {
	m, err := ma.NewMultiaddr(s)
	if err != nil {
		return nil, err
	}
	var ip net.IP
	bits := -1
	var perr error
	ma.ForEach(m, func(c ma.Component) bool {
		switch c.Protocol().Code {
		case ma.P_IP4, ma.P_IP6:
			if ip != nil {
				perr = fmt.Errorf("invalid address filter %q", s)
				return false
			}
			ip = net.IP(c.RawValue())
		case ma.P_IPCIDR:
			if bits >= 0 || ip == nil {
				perr = fmt.Errorf("invalid address filter %q", s)
				return false
			}
			v := c.RawValue()
			if len(v) != 1 {
				perr = fmt.Errorf("invalid address filter %q", s)
				return false
			}
			bits = int(v[0])
		default:
			perr = fmt.Errorf("invalid address filter %q: unexpected /%s", s, c.Protocol().Name)
			return false
		}
		return true
	})
	if perr != nil {
		return nil, perr
	}
	if ip == nil || bits < 0 {
		return nil, fmt.Errorf("invalid address filter %q: want /ip4/<address>/ipcidr/<bits>", s)
	}
	size := 32
	if ip.To4() == nil {
		size = 128
	} else {
		ip = ip.To4()
	}
	if bits > size {
		return nil, fmt.Errorf("invalid address filter %q: mask longer than the address", s)
	}
	mask := net.CIDRMask(bits, size)
	return &net.IPNet{IP: ip.Mask(mask), Mask: mask}, nil
}

// NewAddrFilters builds filters from their multiaddr strings.
func NewAddrFilters(list []string) (*AddrFilters, error) {
	f := &AddrFilters{nets: map[string]*net.IPNet{}}
	for _, s := range list {
		if _, err := f.Add(s); err != nil {
			return nil, fmt.Errorf("config Swarm.AddrFilters: %w", err)
		}
	}
	return f, nil
}

// Add adds a filter; it reports false when it was already there.
func (f *AddrFilters) Add(s string) (bool, error) {
	n, err := ParseAddrFilter(s)
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.nets[s]; ok {
		return false, nil
	}
	f.nets[s] = n
	f.order = append(f.order, s)
	return true, nil
}

// Remove removes a filter; it reports whether it was there.
func (f *AddrFilters) Remove(s string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.nets[s]; !ok {
		return false
	}
	delete(f.nets, s)
	for i, x := range f.order {
		if x == s {
			f.order = append(f.order[:i:i], f.order[i+1:]...)
			break
		}
	}
	return true
}

// List returns the filters, sorted.
func (f *AddrFilters) List() []string {
	f.mu.RLock()
	out := append([]string(nil), f.order...)
	f.mu.RUnlock()
	sort.Strings(out)
	return out
}

// Blocked reports whether m's IP falls in a filtered range.
func (f *AddrFilters) Blocked(m ma.Multiaddr) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if len(f.nets) == 0 {
		return false
	}
	ip, err := manet.ToIP(m)
	if err != nil {
		return false
	}
	for _, n := range f.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// InterceptPeerDial allows every peer (filters are about addresses).
func (f *AddrFilters) InterceptPeerDial(peer.ID) bool { return true }

// InterceptAddrDial refuses filtered addresses.
func (f *AddrFilters) InterceptAddrDial(_ peer.ID, m ma.Multiaddr) bool { return !f.Blocked(m) }

// InterceptAccept refuses connections from filtered addresses.
func (f *AddrFilters) InterceptAccept(c network.ConnMultiaddrs) bool {
	return !f.Blocked(c.RemoteMultiaddr())
}

// InterceptSecured allows every secured connection.
func (f *AddrFilters) InterceptSecured(network.Direction, peer.ID, network.ConnMultiaddrs) bool {
	return true
}

// InterceptUpgraded allows every upgraded connection.
func (f *AddrFilters) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) {
	return true, 0
}

// BandwidthLimiter holds the token buckets of Swarm.Bandwidth: one per
// direction for LAN (private and loopback addresses) and WAN peers,
// shared by every capped stream.
type BandwidthLimiter struct {
	LANIn, LANOut, WANIn, WANOut *rate.Limiter
}

func bucket(bps int64) *rate.Limiter {
	if bps <= 0 {
		return nil
	}
	burst := bps / 4
	burst = max(burst, 1)
	burst = min(burst, 256<<10)
	return rate.NewLimiter(rate.Limit(bps), int(burst))
}

// NewBandwidthLimiter makes the buckets of lim's caps.
func NewBandwidthLimiter(lim NetLimits) *BandwidthLimiter {
	return &BandwidthLimiter{LANIn: bucket(lim.LANIn), LANOut: bucket(lim.LANOut),
		WANIn: bucket(lim.WANIn), WANOut: bucket(lim.WANOut)}
}

// Enabled reports whether any cap is set.
func (b *BandwidthLimiter) Enabled() bool {
	return b.LANIn != nil || b.LANOut != nil || b.WANIn != nil || b.WANOut != nil
}

// IsLAN reports whether m is a loopback or private address.
func IsLAN(m ma.Multiaddr) bool {
	return manet.IsIPLoopback(m) || manet.IsPrivateAddr(m)
}

// Wrap returns s with the caps of its connection's class applied.
func (b *BandwidthLimiter) Wrap(s network.Stream) network.Stream {
	in, out := b.WANIn, b.WANOut
	if IsLAN(s.Conn().RemoteMultiaddr()) {
		in, out = b.LANIn, b.LANOut
	}
	if in == nil && out == nil {
		return s
	}
	return &cappedStream{Stream: s, in: in, out: out}
}

type cappedStream struct {
	network.Stream
	in, out *rate.Limiter
}

func (s *cappedStream) Read(p []byte) (int, error) {
	if s.in == nil {
		return s.Stream.Read(p)
	}
	if b := s.in.Burst(); len(p) > b {
		p = p[:b]
	}
	n, err := s.Stream.Read(p)
	if n > 0 {
		// The bytes are in; paying for them afterwards slows the
		// sender through the stream's flow control.
		_ = s.in.WaitN(context.Background(), n)
	}
	return n, err
}

func (s *cappedStream) Write(p []byte) (int, error) {
	if s.out == nil {
		return s.Stream.Write(p)
	}
	written := 0
	for len(p) > 0 {
		k := min(len(p), s.out.Burst())
		if err := s.out.WaitN(context.Background(), k); err != nil {
			return written, err
		}
		n, err := s.Stream.Write(p[:k])
		written += n
		if err != nil {
			return written, err
		}
		p = p[k:]
	}
	return written, nil
}

// cappedHost hands out capped streams to the protocols it serves
// (bitswap and the DHT).
type cappedHost struct {
	host.Host
	caps *BandwidthLimiter
}

func (h *cappedHost) NewStream(ctx context.Context, p peer.ID, pids ...protocol.ID) (network.Stream, error) {
	s, err := h.Host.NewStream(ctx, p, pids...)
	if err != nil {
		return nil, err
	}
	return h.caps.Wrap(s), nil
}

func (h *cappedHost) SetStreamHandler(pid protocol.ID, handler network.StreamHandler) {
	h.Host.SetStreamHandler(pid, func(s network.Stream) { handler(h.caps.Wrap(s)) })
}

func (h *cappedHost) SetStreamHandlerMatch(pid protocol.ID, m func(protocol.ID) bool, handler network.StreamHandler) {
	h.Host.SetStreamHandlerMatch(pid, m, func(s network.Stream) { handler(h.caps.Wrap(s)) })
}
