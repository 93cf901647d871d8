package p2p_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"cairn/node/p2p"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/encoding/protowire"
)

// pubsubNets starts n network layers on loopback with pubsub on; edit,
// if set, changes the options first.
func pubsubNets(t *testing.T, n int, edit func(o *p2p.Options)) []*p2p.Net {
	t.Helper()
	out := make([]*p2p.Net, n)
	for i := range out {
		out[i] = mustStart(t, "auto", func(o *p2p.Options) {
			o.Pubsub = true
			if edit != nil {
				edit(o)
			}
		})
	}
	return out
}

// publishBurst starts a publisher A and subscribers B and C to topic
// "burst", A connected to both and, with triangle, B to C, and once A sees
// both subscribed publishes "0" to "n-1" with no pause. The context is
// for reading the subscriptions.
func publishBurst(t *testing.T, triangle bool, n int) (ctx context.Context, a *p2p.Net, subs map[string]*p2p.Subscription) {
	t.Helper()
	ns := pubsubNets(t, 3, nil)
	a, b, c := ns[0], ns[1], ns[2]
	connect(t, a, b)
	connect(t, a, c)
	if triangle {
		connect(t, b, c)
	}
	subs = map[string]*p2p.Subscription{}
	for name, sub := range map[string]*p2p.Net{"B": b, "C": c} {
		s, err := sub.PubSub.Subscribe("burst")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		subs[name] = s
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(a.PubSub.Peers("burst")) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("subscribers not seen by A")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	for i := 0; i < n; i++ {
		if err := a.PubSub.Publish(ctx, "burst", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, a, subs
}

// Ensure a burst of 100 publications with no pause reaches both
// subscribers complete and in the publisher's order when each hears the
// publisher over one path (the sequence-number validator runs inline, the
// router's queues hold the burst).
func TestPubsub_Burst_OrderedAndComplete(t *testing.T) {
	const n = 100
	ctx, a, subs := publishBurst(t, false, n)
	for name, s := range subs {
		for i := 0; i < n; i++ {
			m, err := s.Next(ctx)
			if err != nil {
				t.Fatalf("%s: message %d: %v", name, i, err)
			}
			if string(m.Data) != fmt.Sprint(i) || m.GetFrom() != a.Host.ID() {
				t.Fatalf("%s: message %d is %q from %s", name, i, m.Data, m.GetFrom())
			}
		}
	}
}

// Ensure that where a subscriber hears the publisher over two paths (B and
// C also forward to each other) a burst never arrives out of order nor
// twice, and its last message always arrives. A copy forwarded over the
// other path may overtake earlier messages on a loaded machine; the
// validator then drops those as old, so completeness is not asserted here.
func TestPubsub_Burst_TwoPaths_NeverOutOfOrder(t *testing.T) {
	const n = 100
	ctx, a, subs := publishBurst(t, true, n)
	for name, s := range subs {
		last, got := -1, 0
		for last != n-1 {
			m, err := s.Next(ctx)
			if err != nil {
				t.Fatalf("%s: after message %d (%d received): %v", name, last, got, err)
			}
			var i int
			if _, err := fmt.Sscan(string(m.Data), &i); err != nil || m.GetFrom() != a.Host.ID() {
				t.Fatalf("%s: message %q from %s", name, m.Data, m.GetFrom())
			}
			if i <= last {
				t.Fatalf("%s: message %d after %d", name, i, last)
			}
			last, got = i, got+1
		}
		t.Logf("%s: %d of %d", name, got, n)
	}
}

// Ensure a subscription whose reader stalls is dropped when its queue
// bound (2 MiB, what a 128 MiB budget gives) is reached: the queue never holds
// more, what it held is freed, and Next then says why.
func TestPubsub_StalledSubscription_BoundedThenDropped(t *testing.T) {
	a := pubsubNets(t, 1, func(o *p2p.Options) { o.Limits.MemoryMiB, o.Limits.PubsubQueueBytes = 128, 2<<20 })[0]
	ps := a.PubSub
	s, err := ps.Subscribe("flood")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	payload := make([]byte, 1024)
	peak := 0
	for i := 0; i < 10000; i++ {
		if err := ps.Publish(ctx, "flood", payload); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, s.Queued())
	}
	if peak > ps.QueueBytes {
		t.Fatalf("queue reached %d bytes, over its bound %d", peak, ps.QueueBytes)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ps.Active() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("stalled subscription not dropped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if q := s.Queued(); q != 0 {
		t.Fatalf("dropped subscription still holds %d bytes", q)
	}
	if _, err := s.Next(ctx); !errors.Is(err, p2p.ErrSlowSubscriber) {
		t.Fatalf("Next after the drop: %v", err)
	}
}

// rawMeshsub starts a network layer with pubsub and a peer that speaks
// meshsub by hand (it reads what the first sends, and writes what the
// test writes on the stream returned).
func rawMeshsub(t *testing.T) (*p2p.Net, network.Stream) {
	t.Helper()
	a := pubsubNets(t, 1, nil)[0]
	b := mustStart(t, "none", nil)
	b.Host.SetStreamHandler("/meshsub/1.1.0", func(s network.Stream) { io.Copy(io.Discard, s) })
	connect(t, b, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := b.Host.NewStream(ctx, a.Host.ID(), "/meshsub/1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Reset() })
	return a, s
}

// Ensure a peer that sends a pubsub control message over 512 KiB (an
// IHAVE of 60,000 message IDs, under the 1 MiB RPC limit) has its stream
// reset rather than its control entries kept: the memory exhaustion of
// CVE-2026-46679, fixed in go-libp2p-pubsub 0.17.0.
func TestPubsub_OversizedControlMessage_StreamReset(t *testing.T) {
	_, s := rawMeshsub(t)
	// RPC{control: ControlMessage{ihave: [ControlIHave{topicID, messageIDs...}]}},
	// encoded by hand (field 3 of RPC, field 1 of ControlMessage, fields 1
	// and 2 of ControlIHave).
	ihave := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("t"))
	for i := range 60000 {
		ihave = protowire.AppendBytes(protowire.AppendTag(ihave, 2, protowire.BytesType), fmt.Appendf(nil, "%08d", i))
	}
	ctl := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), ihave)
	rpc := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), ctl)
	if len(rpc) <= 512<<10 || len(rpc) >= p2p.PubsubMaxMessageSize {
		t.Fatalf("control RPC of %d bytes: want between 512 KiB and 1 MiB", len(rpc))
	}
	if _, err := s.Write(protowire.AppendBytes(nil, rpc)); err != nil {
		t.Fatal(err)
	}
	s.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err := s.Read(make([]byte, 1))
	var timeout interface{ Timeout() bool }
	if err == nil || errors.As(err, &timeout) && timeout.Timeout() {
		t.Fatalf("stream after an oversized control message: read %v, want a reset", err)
	}
}

// Ensure a peer is tracked in at most PubsubPeerTopics topics: one that
// announces 1,500 subscriptions is seen in the first ones and not in
// those past the cap (each tracked topic costs memory for as long as the
// peer stays; thousands of them from a few peers filled a 256 MiB board).
func TestPubsub_PeerTopics_Capped(t *testing.T) {
	a, s := rawMeshsub(t)
	const n = 1500
	if n <= p2p.PubsubPeerTopics {
		t.Fatalf("the test wants more than %d topics", p2p.PubsubPeerTopics)
	}
	// RPC{subscriptions: [SubOpts{subscribe: true, topicid}...]}, by hand.
	var rpc []byte
	for i := range n {
		sub := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
		sub = protowire.AppendBytes(protowire.AppendTag(sub, 2, protowire.BytesType), fmt.Appendf(nil, "t%d", i))
		rpc = protowire.AppendBytes(protowire.AppendTag(rpc, 1, protowire.BytesType), sub)
	}
	if _, err := s.Write(protowire.AppendBytes(nil, rpc)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(a.PubSub.Peers("t0")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the peer's first subscription was not seen")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := a.PubSub.Peers(fmt.Sprintf("t%d", p2p.PubsubPeerTopics-1)); len(got) != 1 {
		t.Errorf("topic %d, within the cap: peers %v, want the one", p2p.PubsubPeerTopics-1, got)
	}
	if got := a.PubSub.Peers(fmt.Sprintf("t%d", p2p.PubsubPeerTopics)); len(got) != 0 {
		t.Errorf("topic %d, past the cap: peers %v, want none", p2p.PubsubPeerTopics, got)
	}
	if got := a.PubSub.Peers(fmt.Sprintf("t%d", n-1)); len(got) != 0 {
		t.Errorf("topic %d, past the cap: peers %v, want none", n-1, got)
	}
}

// Ensure a peer publishing as fast as it can gets at most PubsubPeerBurst
// messages plus PubsubPeerRate a second into the node, the rest dropped
// before validation, while an honest author's messages, sent meanwhile at
// 20 a second, all arrive.
func TestPubsub_Flood_RatePerPeer(t *testing.T) {
	ns := pubsubNets(t, 3, nil)
	target, flooder, author := ns[0], ns[1], ns[2]
	connect(t, flooder, target)
	connect(t, author, target)
	sub, err := target.PubSub.Subscribe("flood")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	deadline := time.Now().Add(15 * time.Second)
	for len(flooder.PubSub.Peers("flood")) < 1 || len(author.PubSub.Peers("flood")) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("subscriber not seen by the publishers")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	const flood, honest = 3000, 20
	done := make(chan error, 1)
	go func() {
		for i := range flood {
			if err := flooder.PubSub.Publish(ctx, "flood", []byte(fmt.Sprint("flood ", i))); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := range honest {
		if err := author.PubSub.Publish(ctx, "flood", []byte(fmt.Sprint("honest ", i))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := map[peer.ID]int{}
	for got[author.Host.ID()] < honest {
		rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
		m, err := sub.Next(rctx)
		rcancel()
		if err != nil {
			t.Fatalf("after %v from the flooder: %d of the author's %d messages arrived (%v)",
				got[flooder.Host.ID()], got[author.Host.ID()], honest, err)
		}
		got[m.GetFrom()]++
	}
	elapsed := time.Since(start)
	allowed := p2p.PubsubPeerBurst + int(elapsed.Seconds()*p2p.PubsubPeerRate) + 1
	if n := got[flooder.Host.ID()]; n > allowed {
		t.Errorf("%d of the flooder's %d messages arrived in %v, over the %d its rate allows", n, flood, elapsed, allowed)
	}
	if target.PubSub.DroppedMessages() == 0 {
		t.Error("no message counted as dropped")
	}
}
