// p2pmount.go: the node's side of the p2p commands: whether stream
// mounting is on (Experimental.Libp2pStreamMounting) and the reading of a
// forward's target, which resolves DNS addresses with DNS.Resolvers. The
// forwarding itself is p2p.P2P (p2p/mount.go).

package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cairn/node/p2p"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// P2P returns the node's stream mounting, or Kubo's error when it is
// disabled (checked first, as Kubo does) or the node is offline.
func (w *Network) P2P() (*p2p.P2P, error) {
	n := w.n
	if !n.Config().Experimental.Libp2pStreamMounting {
		return nil, p2p.ErrMountingDisabled
	}
	nt := n.Net
	if nt == nil {
		return nil, ErrOffline
	}
	return nt.P2P, nil
}

// ParseP2PTarget reads the target of p2p/forward: /p2p/<id>, an address
// ending in /p2p/<id>, or a DNS address (/dnsaddr/...) resolved with
// DNS.Resolvers to addresses of one peer. Kubo's texts.
func (w *Network) ParseP2PTarget(ctx context.Context, s string) (peer.AddrInfo, error) {
	n := w.n
	m, err := ma.NewMultiaddr(s)
	if err != nil {
		return peer.AddrInfo{}, err
	}
	if ai, err := peer.AddrInfoFromP2pAddr(m); err == nil {
		return *ai, nil
	}
	rs, err := NewDNSResolver(n.Config().DNS.Resolvers)
	if err != nil {
		return peer.AddrInfo{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := rs.Resolve(ctx, m)
	if err != nil {
		return peer.AddrInfo{}, err
	}
	var ai peer.AddrInfo
	for _, a := range addrs {
		ta, id := peer.SplitAddr(a)
		if id == "" {
			continue
		}
		if ai.ID != "" && ai.ID != id {
			return peer.AddrInfo{}, fmt.Errorf("ambiguous multiaddr %s could refer to %s or %s", m, ai.ID, id)
		}
		ai.ID = id
		if ta != nil {
			ai.Addrs = append(ai.Addrs, ta)
		}
	}
	if ai.ID == "" {
		return peer.AddrInfo{}, errors.New("fail to resolve the multiaddr:" + m.String())
	}
	return ai, nil
}
