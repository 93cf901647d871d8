// pubsub.go: publish-subscribe on go-libp2p-pubsub, as Kubo 0.42 runs it
// (Pubsub section of the config, daemon --enable-pubsub-experiment):
// gossipsub (flooding its own publications) or floodsub, signed messages,
// a seen-messages cache of Pubsub.SeenMessagesTTL, messages of at most
// 1 MiB, and a default validator that drops a message whose sequence
// number is not above the last one seen from its author (so one author's
// messages never arrive out of order, and replays are ignored).
//
// This file is also the API other parts of cairn use (IPNS over pubsub):
// Publish, Subscribe (a Subscription with a bounded queue), Join and
// Release (a topic's shared handle), Topics, Peers, RegisterTopicValidator.

package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p-pubsub/timecache"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// pubsubBurst is how many messages the router's queues hold (arriving
// for validation, leaving for one peer, waiting for a subscription's
// pump): a burst of that many is not dropped.
const pubsubBurst = 128

// PubsubPeerTopics is how many topics one peer is tracked in (Kubo's
// go-libp2p-pubsub tracks any number); see topicCap.
const PubsubPeerTopics = 1024

// topicCap is the subscription filter that bounds what peers'
// subscriptions cost: go-libp2p-pubsub keeps an entry per topic and
// subscribed peer for as long as the peer stays, whatever the number (10
// peers announcing fresh topics, 1,000 per RPC, grew a pi-zero-2w node
// to 226 MiB of its 256 in 8 s). A peer is tracked in at most
// PubsubPeerTopics topics (the bound js-libp2p and nim-libp2p took for
// the same attack, far above what Kubo's IPNS over pubsub uses), and all
// peers together in at most total (from the budget); subscriptions past
// either are ignored, as if never sent, and counted in Refused.
// Unsubscriptions always pass. A peer's count is dropped when its last
// connection closes (pubsub forgets it then too).
type topicCap struct {
	perPeer, total int

	mu    sync.Mutex
	n     int
	peers map[peer.ID]map[string]struct{}
	// Refused counts the subscriptions ignored.
	Refused atomic.Int64
}

func newTopicCap(perPeer, total int) *topicCap {
	return &topicCap{perPeer: perPeer, total: total, peers: map[peer.ID]map[string]struct{}{}}
}

// CanSubscribe is true: the node's own subscriptions are not capped.
func (c *topicCap) CanSubscribe(string) bool { return true }

// FilterIncomingSubscriptions keeps the subscriptions within the caps.
func (c *topicCap) FilterIncomingSubscriptions(from peer.ID, subs []*pb.RPC_SubOpts) ([]*pb.RPC_SubOpts, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	set := c.peers[from]
	out := make([]*pb.RPC_SubOpts, 0, len(subs))
	for _, s := range subs {
		topic := s.GetTopicid()
		_, known := set[topic]
		switch {
		case !s.GetSubscribe():
			if known {
				delete(set, topic)
				c.n--
			}
		case known:
		case len(set) >= c.perPeer || c.n >= c.total:
			c.Refused.Add(1)
			continue
		default:
			if set == nil {
				set = map[string]struct{}{}
				c.peers[from] = set
			}
			set[topic] = struct{}{}
			c.n++
		}
		out = append(out, s)
	}
	return out, nil
}

// forget drops a peer's count (its last connection closed).
func (c *topicCap) forget(p peer.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n -= len(c.peers[p])
	delete(c.peers, p)
}

// ErrPubsubDisabled is Kubo's answer when pubsub is off.
var ErrPubsubDisabled = errors.New("experimental pubsub feature not enabled, run daemon with --enable-pubsub-experiment to use")

// PubsubMaxMessageSize is the largest message accepted or published
// (go-libp2p-pubsub's default, which Kubo keeps).
const PubsubMaxMessageSize = pubsub.DefaultMaxMessageSize

// pubsubMessageOverhead is what a queued message costs beyond its data
// (author, sequence number, signature, key, topic), counted against the
// queue's byte bound so that a flood of tiny messages is bounded too.
const pubsubMessageOverhead = 256

// PubSub is the running pubsub service of an online node (Net.PubSub).
type PubSub struct {
	ps *pubsub.PubSub
	// Router is "gossipsub" or "floodsub".
	Router string
	// QueueBytes bounds each subscription's queue (from the budget).
	QueueBytes int
	ctx        context.Context
	seqnos     *seqnoStore

	mu     sync.Mutex
	topics map[string]*topicRef
	active atomic.Int64
	caps   *topicCap
	rate   *publishRate
}

// RefusedSubscriptions is how many peers' subscriptions were ignored
// past the caps of topics tracked (PubsubPeerTopics per peer, and
// Limits.PubsubTopics in all).
func (p *PubSub) RefusedSubscriptions() int64 { return p.caps.Refused.Load() }

// DroppedMessages is how many peers' messages were dropped past the rate
// of each peer (PubsubPeerRate, PubsubPeerBurst) before validation.
func (p *PubSub) DroppedMessages() int64 { return p.rate.Dropped.Load() }

type topicRef struct {
	t    *pubsub.Topic
	refs int
}

// PubsubOptions are the settings of the Pubsub section of the config.
type PubsubOptions struct {
	// Router is "gossipsub" (also for "") or "floodsub".
	Router string
	// DisableSigning sends unsigned messages (and accepts them).
	DisableSigning bool
	// SeenMessagesTTL is how long a message ID is remembered (nil:
	// go-libp2p-pubsub's default, 120 s); it must be positive.
	SeenMessagesTTL *time.Duration
	// SeenMessagesStrategy is "last-seen" (also for "") or "first-seen".
	SeenMessagesStrategy string
}

// SeenMessages reads SeenMessagesTTL and SeenMessagesStrategy, and checks
// Router.
func (cfg PubsubOptions) SeenMessages() (time.Duration, timecache.Strategy, error) {
	switch cfg.Router {
	case "", "gossipsub", "floodsub":
	default:
		return 0, 0, fmt.Errorf("unknown pubsub router %s", cfg.Router)
	}
	ttl := pubsub.TimeCacheDuration
	if cfg.SeenMessagesTTL != nil {
		d := *cfg.SeenMessagesTTL
		if d <= 0 {
			return 0, 0, fmt.Errorf("config Pubsub.SeenMessagesTTL %q: want a positive duration", d)
		}
		ttl = d
	}
	strategy := timecache.Strategy_LastSeen
	switch cfg.SeenMessagesStrategy {
	case "", "last-seen":
	case "first-seen":
		strategy = timecache.Strategy_FirstSeen
	default:
		return 0, 0, fmt.Errorf("unsupported Pubsub.SeenMessagesStrategy %q", cfg.SeenMessagesStrategy)
	}
	return ttl, strategy, nil
}

// startPubSub starts the router from the config; peers are tracked in at
// most topics topics in all (topicCap; at least PubsubPeerTopics).
func startPubSub(ctx context.Context, h host.Host, cfg PubsubOptions, queueBytes, topics int) (*PubSub, error) {
	ttl, strategy, err := cfg.SeenMessages()
	if err != nil {
		return nil, err
	}
	seqnos := &seqnoStore{m: map[peer.ID][]byte{}}
	caps := newTopicCap(PubsubPeerTopics, max(topics, PubsubPeerTopics))
	rate := newPublishRate(PubsubPeerRate, PubsubPeerBurst)
	h.Network().Notify(&network.NotifyBundle{DisconnectedF: func(n network.Network, c network.Conn) {
		if n.Connectedness(c.RemotePeer()) != network.Connected {
			caps.forget(c.RemotePeer())
			rate.forget(c.RemotePeer())
		}
	}})
	opts := []pubsub.Option{
		pubsub.WithSubscriptionFilter(caps),
		pubsub.WithAppSpecificRpcInspector(rate.inspect),
		pubsub.WithMessageSigning(!cfg.DisableSigning),
		pubsub.WithSeenMessagesTTL(ttl),
		pubsub.WithSeenMessagesStrategy(strategy),
		pubsub.WithMaxMessageSize(PubsubMaxMessageSize),
		// The sequence-number check runs inline, in one validation
		// worker, so messages are checked in the order they arrived:
		// run asynchronously (the library's default, and Kubo's) the
		// check of a later message often runs first and the earlier
		// ones are then dropped as old (a burst of 200 lost all but a
		// few here). A queue of 128 messages waits for the worker (the
		// library's 32 drops a burst); a Pi checks a few thousand
		// signatures a second.
		pubsub.WithDefaultValidator(pubsub.NewBasicSeqnoValidator(seqnos, slog.New(slog.DiscardHandler)), pubsub.WithValidatorInline(true)),
		pubsub.WithValidateWorkers(1),
		pubsub.WithValidateQueueSize(pubsubBurst),
		// Messages waiting to be sent to one peer (the library's 32
		// drops a burst of publications).
		pubsub.WithPeerOutboundQueueSize(pubsubBurst),
	}
	p := &PubSub{QueueBytes: queueBytes, ctx: ctx, seqnos: seqnos, topics: map[string]*topicRef{}, caps: caps, rate: rate}
	switch cfg.Router {
	case "", "gossipsub":
		p.Router = "gossipsub"
		p.ps, err = pubsub.NewGossipSub(ctx, h, append(opts, pubsub.WithFloodPublish(true))...)
	case "floodsub":
		p.Router = "floodsub"
		p.ps, err = pubsub.NewFloodSub(ctx, h, opts...)
	default:
		return nil, fmt.Errorf("unknown pubsub router %s", cfg.Router)
	}
	if err != nil {
		return nil, fmt.Errorf("starting pubsub: %w", err)
	}
	return p, nil
}

// Join returns the topic's handle, joining it on first use; Release
// gives it back (the handle is closed when nobody holds it).
func (p *PubSub) Join(topic string) (*pubsub.Topic, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.topics[topic]; ok {
		r.refs++
		return r.t, nil
	}
	t, err := p.ps.Join(topic)
	if err != nil {
		return nil, err
	}
	p.topics[topic] = &topicRef{t: t, refs: 1}
	return t, nil
}

// Release gives back a handle of Join.
func (p *PubSub) Release(topic string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.topics[topic]
	if !ok {
		return
	}
	if r.refs--; r.refs > 0 {
		return
	}
	delete(p.topics, topic)
	_ = r.t.Close()
}

// Publish sends data to the topic's subscribers (and to local ones).
func (p *PubSub) Publish(ctx context.Context, topic string, data []byte) error {
	if len(data) > PubsubMaxMessageSize {
		return fmt.Errorf("message of %d bytes is over the pubsub limit of %d bytes", len(data), PubsubMaxMessageSize)
	}
	t, err := p.Join(topic)
	if err != nil {
		return err
	}
	defer p.Release(topic)
	return t.Publish(ctx, data)
}

// Topics lists the topics subscribed to, sorted.
func (p *PubSub) Topics() []string {
	out := p.ps.GetTopics()
	sort.Strings(out)
	return out
}

// Peers lists the pubsub peers, or those subscribed to topic, sorted.
func (p *PubSub) Peers(topic string) []peer.ID {
	out := p.ps.ListPeers(topic)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// RegisterTopicValidator adds a validator for a topic (see
// go-libp2p-pubsub's RegisterTopicValidator).
func (p *PubSub) RegisterTopicValidator(topic string, val any, opts ...pubsub.ValidatorOpt) error {
	return p.ps.RegisterTopicValidator(topic, val, opts...)
}

// UnregisterTopicValidator removes it.
func (p *PubSub) UnregisterTopicValidator(topic string) error {
	return p.ps.UnregisterTopicValidator(topic)
}

// ResetSeqnos forgets the last sequence number seen from one author
// (p != "") or from all, and says how many were forgotten (pubsub/reset).
func (p *PubSub) ResetSeqnos(id peer.ID) int {
	return p.seqnos.reset(id)
}

// ErrSlowSubscriber ends a subscription whose reader fell behind by more
// than its queue holds.
var ErrSlowSubscriber = errors.New("subscriber too slow: its queue of messages is full, subscription dropped")

// Subscription is one subscriber's view of a topic. Messages wait in a
// queue of at most PubSub.QueueBytes; a reader that lets it fill is
// dropped (Next then answers ErrSlowSubscriber) instead of making the
// node buffer without bound.
type Subscription struct {
	p     *PubSub
	topic string
	sub   *pubsub.Subscription
	limit int

	mu    sync.Mutex
	queue []*pubsub.Message
	bytes int
	err   error
	wake  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// Subscribe starts a subscription; Close ends it.
func (p *PubSub) Subscribe(topic string) (*Subscription, error) {
	t, err := p.Join(topic)
	if err != nil {
		return nil, err
	}
	// The library hands messages to the pump through a channel, which
	// drops what overflows it: room for a burst.
	sub, err := t.Subscribe(pubsub.WithBufferSize(pubsubBurst))
	if err != nil {
		p.Release(topic)
		return nil, err
	}
	s := &Subscription{p: p, topic: topic, sub: sub, limit: p.QueueBytes,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	p.active.Add(1)
	go s.pump()
	return s, nil
}

// Active is the number of subscriptions receiving (a dropped one no
// longer counts).
func (p *PubSub) Active() int { return int(p.active.Load()) }

// pump moves messages from the router into the bounded queue.
func (s *Subscription) pump() {
	defer close(s.done)
	defer s.p.active.Add(-1)
	for {
		m, err := s.sub.Next(s.p.ctx)
		if err != nil {
			s.end(err)
			return
		}
		cost := len(m.Data) + pubsubMessageOverhead
		s.mu.Lock()
		if s.bytes+cost > s.limit {
			// The queue goes with the subscription: what is queued is
			// freed now, not when the stalled reader comes back.
			s.queue, s.bytes = nil, 0
			s.mu.Unlock()
			s.end(ErrSlowSubscriber)
			s.sub.Cancel()
			return
		}
		s.queue = append(s.queue, m)
		s.bytes += cost
		s.mu.Unlock()
		s.signal()
	}
}

func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Subscription) end(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.signal()
}

// Next returns the next message, in the order the router delivered them.
func (s *Subscription) Next(ctx context.Context) (*pubsub.Message, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			m := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.bytes -= len(m.Data) + pubsubMessageOverhead
			s.mu.Unlock()
			return m, nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			if errors.Is(err, pubsub.ErrSubscriptionCancelled) || errors.Is(err, context.Canceled) {
				return nil, context.Canceled
			}
			return nil, err
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Queued is the size of the queue in bytes (its accounting).
func (s *Subscription) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Close ends the subscription and waits for its goroutine.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.sub.Cancel()
		<-s.done
		s.mu.Lock()
		s.queue, s.bytes = nil, 0
		s.mu.Unlock()
		s.p.Release(s.topic)
	})
}

// seqnoStore keeps the last sequence number seen per author for the
// default validator. Kubo keeps it in its datastore; cairn keeps it in
// memory (a write per message would wear an SD card), bounded: past
// seqnoMaxPeers authors an arbitrary one is forgotten (the seen-messages
// cache still drops its recent replays).
type seqnoStore struct {
	mu sync.Mutex
	m  map[peer.ID][]byte
}

const seqnoMaxPeers = 4096

func (s *seqnoStore) Get(_ context.Context, p peer.ID) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[p], nil
}

func (s *seqnoStore) Put(_ context.Context, p peer.ID, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[p]; !ok && len(s.m) >= seqnoMaxPeers {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[p] = append([]byte(nil), v...)
	return nil
}

func (s *seqnoStore) reset(p peer.ID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p != "" {
		if _, ok := s.m[p]; ok {
			delete(s.m, p)
			return 1
		}
		return 0
	}
	n := len(s.m)
	s.m = map[peer.ID][]byte{}
	return n
}
