// addrfilter.go: address filters (swarm/filters, Swarm.AddrFilters) as a
// connection gater.

package p2p

import (
	"fmt"
	"net"
	"sort"
	"sync"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
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
