// ipnsps.go: IPNS over pubsub, as Kubo 0.42 runs it (Ipns.UsePubsub,
// daemon --enable-namesys-pubsub), on go-libp2p-pubsub-router v0.6.0, the
// library and version Kubo links, so that the two interoperate:
//
//   - a name's topic is "/record/" + base64url (unpadded) of its routing
//     key "/ipns/" + the peer ID's bytes;
//   - name/publish puts the record on the topic (as well as to the DHT),
//     and every name subscribed to is published again each minute;
//   - resolving a name subscribes to its topic (the subscription stays
//     until name/pubsub/cancel) and takes the best valid record received;
//     a peer that subscribes late asks the peers already on the topic for
//     their record over /libp2p/fetch/0.0.1 when they join;
//   - every record, from the topic or fetched, goes through the IPNS
//     validator first: a malformed, expired or wrongly signed record is
//     rejected (the sender is penalised) and never kept.
//
// It needs pubsub: enabling it starts pubsub even if Pubsub.Enabled is
// off, as Kubo does. Records received are kept in memory, one per name
// subscribed to (the best), as in Kubo.

package node

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"cairn/node/p2p"

	"github.com/ipfs/boxo/ipns"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	psrouter "github.com/libp2p/go-libp2p-pubsub-router"
	record "github.com/libp2p/go-libp2p-record"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
)

// ErrIpnsPubsubDisabled is Kubo's answer of name/pubsub/subs and cancel
// when IPNS over pubsub is off.
var ErrIpnsPubsubDisabled = errors.New("IPNS pubsub subsystem is not enabled")

// ipnsPubsubRebroadcast is how often subscribed names are published
// again (Kubo's setting).
const ipnsPubsubRebroadcast = time.Minute

// IpnsPubsub is the running IPNS-over-pubsub router (Node.IpnsPubsub).
type IpnsPubsub struct {
	vs *psrouter.PubsubValueStore
	ps *p2p.PubSub
	mu sync.Mutex // Cancel and the topic references it gives back
}

// nameValidator checks IPNS and public-key records (the DHT's, the
// offline store's and pubsub's).
func nameValidator(ks peerstore.KeyBook) record.Validator {
	return record.NamespacedValidator{
		"pk":   record.PublicKeyValidator{},
		"ipns": ipns.Validator{KeyBook: ks},
	}
}

// startIpnsPubsub starts the router on a running pubsub service.
func startIpnsPubsub(ctx context.Context, h host.Host, ps *p2p.PubSub) (*IpnsPubsub, error) {
	vs, err := psrouter.NewPubsubValueStore(ctx, h, psTopics{ps}, nameValidator(h.Peerstore()),
		psrouter.WithRebroadcastInterval(ipnsPubsubRebroadcast))
	if err != nil {
		return nil, err
	}
	return &IpnsPubsub{vs: vs, ps: ps}, nil
}

// psTopics lets the router join topics through the service's reference
// counts, so that a `pubsub sub` of a name's topic and the router's own
// subscription can coexist in either order.
type psTopics struct{ p *p2p.PubSub }

func (t psTopics) RegisterTopicValidator(topic string, val any, opts ...pubsub.ValidatorOpt) error {
	return t.p.RegisterTopicValidator(topic, val, opts...)
}

func (t psTopics) Join(topic string, _ ...pubsub.TopicOpt) (*pubsub.Topic, error) {
	return t.p.Join(topic)
}

// IpnsTopic is the pubsub topic of a name's records.
func IpnsTopic(id peer.ID) string {
	return psrouter.KeyToTopic(string(ipns.NameFromPeer(id).RoutingKey()))
}

// Subscriptions lists the names subscribed to, sorted.
func (s *IpnsPubsub) Subscriptions() []peer.ID {
	var out []peer.ID
	for _, k := range s.vs.GetSubscriptions() {
		ns, rest, err := record.SplitKey(k)
		if err != nil || ns != "ipns" {
			continue
		}
		id, err := peer.IDFromBytes([]byte(rest))
		if err != nil {
			continue
		}
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Cancel ends the subscription to a name; false if there was none. A
// name being resolved at the moment answers an error.
func (s *IpnsPubsub) Cancel(id peer.ID) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ipns.NameFromPeer(id).RoutingKey()
	ok, err := s.vs.Cancel(string(key))
	if ok {
		s.ps.Release(psrouter.KeyToTopic(string(key)))
	}
	return ok, err
}

// Record is the best record received for a name (subscribing to its
// topic); routing.ErrNotFound if none yet.
func (s *IpnsPubsub) Record(ctx context.Context, id peer.ID) ([]byte, error) {
	return s.vs.GetValue(ctx, string(ipns.NameFromPeer(id).RoutingKey()))
}

// isIpnsKey says whether a routing key is an IPNS name's.
func isIpnsKey(k string) bool { return strings.HasPrefix(k, "/ipns/") }

// searchBoth merges a search of the DHT (or the local store) with one of
// pubsub, as Kubo's parallel router does: every record either sends goes
// out, and pubsub is waited for only while nothing came from the other.
// stop ends both searches once the merge is over.
func searchBoth(ctx context.Context, stop context.CancelFunc, primary, ps <-chan []byte) <-chan []byte {
	out := make(chan []byte)
	go func() {
		defer close(out)
		defer stop()
		sent := false
		for primary != nil || ps != nil {
			var v []byte
			var ok bool
			select {
			case v, ok = <-primary:
				if !ok {
					primary = nil
					if sent {
						return
					}
					continue
				}
			case v, ok = <-ps:
				if !ok {
					ps = nil
					continue
				}
			case <-ctx.Done():
				return
			}
			select {
			case out <- v:
				sent = true
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
