// peer.go: the peer-side load: another peer of the LAN that, all through
// the soak, fetches the blocks of acknowledged adds over bitswap, asks the
// LAN DHT, and publishes on a pubsub topic the daemon subscribes to.

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/lanpeer"

	"github.com/ipfs/boxo/bitswap"
	bsnet "github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/boxo/blockstore"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	dhtpb "github.com/libp2p/go-libp2p-kad-dht/pb"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-msgio/pbio"
)

const (
	lanKad    = protocol.ID("/ipfs/lan/kad/1.0.0")
	soakTopic = "cairn-soak"
	// peerEvery is the pace of the peer's steps, each one of a fetch, a
	// pair of DHT queries or a publish, in turn: about 1.7 of each a
	// second.
	peerEvery = 200 * time.Millisecond
	// fetchLinks bounds the leaves fetched with each root: at most
	// 768 KiB a fetch, about 1.3 MB/s sent by the daemon.
	fetchLinks = 2
)

// peerLoad is the peer and what it did.
type peerLoad struct {
	s     *soak
	h     host.Host
	bs    *bitswap.Bitswap
	store blockstore.Blockstore
	topic *pubsub.Topic
	step  atomic.Int64

	mu       sync.Mutex
	info     lanpeer.Info // the daemon; zero while it is down
	unsub    context.CancelFunc
	sub      *atomic.Int64 // messages the daemon's subscription got this life
	received int64         // and in the lives before

	blocks, bytes, queries, published atomic.Int64
}

func newPeerLoad(s *soak) (*peerLoad, error) {
	h, err := lanpeer.New()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	p := &peerLoad{s: s, h: h, store: blockstore.NewBlockstore(dssync.MutexWrap(ds.NewMapDatastore()))}
	p.bs = bitswap.New(ctx, bsnet.NewFromIpfsHost(h), nil, p.store)
	ps, err := pubsub.NewGossipSub(ctx, h)
	if err != nil {
		p.close()
		return nil, err
	}
	if p.topic, err = ps.Join(soakTopic); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *peerLoad) close() {
	if p.bs != nil {
		p.bs.Close()
	}
	p.h.Close()
}

// attach learns the daemon d (just started) as a peer, subscribes it to
// the topic through its RPC and connects to it.
func (p *peerLoad) attach(d *daemon.Daemon) error {
	info, err := lanpeer.Target(d, string(lanKad))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	n, _ := lanpeer.SubscribeRPC(ctx, d.URL, soakTopic, "")
	p.mu.Lock()
	p.info, p.unsub, p.sub = info, cancel, n
	p.mu.Unlock()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	return p.h.Connect(cctx, info.AddrInfo)
}

// detach forgets the daemon (it is about to go down).
func (p *peerLoad) detach() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unsub != nil {
		p.unsub()
		p.received += p.sub.Load()
	}
	p.info, p.unsub, p.sub = lanpeer.Info{}, nil, nil
}

// target is the daemon, connected to; ok is false while it is down.
func (p *peerLoad) target(ctx context.Context) (lanpeer.Info, bool, error) {
	p.mu.Lock()
	info := p.info
	p.mu.Unlock()
	if info.ID == "" {
		return info, false, nil
	}
	if p.h.Network().Connectedness(info.ID) != network.Connected {
		if err := p.h.Connect(ctx, info.AddrInfo); err != nil {
			return info, true, fmt.Errorf("peer: connect: %w", err)
		}
	}
	return info, true, nil
}

// run takes one step: a fetch, DHT queries or a publish, in turn.
func (p *peerLoad) run(r *rand.Rand) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, ok, err := p.target(ctx)
	if !ok {
		return
	}
	if err == nil {
		switch p.step.Add(1) % 3 {
		case 0:
			err = p.fetch(ctx, r)
		case 1:
			err = p.ask(ctx, info, r)
		case 2:
			err = p.topic.Publish(ctx, fmt.Appendf(nil, "soak %d", r.Uint64()))
			if err == nil {
				p.published.Add(1)
			}
		}
	}
	p.s.count(err)
}

// fetch gets an acknowledged add's root block and its first leaves over
// bitswap into an empty store, checks each against its CID, and drops
// them again.
func (p *peerLoad) fetch(ctx context.Context, r *rand.Rand) error {
	p.s.mu.Lock()
	if len(p.s.order) == 0 {
		p.s.mu.Unlock()
		return nil
	}
	root, err := cid.Decode(p.s.order[r.IntN(len(p.s.order))])
	p.s.mu.Unlock()
	if err != nil {
		return err
	}
	want := []cid.Cid{root}
	for i := 0; i < len(want); i++ {
		c := want[i]
		b, err := p.bs.GetBlock(ctx, c)
		if err != nil {
			return fmt.Errorf("peer: bitswap %s: %w", c, err)
		}
		if h, err := c.Prefix().Sum(b.RawData()); err != nil || !h.Equals(c) {
			return fmt.Errorf("peer: bitswap %s: the bytes do not hash to the CID", c)
		}
		p.blocks.Add(1)
		p.bytes.Add(int64(len(b.RawData())))
		if i == 0 && c.Type() == cid.DagProtobuf {
			if nd, err := merkledag.DecodeProtobuf(b.RawData()); err == nil {
				for _, l := range nd.Links()[:min(fetchLinks, len(nd.Links()))] {
					want = append(want, l.Cid)
				}
			}
		}
		_ = p.store.DeleteBlock(ctx, c)
	}
	return nil
}

// ask sends FIND_NODE of a random key and GET_PROVIDERS of an added
// root on the LAN DHT and reads the answers.
func (p *peerLoad) ask(ctx context.Context, info lanpeer.Info, r *rand.Rand) error {
	s, err := p.h.NewStream(ctx, info.ID, lanKad)
	if err != nil {
		return fmt.Errorf("peer: DHT stream: %w", err)
	}
	defer s.Close()
	s.SetDeadline(time.Now().Add(5 * time.Second))
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(r.Uint32())
	}
	msgs := []*dhtpb.Message{dhtpb.NewMessage(dhtpb.Message_FIND_NODE, key, 0)}
	p.s.mu.Lock()
	if len(p.s.order) > 0 {
		if c, err := cid.Decode(p.s.order[r.IntN(len(p.s.order))]); err == nil {
			msgs = append(msgs, dhtpb.NewMessage(dhtpb.Message_GET_PROVIDERS, c.Hash(), 0))
		}
	}
	p.s.mu.Unlock()
	w, rd := pbio.NewDelimitedWriter(s), pbio.NewDelimitedReader(s, 4<<20)
	for _, m := range msgs {
		if err := w.WriteMsg(m); err != nil {
			return fmt.Errorf("peer: DHT %s: %w", m.GetType(), err)
		}
		if err := rd.ReadMsg(new(dhtpb.Message)); err != nil {
			return fmt.Errorf("peer: DHT %s answer: %w", m.GetType(), err)
		}
		p.queries.Add(1)
	}
	return nil
}

// report is the line the soak prints, and an error when a part of the
// load never happened.
func (p *peerLoad) report() (string, error) {
	p.mu.Lock()
	got := p.received
	if p.sub != nil {
		got += p.sub.Load()
	}
	p.mu.Unlock()
	line := fmt.Sprintf("peer: %d blocks (%.1f MiB) fetched over bitswap, %d DHT queries answered, %d pubsub messages published, %d received by the daemon's subscription",
		p.blocks.Load(), float64(p.bytes.Load())/(1<<20), p.queries.Load(), p.published.Load(), got)
	if p.blocks.Load() == 0 || p.queries.Load() == 0 || got == 0 {
		return line, fmt.Errorf("the peer-side load did not happen: %s", line)
	}
	return line, nil
}
