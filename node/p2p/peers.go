// peers.go: finding and dialling peers: the bootstrap peers at start,
// mDNS on the local network, Connect and FindPeer (peerstore, then DHT).

package p2p

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	ma "github.com/multiformats/go-multiaddr"
)

// bootstrap dials the bootstrap peers (a few at a time) and refreshes
// the DHT's routing table.
func (nt *Net) bootstrap(peers []peer.AddrInfo) {
	defer nt.wg.Done()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, ai := range peers {
		wg.Add(1)
		sem <- struct{}{}
		go func(ai peer.AddrInfo) {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(nt.ctx, 30*time.Second)
			defer cancel()
			_ = nt.Host.Connect(ctx, ai)
		}(ai)
	}
	wg.Wait()
	if nt.DHT != nil && nt.ctx.Err() == nil {
		_ = nt.DHT.Bootstrap(nt.ctx)
	}
}

type mdnsNotifee struct{ nt *Net }

func (m *mdnsNotifee) HandlePeerFound(ai peer.AddrInfo) {
	if ai.ID == m.nt.Host.ID() {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(m.nt.ctx, 10*time.Second)
		defer cancel()
		_ = m.nt.Host.Connect(ctx, ai)
	}()
}

// ParseBootstrap parses a bootstrap list of /.../p2p/<id> addresses.
func ParseBootstrap(list []string) ([]peer.AddrInfo, error) {
	var boot []peer.AddrInfo
	for _, s := range list {
		ai, err := parseBootstrap(s)
		if err != nil {
			return nil, fmt.Errorf("config Bootstrap: %w", err)
		}
		boot = append(boot, ai)
	}
	return boot, nil
}

// parseBootstrap parses a /.../p2p/<id> address.
func parseBootstrap(s string) (peer.AddrInfo, error) {
	m, err := ma.NewMultiaddr(s)
	if err != nil {
		return peer.AddrInfo{}, fmt.Errorf("%q: %w", s, err)
	}
	ai, err := peer.AddrInfoFromP2pAddr(m)
	if err != nil {
		return peer.AddrInfo{}, fmt.Errorf("%q: %w", s, err)
	}
	return *ai, nil
}

// Connect dials a peer, looking its addresses up in the DHT when the
// peerstore has none. A dial to the node itself fails at once with the
// error Kubo's host gives.
func (nt *Net) Connect(ctx context.Context, ai peer.AddrInfo) error {
	if ai.ID == nt.Host.ID() {
		return fmt.Errorf("failed to dial: %w", swarm.ErrDialToSelf)
	}
	if len(ai.Addrs) == 0 && len(nt.Host.Peerstore().Addrs(ai.ID)) == 0 {
		found, err := nt.FindPeer(ctx, ai.ID)
		if err != nil {
			return err
		}
		ai = found
	}
	return nt.Host.Connect(ctx, ai)
}

// FindPeer looks a peer's addresses up (peerstore, then DHT).
func (nt *Net) FindPeer(ctx context.Context, p peer.ID) (peer.AddrInfo, error) {
	if addrs := nt.Host.Peerstore().Addrs(p); len(addrs) > 0 {
		return peer.AddrInfo{ID: p, Addrs: addrs}, nil
	}
	if nt.DHT == nil {
		return peer.AddrInfo{}, routing.ErrNotSupported
	}
	ai, err := nt.DHT.FindPeer(ctx, p)
	if errors.Is(err, kb.ErrLookupFailure) {
		// An empty table: Kubo's routers answer "routing: not found".
		err = routing.ErrNotFound
	}
	return ai, err
}
