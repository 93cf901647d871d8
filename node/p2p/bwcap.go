// bwcap.go: the bandwidth caps (Swarm.Bandwidth) as token buckets on the
// streams of bitswap, the DHT, pubsub and p2p forwarding.

package p2p

import (
	"context"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
	"golang.org/x/time/rate"
)

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
func NewBandwidthLimiter(lim Limits) *BandwidthLimiter {
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
