package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/storage"

	"github.com/ipfs/go-cid"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
)

func connect(t testing.TB, a, b *node.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ai := peer.AddrInfo{ID: b.PeerID, Addrs: b.Net.Host.Addrs()}
	if err := a.Net.Host.Connect(ctx, ai); err != nil {
		t.Fatalf("connect: %v", err)
	}
}

// peerWithFile starts two online nodes, A holding a pinned file of size
// random bytes, and connects B to A.
func peerWithFile(t testing.TB, size int) (a, b *node.Node, data []byte, c cid.Cid) {
	t.Helper()
	a = testutil.MustOnlineNode(t, "none", nil)
	b = testutil.MustOnlineNode(t, "none", nil)
	data = make([]byte, size)
	rand.Read(data)
	c = addData(t, a, data, true)
	connect(t, b, a)
	return a, b, data, c
}

// Ensure a file held only by a connected peer is read through bitswap,
// and the fetched blocks stay in the local store.
func TestNet_WriteFile_FetchesFromPeer(t *testing.T) {
	_, b, data, c := peerWithFile(t, 3<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var buf bytes.Buffer
	if err := b.UnixFS().WriteFile(ctx, c, 0, -1, &buf); err != nil {
		t.Fatalf("WriteFile on B: %v", err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("B read %d bytes, want %d equal bytes", buf.Len(), len(data))
	}
	if has, _ := b.Blocks.Has(ctx, c); !has {
		t.Fatal("root block not stored on B")
	}
}

// Ensure the address filters refuse a dial to a filtered range.
func TestNet_Filters_BlockDial(t *testing.T) {
	a := testutil.MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Swarm.AddrFilters", []any{"/ip4/127.0.0.0/ipcidr/8"})
	})
	b := testutil.MustOnlineNode(t, "none", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := a.Net.Host.Connect(ctx, peer.AddrInfo{ID: b.PeerID, Addrs: b.Net.Host.Addrs()})
	if err == nil {
		t.Fatal("dial to a filtered address succeeded")
	}
	m, _ := ma.NewMultiaddr("/ip4/127.0.0.1/tcp/1")
	if !a.Net.Filters.Blocked(m) {
		t.Fatal("127.0.0.1 not blocked")
	}
}

// Ensure the connection manager trims to its water marks when 60 peers
// (lightweight libp2p hosts on loopback) connect.
func TestNet_ConnMgr_TrimsSixtyPeers(t *testing.T) {
	n := testutil.MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Swarm.ConnMgr", map[string]any{"LowWater": 10, "HighWater": 20, "GracePeriod": "0s"})
	})
	target := peer.AddrInfo{ID: n.PeerID, Addrs: n.Net.Host.Addrs()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 60; i++ {
		h, err := libp2p.New(libp2p.NoListenAddrs, libp2p.Transport(tcp.NewTCPTransport), libp2p.DisableRelay(),
			libp2p.DisableMetrics(), libp2p.ResourceManager(&network.NullResourceManager{}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		if err := h.Connect(ctx, target); err != nil {
			t.Fatalf("peer %d: %v", i, err)
		}
	}
	if got := len(n.Net.Host.Network().Peers()); got <= 20 {
		t.Logf("already trimmed to %d peers before the explicit trim", got)
	}
	n.Net.ConnMgr.TrimOpenConns(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for len(n.Net.Host.Network().Peers()) > 20 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := len(n.Net.Host.Network().Peers())
	if got > 20 || got < 10 {
		t.Fatalf("after trim: %d peers, want between low water 10 and high water 20", got)
	}
	t.Logf("60 peers connected, %d left after the trim", got)
}

// Ensure Swarm.Bandwidth caps a transfer: 1 MiB served under a 512 KiB/s
// LAN upload cap takes more than a second.
func TestNet_Bandwidth_CapSlowsTransfer(t *testing.T) {
	a := testutil.MustOnlineNode(t, "none", func(doc map[string]any) {
		config.SetKey(doc, "Swarm.Bandwidth", map[string]any{"LANOut": "512KiB"})
	})
	b := testutil.MustOnlineNode(t, "none", nil)
	if a.Net.Limits.LANOut != 512<<10 || a.Net.Caps.LANOut == nil {
		t.Fatalf("cap not in effect: %+v", a.Net.Limits)
	}
	data := make([]byte, 1<<20)
	rand.Read(data)
	c := addData(t, a, data, true)
	connect(t, b, a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	var buf bytes.Buffer
	if err := b.UnixFS().WriteFile(ctx, c, 0, -1, &buf); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatal("data differs")
	}
	// 1 MiB at 512 KiB/s after a 128 KiB burst: at least 1.75 s.
	if el < 1200*time.Millisecond {
		t.Fatalf("1 MiB under a 512 KiB/s cap took only %v", el)
	}
	t.Logf("1 MiB under a 512 KiB/s cap: %v (%.0f KiB/s)", el, float64(len(data))/1024/el.Seconds())
}

// Ensure QUIC listens and carries a connection (loopback UDP).
func TestNet_QUIC_Connects(t *testing.T) {
	quicOnly := func(doc map[string]any) {
		config.SetKey(doc, "Addresses.Swarm", []any{"/ip4/127.0.0.1/udp/0/quic-v1"})
	}
	a := testutil.MustOnlineNode(t, "none", quicOnly)
	b := testutil.MustOnlineNode(t, "none", quicOnly)
	connect(t, b, a)
	conns := b.Net.Host.Network().ConnsToPeer(a.PeerID)
	if len(conns) != 1 {
		t.Fatalf("%d connections", len(conns))
	}
	if _, err := conns[0].RemoteMultiaddr().ValueForProtocol(ma.P_QUIC_V1); err != nil {
		t.Fatalf("connection is not QUIC: %s", conns[0].RemoteMultiaddr())
	}
}

// Ensure a block damaged on disk is never served and, on an online node,
// is fetched again from a peer that has it: the read answers the right
// bytes and the store is whole again. Its peer, asked for the damaged
// copy, sends nothing.
func TestNet_FlippedBit_FetchedAgainFromPeer(t *testing.T) {
	a, b, data, c := peerWithFile(t, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.UnixFS().WriteFile(ctx, c, 0, -1, io.Discard); err != nil {
		t.Fatalf("first read on B: %v", err)
	}
	links, err := b.UnixFS().Links(ctx, c)
	if err != nil || len(links) < 2 {
		t.Fatalf("links: %v %v", links, err)
	}
	leaf := links[1].Cid
	testutil.FlipBit(t, b.Store, leaf.Hash())
	var off bytes.Buffer
	err = b.UnixFS().WriteFile(node.OfflineContext(ctx), c, 0, -1, &off)
	if !errors.Is(err, storage.ErrBlockDamaged) || !strings.Contains(err.Error(), leaf.String()) {
		t.Fatalf("offline read of the damaged file: %v, want ErrBlockDamaged naming %s", err, leaf)
	}
	if bytes.Contains(off.Bytes(), data[256<<10:512<<10]) {
		t.Fatal("offline read served the damaged block")
	}
	var buf bytes.Buffer
	if err := b.UnixFS().WriteFile(ctx, c, 0, -1, &buf); err != nil {
		t.Fatalf("online read of the damaged file: %v", err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatal("online read of the damaged file answered other bytes")
	}
	if errs := b.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatalf("store after the fetch: %v", errs)
	}
	// Now damage A's copy: B (which dropped its block) asks A, which
	// must not send it.
	testutil.FlipBit(t, a.Store, leaf.Hash())
	if err := b.Blocks.DeleteBlock(ctx, leaf); err != nil {
		t.Fatal(err)
	}
	sent := bitswapSent(t, a)
	short, cancel2 := context.WithTimeout(ctx, 2*time.Second)
	defer cancel2()
	if err := b.UnixFS().WriteFile(short, c, 0, -1, io.Discard); err == nil {
		t.Fatal("B read the file while the only copy of a block is damaged")
	}
	if got := bitswapSent(t, a); got != sent {
		t.Fatalf("A sent %d blocks more with its only copy damaged", got-sent)
	}
}

func bitswapSent(t testing.TB, n *node.Node) uint64 {
	t.Helper()
	st, err := n.Net.Bitswap.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.BlocksSent
}
