// Package p2ptest has libp2p helpers for tests, usable where
// internal/testutil (which opens whole nodes) is not: in package node's
// own tests.
package p2ptest

import (
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
)

// HangUp has remote close its connections to local, as a peer that hangs
// up does, and returns once local has seen every one of them closed.
//
// It first waits until remote has registered each connection local has
// to it: local counts a connection it dialled as soon as its side of the
// handshake ends, remote only once its own side ends, and a ClosePeer in
// between misses that connection, which stays open (on a busy CPU the gap
// lasts long enough for a test polling the dialler to fall into it). An
// error says which wait took longer than d.
func HangUp(local, remote host.Host, d time.Duration) error {
	conns := local.Network().ConnsToPeer(remote.ID())
	deadline := time.Now().Add(d)
	for !registered(conns, remote.Network().ConnsToPeer(local.ID())) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s has not registered the connections of %s after %v", remote.ID(), local.ID(), d)
		}
		time.Sleep(time.Millisecond)
	}
	if err := remote.Network().ClosePeer(local.ID()); err != nil {
		return err
	}
	for _, c := range conns {
		for !c.IsClosed() {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s still has its connection to %s open after %v", local.ID(), remote.ID(), d)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// registered reports whether each connection of mine (one side) has its
// other side among theirs, matched by the two ends' addresses.
func registered(mine, theirs []network.Conn) bool {
	for _, c := range mine {
		found := false
		for _, o := range theirs {
			if o.LocalMultiaddr().Equal(c.RemoteMultiaddr()) && o.RemoteMultiaddr().Equal(c.LocalMultiaddr()) {
				found = true
				break
			}
		}
		if !found && !c.IsClosed() {
			return false
		}
	}
	return true
}
