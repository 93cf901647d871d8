// attacks.go: the battery, one entry per attack, and the hostile peers
// it is made of.

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cairn/scripts/internal/benchutil"
	"cairn/scripts/internal/lanpeer"

	"github.com/ipfs/boxo/bitswap"
	bsmsg "github.com/ipfs/boxo/bitswap/message"
	bspb "github.com/ipfs/boxo/bitswap/message/pb"
	bsnet "github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/boxo/blockstore"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	dhtpb "github.com/libp2p/go-libp2p-kad-dht/pb"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pspb "github.com/libp2p/go-libp2p-pubsub/pb"
	recpb "github.com/libp2p/go-libp2p-record/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/protocol/identify"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	"github.com/libp2p/go-msgio/pbio"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/multiformats/go-multihash"
	"google.golang.org/protobuf/proto"
)

var battery = []attack{
	{"conns", "dial-flood", dialFlood},
	{"conns", "stream-flood", streamFlood},
	{"conns", "half-open", halfOpen},
	{"bitswap", "wantlist-100k", wantlist100k},
	{"bitswap", "absent-wants", absentWants},
	{"bitswap", "same-blocks", sameBlocks},
	{"bitswap", "malformed", bitswapMalformed},
	{"dht", "provider-flood", providerFlood},
	{"dht", "value-flood", valueFlood},
	{"dht", "find-node-flood", findNodeFlood},
	{"pubsub", "message-flood", pubsubFlood},
	{"pubsub", "oversized-and-bad", pubsubBad},
	{"pubsub", "topics", pubsubTopics},
	{"pubsub", "ipns-spam", ipnsSpam},
	{"services", "identify-ping-autonat", serviceSpam},
}

const (
	lanKad     = protocol.ID("/ipfs/lan/kad/1.0.0")
	meshsub    = protocol.ID("/meshsub/1.1.0")
	autonatV1  = protocol.ID("/libp2p/autonat/1.0.0")
	maxDHTMsg  = 4 << 20
	peersFlood = 300
)

// newPeer is a hostile peer (lanpeer.New: no resource limits of its
// own, the daemon's are what is tested).
func newPeer() (host.Host, error) { return lanpeer.New() }

// peers makes n hostile peers connected to the target; those the
// target refuses are counted, not returned.
func (t *target) peers(ctx context.Context, n int) (hs []host.Host, refused int, err error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var ferr error
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := newPeer()
			if err != nil {
				mu.Lock()
				ferr = err
				mu.Unlock()
				return
			}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			err = h.Connect(cctx, t.Info)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refused++
				h.Close()
				return
			}
			hs = append(hs, h)
		}()
	}
	wg.Wait()
	return hs, refused, ferr
}

func closeAll(hs []host.Host) {
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() { defer wg.Done(); h.Close() }()
	}
	wg.Wait()
}

// dialFlood: peersFlood peers dial at once, and those that get in keep
// redialling after the daemon trims them.
func dialFlood(ctx context.Context, t *target) (string, error) {
	var all []host.Host
	defer func() { closeAll(all) }()
	var in, refused int
	for ctx.Err() == nil {
		hs, r, err := t.peers(ctx, peersFlood)
		all = append(all, hs...)
		in += len(hs)
		refused += r
		if err != nil {
			return "", err
		}
		closeAll(hs)
		all = all[:0]
	}
	return fmt.Sprintf("%d dials by %d-peer waves: %d connected, %d refused or failed", in+refused, peersFlood, in, refused), nil
}

// streamFlood: one peer opens streams of the bitswap protocol (which
// the daemon serves) as fast as it can and keeps them all open.
func streamFlood(ctx context.Context, t *target) (string, error) {
	h, err := newPeer()
	if err != nil {
		return "", err
	}
	defer h.Close()
	if err := h.Connect(ctx, t.Info); err != nil {
		return "", err
	}
	var opened, refused atomic.Int64
	var mu sync.Mutex
	var streams []network.Stream
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && opened.Load() < 20000 {
				s, err := h.NewStream(network.WithAllowLimitedConn(ctx, "flood"), t.Info.ID, bsnet.ProtocolBitswap)
				if err != nil {
					refused.Add(1)
					if ctx.Err() == nil && h.Network().Connectedness(t.Info.ID) != network.Connected {
						h.Connect(ctx, t.Info)
					}
					continue
				}
				opened.Add(1)
				mu.Lock()
				streams = append(streams, s)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, s := range streams {
		s.Reset()
	}
	return fmt.Sprintf("%d streams opened, %d refused or reset", opened.Load(), refused.Load()), nil
}

// halfOpen: raw TCP connections that send part of the multistream
// header, or the header and a few bytes of a Noise handshake, and stall.
func halfOpen(ctx context.Context, t *target) (string, error) {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var failed int
	for i := 0; ctx.Err() == nil && len(conns) < 1000; i++ {
		d := net.Dialer{Timeout: 2 * time.Second}
		c, err := d.DialContext(ctx, "tcp", t.TCP)
		if err != nil {
			failed++
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if i%2 == 0 {
			c.Write([]byte("\x13/multistream/1.0")) // the header cut short
		} else {
			c.Write([]byte("\x13/multistream/1.0.0\n\x07/noise\n\x00\x20\x01\x02\x03"))
		}
		conns = append(conns, c)
	}
	<-ctx.Done()
	// How many the daemon had already hung up on.
	closed := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		buf := make([]byte, 512)
		for {
			_, err := c.Read(buf)
			if err == nil {
				continue
			}
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				closed++
			}
			break
		}
	}
	return fmt.Sprintf("%d stalled handshakes held open, %d already closed by the daemon at the end, %d dials failed", len(conns), closed, failed), nil
}

// bitswapStream opens a bitswap stream from a new connected peer.
func (t *target) bitswapPeer(ctx context.Context) (host.Host, error) {
	h, err := newPeer()
	if err != nil {
		return nil, err
	}
	if err := h.Connect(ctx, t.Info); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

func randomCid() cid.Cid {
	b := make([]byte, 32)
	rand.Read(b)
	mh, _ := multihash.Encode(b, multihash.SHA2_256)
	return cid.NewCidV1(cid.Raw, mh)
}

// sendWants sends one bitswap message with n wants of random CIDs.
func sendWants(ctx context.Context, h host.Host, to peer.ID, n int, full bool) error {
	s, err := h.NewStream(ctx, to, bsnet.ProtocolBitswap)
	if err != nil {
		return err
	}
	defer s.Close()
	m := bsmsg.New(full)
	for i := range n {
		wt := bspb.Message_Wantlist_Block
		if i%2 == 0 {
			wt = bspb.Message_Wantlist_Have
		}
		m.AddEntry(randomCid(), int32(i), wt, true)
	}
	return m.ToNetV1(s)
}

// wantlist100k: ten peers each send want-lists of 100,000 entries (in
// messages of 20,000, under the 4 MiB message limit), again and again.
func wantlist100k(ctx context.Context, t *target) (string, error) {
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := t.bitswapPeer(ctx)
			if err != nil {
				failed.Add(1)
				return
			}
			defer h.Close()
			for ctx.Err() == nil {
				for i := range 5 {
					if err := sendWants(ctx, h, t.Info.ID, 20000, i == 0); err != nil {
						failed.Add(1)
						continue
					}
					sent.Add(20000)
				}
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("%d want entries sent by 10 peers, %d sends refused", sent.Load(), failed.Load()), nil
}

// absentWants: a real bitswap client on each of 20 peers asks for
// blocks nobody has, in batches of 100, cancelling after a second.
func absentWants(ctx context.Context, t *target) (string, error) {
	var asked atomic.Int64
	var wg sync.WaitGroup
	var errs atomic.Int64
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := newPeer()
			if err != nil {
				errs.Add(1)
				return
			}
			defer h.Close()
			bs := bitswap.New(ctx, bsnet.NewFromIpfsHost(h), nil, blockstore.NewBlockstore(dssync.MutexWrap(ds.NewMapDatastore())))
			defer bs.Close()
			if err := h.Connect(ctx, t.Info); err != nil {
				errs.Add(1)
				return
			}
			for ctx.Err() == nil {
				ks := make([]cid.Cid, 100)
				for i := range ks {
					ks[i] = randomCid()
				}
				c, cancel := context.WithTimeout(ctx, time.Second)
				ch, err := bs.GetBlocks(c, ks)
				if err == nil {
					for range ch {
					}
				}
				cancel()
				asked.Add(100)
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("%d absent blocks asked for by 20 bitswap clients (%d could not connect)", asked.Load(), errs.Load()), nil
}

// sameBlocks: 20 peers fetch the same 16 MiB file (its 64 leaves of
// 256 KiB) over and over, each with an empty store every round.
func sameBlocks(ctx context.Context, t *target) (string, error) {
	out, err := t.d.Post("refs", url.Values{"arg": {t.Big}, "recursive": {"true"}}, nil, "")
	if err != nil {
		return "", err
	}
	var leaves []cid.Cid
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, `"Ref":"`); i >= 0 {
			s := l[i+7:]
			if c, err := cid.Decode(s[:strings.IndexByte(s, '"')]); err == nil {
				leaves = append(leaves, c)
			}
		}
	}
	if len(leaves) == 0 {
		return "", fmt.Errorf("refs of %s: no leaves in %q", t.Big, out)
	}
	var got atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := newPeer()
			if err != nil {
				firstErr.set(err)
				return
			}
			defer h.Close()
			for ctx.Err() == nil {
				// Bitswap learns of peers as they connect: a fresh
				// client (and an empty store) each round, then a dial.
				h.Network().ClosePeer(t.Info.ID)
				bs := bitswap.New(ctx, bsnet.NewFromIpfsHost(h), nil, blockstore.NewBlockstore(dssync.MutexWrap(ds.NewMapDatastore())))
				if err := h.Connect(ctx, t.Info); err != nil {
					firstErr.set(err)
					bs.Close()
					continue
				}
				ch, err := bs.GetBlocks(ctx, leaves)
				firstErr.set(err)
				if err == nil {
					for b := range ch {
						got.Add(int64(len(b.RawData())))
					}
				}
				bs.Close()
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0).Seconds()
	saw := fmt.Sprintf("20 peers fetched %.0f MiB of the same %d blocks in %.1f s (%.1f MiB/s served; upload cap %d MiB/s)",
		float64(got.Load())/(1<<20), len(leaves), el, float64(got.Load())/(1<<20)/el, lanOutMiB)
	// The cap's bucket holds a quarter of a second, at most 256 KiB.
	if limit := float64(lanOutMiB<<20)*el + 256<<10; float64(got.Load()) > limit {
		return saw, fmt.Errorf("served %.1f MiB in %.1f s, past the upload cap of %d MiB/s", float64(got.Load())/(1<<20), el, lanOutMiB)
	}
	if got.Load() == 0 {
		return saw, errors.New("no block was served")
	}
	return saw, nil
}

// bitswapMalformed: garbage, a length prefix past the 4 MiB limit, a
// truncated message and a message of 100,000 zero-length wants, on
// fresh streams.
func bitswapMalformed(ctx context.Context, t *target) (string, error) {
	h, err := t.bitswapPeer(ctx)
	if err != nil {
		return "", err
	}
	defer h.Close()
	kinds := []func(io.Writer){
		func(w io.Writer) { b := make([]byte, 4096); rand.Read(b); w.Write(b) },
		func(w io.Writer) { w.Write([]byte{0xff, 0xff, 0xff, 0x7f}); w.Write(make([]byte, 64<<10)) },
		func(w io.Writer) { w.Write([]byte{0x80, 0x80, 0x40}); w.Write(make([]byte, 1000)) },
		func(w io.Writer) {
			// a wantlist entry whose CID is empty, 100,000 times
			entry := []byte{0x0a, 0x00}
			var list []byte
			for range 100000 {
				list = append(list, 0x0a, byte(len(entry)))
				list = append(list, entry...)
			}
			msg := append([]byte{0x0a}, varint(len(list))...)
			msg = append(msg, list...)
			w.Write(append(varint(len(msg)), msg...))
		},
	}
	var sent, reset int
	for i := 0; ctx.Err() == nil; i++ {
		if h.Network().Connectedness(t.Info.ID) != network.Connected {
			if err := h.Connect(ctx, t.Info); err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
		}
		s, err := h.NewStream(ctx, t.Info.ID, bsnet.ProtocolBitswap)
		if err != nil {
			reset++
			continue
		}
		kinds[i%len(kinds)](s)
		sent++
		s.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := s.Read(make([]byte, 1)); err != nil && !errors.Is(err, io.EOF) && !isTimeout(err) {
			reset++
		}
		s.Reset()
	}
	return fmt.Sprintf("%d malformed or oversized messages sent; %d streams reset or refused by the daemon", sent, reset), nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "deadline")
}

func varint(n int) []byte {
	var b []byte
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(b, byte(n))
}

// dhtFlood has peers write DHT messages made by mk on streams of the
// LAN DHT protocol (1,000 a stream), reading each answer when answered,
// until ctx ends; it returns the messages sent, those refused (stream
// refused or reset) and how much the repo grew.
func dhtFlood(ctx context.Context, t *target, peers int, mk func(h host.Host, i int) *dhtpb.Message, answered bool) (sent, refused int64, grewMiB float64, err error) {
	before := t.dsSize()
	hs, r, err := t.peers(ctx, peers)
	defer closeAll(hs)
	if err != nil {
		return 0, 0, 0, err
	}
	var ns, nr atomic.Int64
	nr.Add(int64(r))
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				s, err := h.NewStream(ctx, t.Info.ID, lanKad)
				if err != nil {
					firstErr.set(err)
					nr.Add(1)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				w, rd := pbio.NewDelimitedWriter(s), pbio.NewDelimitedReader(s, maxDHTMsg)
				for i := 0; i < 1000 && ctx.Err() == nil; i++ {
					if err := w.WriteMsg(mk(h, i)); err != nil {
						firstErr.set(err)
						nr.Add(1)
						break
					}
					ns.Add(1)
					if answered {
						s.SetReadDeadline(time.Now().Add(5 * time.Second))
						if err := rd.ReadMsg(new(dhtpb.Message)); err != nil {
							firstErr.set(err)
							nr.Add(1)
							break
						}
					}
				}
				s.Reset()
			}
		}()
	}
	wg.Wait()
	return ns.Load(), nr.Load(), float64(t.dsSize()-before) / (1 << 20), nil
}

// providerFlood: 20 peers each announce themselves as providers of as
// many random keys as they can (records the daemon stores for others).
func providerFlood(ctx context.Context, t *target) (string, error) {
	sent, refused, grew, err := dhtFlood(ctx, t, 20, func(h host.Host, i int) *dhtpb.Message {
		return addProvider(randomCid().Hash(), h.ID(), t.Info.Addrs)
	}, false)
	if err != nil {
		return "", err
	}
	// The daemon's count of what it stores for others, against its cap
	// (cairn_dht_provider_records*); the count errs on the high side.
	m := t.metrics()
	stored, capped, dropped := m["cairn_dht_provider_records"], m["cairn_dht_provider_records_max"], m["cairn_dht_provider_records_refused_total"]
	// A newcomer's record, after the flood: served once the largest
	// holders' records are evicted (at most every 10 s past the cap).
	took, herr := honestProvider(t, 20*time.Second)
	m = t.metrics()
	saw := fmt.Sprintf("%d ADD_PROVIDER records sent by 20 peers, %d streams refused; %.0f stored (cap %.0f, and a sixteenth past it for peers holding few), %.0f refused, %.0f evicted, peers disconnected for it %.0f times; the datastore grew by %.1f MiB; a newcomer's record served after %.1f s",
		sent, refused, stored, capped, dropped, m["cairn_dht_provider_records_evicted_total"], m["cairn_p2p_peers_shunned_total"], grew, took.Seconds())
	if capped == 0 || stored > capped+math.Ceil(capped/16) {
		return saw, fmt.Errorf("provider records not capped: %.0f stored against a cap of %.0f", stored, capped)
	}
	if herr != nil {
		return saw, fmt.Errorf("a newcomer's provider record after the flood: %w", herr)
	}
	return saw, nil
}

// honestProvider has a new peer announce itself as the provider of a
// key, again each second, until another new peer's GET_PROVIDERS of that
// key answers it, or within: it returns how long that took.
func honestProvider(t *target, within time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	hs, _, err := t.peers(ctx, 2)
	defer closeAll(hs)
	if err != nil {
		return 0, err
	}
	if len(hs) != 2 {
		return 0, errors.New("the newcomers could not connect")
	}
	prov, asker, key := hs[0], hs[1], randomCid().Hash()
	start := time.Now()
	for {
		err := dhtAsk(ctx, prov, t.Info.ID, addProvider(key, prov.ID(), t.Info.Addrs), nil)
		if err == nil {
			time.Sleep(100 * time.Millisecond) // kad-dht stores it after the stream's message
			var ans dhtpb.Message
			err = dhtAsk(ctx, asker, t.Info.ID, dhtpb.NewMessage(dhtpb.Message_GET_PROVIDERS, key, 0), &ans)
			if err == nil {
				for _, pi := range dhtpb.PBPeersToPeerInfos(ans.ProviderPeers) {
					if pi.ID == prov.ID() {
						return time.Since(start), nil
					}
				}
				err = errors.New("not among the providers the node answers")
			}
		}
		select {
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("after %s: %w", within, err)
		case <-time.After(time.Second):
		}
	}
}

// addProvider is an ADD_PROVIDER of key by p at addrs. The attackers give
// the daemon's own addresses: on loopback any will do, and the record is
// stored the same.
func addProvider(key []byte, p peer.ID, addrs []ma.Multiaddr) *dhtpb.Message {
	m := dhtpb.NewMessage(dhtpb.Message_ADD_PROVIDER, key, 0)
	m.ProviderPeers = dhtpb.RawPeerInfosToPBPeers([]peer.AddrInfo{{ID: p, Addrs: addrs}})
	return m
}

// dhtAsk sends m on a new LAN DHT stream from h to p and, with ans, reads
// the answer into it.
func dhtAsk(ctx context.Context, h host.Host, p peer.ID, m *dhtpb.Message, ans *dhtpb.Message) error {
	s, err := h.NewStream(ctx, p, lanKad)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := pbio.NewDelimitedWriter(s).WriteMsg(m); err != nil {
		return err
	}
	if ans == nil {
		return nil
	}
	s.SetReadDeadline(time.Now().Add(5 * time.Second))
	return pbio.NewDelimitedReader(s, maxDHTMsg).ReadMsg(ans)
}

// valueFlood: PUT_VALUE of oversized, invalid and unknown-namespace
// records, and of records under /ipns/ of keys that do not sign them.
func valueFlood(ctx context.Context, t *target) (string, error) {
	big := make([]byte, 1<<20)
	rand.Read(big)
	sent, refused, grew, err := dhtFlood(ctx, t, 10, func(h host.Host, i int) *dhtpb.Message {
		var key string
		val := big[:100+i%1000]
		switch i % 4 {
		case 0:
			key = "/ipns/" + string(h.ID())
		case 1:
			key = "/pk/" + string(h.ID())
		case 2:
			key = fmt.Sprintf("/unknown/%d", i)
		case 3:
			key = "/ipns/" + string(h.ID())
			val = big
		}
		m := dhtpb.NewMessage(dhtpb.Message_PUT_VALUE, []byte(key), 0)
		m.Record = &recpb.Record{Key: []byte(key), Value: val}
		return m
	}, true)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d invalid or oversized PUT_VALUE records sent by 10 peers, %d rejected (stream reset); the datastore grew by %.1f MiB", sent, refused, grew), nil
}

// findNodeFlood: 20 peers ask FIND_NODE and GET_PROVIDERS of random keys
// as fast as the daemon answers.
func findNodeFlood(ctx context.Context, t *target) (string, error) {
	sent, refused, _, err := dhtFlood(ctx, t, 20, func(h host.Host, i int) *dhtpb.Message {
		typ := dhtpb.Message_FIND_NODE
		if i%2 == 1 {
			typ = dhtpb.Message_GET_PROVIDERS
		}
		return dhtpb.NewMessage(typ, randomCid().Hash(), 0)
	}, true)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d FIND_NODE/GET_PROVIDERS queries answered for 20 peers, %d refused", sent, refused), nil
}

// dsSize is the disk used by the daemon's repo.
func (t *target) dsSize() int64 {
	n, _ := diskUsage(t.Repo)
	return n
}

// pubsubPeers makes n peers running gossipsub, connected to the target.
func (t *target) pubsubPeers(ctx context.Context, n int, opts ...pubsub.Option) ([]host.Host, []*pubsub.PubSub, error) {
	hs, _, err := t.peers(ctx, n)
	if err != nil {
		closeAll(hs)
		return nil, nil, err
	}
	var pss []*pubsub.PubSub
	for _, h := range hs {
		ps, err := pubsub.NewGossipSub(ctx, h, opts...)
		if err != nil {
			closeAll(hs)
			return nil, nil, err
		}
		pss = append(pss, ps)
	}
	return hs, pss, nil
}

// publishFlood makes 10 gossipsub peers publish data(i) to topic as
// fast as they can until ctx ends, and returns how many were published.
func (t *target) publishFlood(ctx context.Context, topic string, data func(i int) []byte) (int64, error) {
	hs, pss, err := t.pubsubPeers(ctx, 10)
	defer closeAll(hs)
	if err != nil {
		return 0, err
	}
	var sent atomic.Int64
	var wg sync.WaitGroup
	for _, ps := range pss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tp, err := ps.Join(topic)
			if err != nil {
				firstErr.set(err)
				return
			}
			for i := 0; ctx.Err() == nil; i++ {
				if tp.Publish(ctx, data(i)) == nil {
					sent.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return sent.Load(), nil
}

// pubsubFlood: 10 peers publish 1 KiB messages to a topic the daemon
// subscribes to, as fast as they can, while an honest author publishes
// one every 50 ms: how many of the author's the daemon's subscriber gets
// says whether the topic is still usable during the flood.
func pubsubFlood(ctx context.Context, t *target) (string, error) {
	const topic = "attack-flood"
	hs, pss, err := t.pubsubPeers(ctx, 1)
	defer closeAll(hs)
	if err != nil {
		return "", err
	}
	author, err := pss[0].Join(topic)
	if err != nil {
		return "", err
	}
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	sub, honest := t.rpcSubscribe(sctx, topic, hs[0].ID().String())
	var authored atomic.Int64
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			if author.Publish(ctx, []byte("honest")) == nil {
				authored.Add(1)
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	sent, err := t.publishFlood(ctx, topic, func(int) []byte {
		msg := make([]byte, 1024)
		rand.Read(msg[:8])
		return msg
	})
	if err != nil {
		return "", err
	}
	time.Sleep(2 * time.Second) // what is on its way, so that lag is not counted as loss
	scancel()
	return fmt.Sprintf("%d messages of 1 KiB published by 10 peers; the daemon's RPC subscriber received %d, and %d of the %d an honest author sent meanwhile",
		sent, sub.Load(), honest.Load(), authored.Load()), nil
}

// rpcSubscribe subscribes the daemon to topic through the RPC and counts
// the messages the subscriber receives, all and those whose line holds
// mark (a peer ID: those from that author), until ctx ends.
func (t *target) rpcSubscribe(ctx context.Context, topic, mark string) (all, marked *atomic.Int64) {
	return lanpeer.SubscribeRPC(ctx, t.d.URL, topic, mark)
}

// rawPubsubPeers makes n peers that speak meshsub by hand: each reads
// and drops what the daemon sends, and writes what the attack makes.
func (t *target) rawPubsubPeers(ctx context.Context, n int) ([]host.Host, error) {
	hs, _, err := t.peers(ctx, n)
	if err != nil || len(hs) == 0 {
		closeAll(hs)
		return nil, fmt.Errorf("no peer got in: %v", err)
	}
	for _, h := range hs {
		h.SetStreamHandler(meshsub, func(s network.Stream) { io.Copy(io.Discard, s); s.Reset() })
	}
	return hs, nil
}

// rawRPC writes pubsub RPCs on a raw meshsub stream, as a peer that does
// not run pubsub itself; it reports whether the daemon reset the stream.
func rawRPC(ctx context.Context, h host.Host, to peer.ID, rpcs ...*pspb.RPC) (reset bool, err error) {
	s, err := h.NewStream(ctx, to, meshsub)
	if err != nil {
		return false, err
	}
	defer s.Reset()
	for _, r := range rpcs {
		b, err := proto.Marshal(r)
		if err != nil {
			return false, err
		}
		if _, err := s.Write(append(varint(len(b)), b...)); err != nil {
			return true, nil
		}
	}
	s.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err = s.Read(make([]byte, 1))
	return err != nil && !isTimeout(err), nil
}

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

// pubsubBad: messages over the 1 MiB limit, control messages over
// 512 KiB (IHAVE of 50,000 IDs: the CVE-2026-46679 class), and
// messages with invalid signatures on a topic the daemon subscribes to.
func pubsubBad(ctx context.Context, t *target) (string, error) {
	const topic = "attack-bad"
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	sub, _ := t.rpcSubscribe(sctx, topic, "")
	hs, err := t.rawPubsubPeers(ctx, 4)
	defer closeAll(hs)
	if err != nil {
		return "", err
	}
	big := make([]byte, 2<<20)
	var ids []string
	for i := range 50000 {
		ids = append(ids, fmt.Sprintf("%016d", i))
	}
	var sentBig, sentCtl, sentSig, resetBig, resetCtl atomic.Int64
	var wg sync.WaitGroup
	for i, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ctx.Err() == nil; j++ {
				if h.Network().Connectedness(t.Info.ID) != network.Connected {
					if h.Connect(ctx, t.Info) != nil {
						time.Sleep(50 * time.Millisecond)
						continue
					}
				}
				var r *pspb.RPC
				switch (i + j) % 3 {
				case 0:
					r = &pspb.RPC{Publish: []*pspb.Message{{From: []byte(h.ID()), Data: big, Seqno: []byte{1}, Topic: strp(topic)}}}
				case 1:
					r = &pspb.RPC{Control: &pspb.ControlMessage{Ihave: []*pspb.ControlIHave{{TopicID: strp(topic), MessageIDs: ids}}}}
				case 2:
					seq := make([]byte, 8)
					rand.Read(seq)
					sig := make([]byte, 64)
					rand.Read(sig)
					var msgs []*pspb.Message
					for range 100 {
						msgs = append(msgs, &pspb.Message{From: []byte(h.ID()), Data: []byte("forged"), Seqno: seq, Topic: strp(topic), Signature: sig})
					}
					r = &pspb.RPC{Subscriptions: []*pspb.RPC_SubOpts{{Subscribe: boolp(true), Topicid: strp(topic)}}, Publish: msgs}
				}
				reset, err := rawRPC(ctx, h, t.Info.ID, r)
				if err != nil {
					continue
				}
				switch (i + j) % 3 {
				case 0:
					sentBig.Add(1)
					if reset {
						resetBig.Add(1)
					}
				case 1:
					sentCtl.Add(1)
					if reset {
						resetCtl.Add(1)
					}
				case 2:
					sentSig.Add(100)
				}
			}
		}()
	}
	wg.Wait()
	scancel()
	return fmt.Sprintf("4 peers: %d messages of 2 MiB (%d streams reset), %d control messages of 50,000 IHAVE IDs (%d reset), %d messages with forged signatures; the RPC subscriber received %d of them",
		sentBig.Load(), resetBig.Load(), sentCtl.Load(), resetCtl.Load(), sentSig.Load(), sub.Load()), nil
}

// pubsubTopics: 10 peers each subscribe to fresh topics in RPCs of
// 1,000, unsubscribing half, for as long as the attack lasts.
func pubsubTopics(ctx context.Context, t *target) (string, error) {
	hs, err := t.rawPubsubPeers(ctx, 10)
	defer closeAll(hs)
	if err != nil {
		return "", err
	}
	var subs atomic.Int64
	var wg sync.WaitGroup
	for i, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := h.NewStream(ctx, t.Info.ID, meshsub)
			if err != nil {
				return
			}
			defer s.Reset()
			for j := 0; ctx.Err() == nil; j++ {
				r := &pspb.RPC{}
				for k := range 1000 {
					topic := fmt.Sprintf("spam-%d-%d-%d-%s", i, j, k, strings.Repeat("x", 64))
					r.Subscriptions = append(r.Subscriptions, &pspb.RPC_SubOpts{Subscribe: boolp(k%2 == 0 || j%2 == 0), Topicid: strp(topic)})
				}
				b, _ := proto.Marshal(r)
				if _, err := s.Write(append(varint(len(b)), b...)); err != nil {
					return
				}
				subs.Add(1000)
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("%d topic subscriptions announced by 10 peers", subs.Load()), nil
}

// ipnsSpam: the daemon publishes its name (joining its IPNS-over-pubsub
// topic); 10 peers then flood that topic with signed pubsub messages
// whose data are not valid IPNS records, and with ones of 10 KiB.
func ipnsSpam(ctx context.Context, t *target) (string, error) {
	if _, err := t.d.Post("name/publish", url.Values{"arg": {"/ipfs/" + t.File}}, nil, ""); err != nil {
		return "", err
	}
	pid, _ := peer.Decode(t.IPNSID)
	topic := "/record/" + b64url("/ipns/"+string(pid))
	sent, err := t.publishFlood(ctx, topic, func(i int) []byte {
		data := make([]byte, 100+(i%2)*10<<10)
		rand.Read(data)
		return data
	})
	if err != nil {
		return "", err
	}
	var res struct{ Path string }
	rerr := t.d.JSON("name/resolve", url.Values{"arg": {t.IPNSID}, "nocache": {"true"}}, &res)
	if rerr != nil || res.Path != "/ipfs/"+t.File {
		return "", fmt.Errorf("after the spam name/resolve of the daemon's own name says %q, %v", res.Path, rerr)
	}
	return fmt.Sprintf("%d bogus IPNS records published to %s by 10 peers; the name still resolves to its own record", sent, topic[:24]+"…"), nil
}

// serviceSpam: 50 peers open identify, ping and AutoNAT streams as fast
// as they can (the daemon runs only AutoNAT's client, so those are
// refused).
func serviceSpam(ctx context.Context, t *target) (string, error) {
	hs, refused, err := t.peers(ctx, 50)
	defer closeAll(hs)
	if err != nil {
		return "", err
	}
	var n, fails, answered [3]atomic.Int64
	var dials, dialFails atomic.Int64
	var wg sync.WaitGroup
	protos := []protocol.ID{identify.ID, ping.ID, autonatV1}
	for _, h := range hs {
		for k, p := range protos {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					if h.Network().Connectedness(t.Info.ID) != network.Connected {
						dials.Add(1)
						if h.Connect(ctx, t.Info) != nil {
							dialFails.Add(1)
							time.Sleep(50 * time.Millisecond)
							continue
						}
					}
					s, err := h.NewStream(ctx, t.Info.ID, p)
					if err != nil {
						fails[k].Add(1)
						time.Sleep(5 * time.Millisecond)
						continue
					}
					n[k].Add(1)
					switch p {
					case ping.ID:
						b := make([]byte, 32)
						s.Write(b)
						s.SetReadDeadline(time.Now().Add(2 * time.Second))
						if _, err := io.ReadFull(s, b); err == nil {
							answered[k].Add(1)
						}
					case identify.ID:
						s.SetReadDeadline(time.Now().Add(2 * time.Second))
						if c, err := io.Copy(io.Discard, s); err == nil && c > 0 {
							answered[k].Add(1)
						}
					}
					s.Reset()
				}
			}()
		}
	}
	wg.Wait()
	return fmt.Sprintf("50 peers (%d refused): identify %d streams (%d answered, %d refused at opening), ping %d (%d answered, %d refused), AutoNAT %d (%d refused); %d dials again (%d failed)",
		refused, n[0].Load(), answered[0].Load(), fails[0].Load(), n[1].Load(), answered[1].Load(), fails[1].Load(),
		n[2].Load(), fails[2].Load(), dials.Load(), dialFails.Load()), nil
}

func diskUsage(dir string) (int64, error) { return benchutil.DiskUsage(dir) }

// b64url is the multibase-less base64url of s (the RPC's pubsub topic
// arguments take it after a "u").
func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// firstErr keeps the first error an attacker met, for the report.
var firstErr errOnce

type errOnce struct {
	mu  sync.Mutex
	err error
}

func (e *errOnce) set(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil && err != nil {
		e.err = err
	}
}

// take returns the first error since the last take.
func (e *errOnce) take() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.err
	e.err = nil
	return err
}
