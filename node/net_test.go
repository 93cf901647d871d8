package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"

	"github.com/libp2p/go-libp2p/core/peer"
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

// Ensure a file held only by a connected peer is read through bitswap,
// and the fetched blocks stay in the local store.
func TestNet_WriteFile_FetchesFromPeer(t *testing.T) {
	a := testutil.MustOnlineNode(t, "none", nil)
	b := testutil.MustOnlineNode(t, "none", nil)
	data := make([]byte, 3<<20)
	rand.Read(data)
	c := addData(t, a, data, true)
	connect(t, b, a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var buf bytes.Buffer
	if err := b.WriteFile(ctx, c, 0, -1, &buf); err != nil {
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
		node.SetKey(doc, "Swarm.AddrFilters", []any{"/ip4/127.0.0.0/ipcidr/8"})
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
