// dht.go: the dht commands (0.9's shape: a stream of routing events) and
// stats/dht, stats/provide.

package commands

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"cairn/node/p2p"
	"cairn/rpc"

	"github.com/ipfs/go-cid"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p-kad-dht/dual"
	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
)

// RoutingEvent is one line of the dht commands (keys in Kubo's
// alphabetical order).
type RoutingEvent struct {
	Extra     string
	ID        string
	Responses []*peer.AddrInfo
	Type      routing.QueryEventType
}

// DHTPeerInfo is one peer of a stats/dht bucket.
type DHTPeerInfo struct {
	ID            string
	Connected     bool
	AgentVersion  string
	LastUsefulAt  string
	LastQueriedAt string
}

// DHTBucket is one bucket of stats/dht.
type DHTBucket struct {
	LastRefresh string
	Peers       []DHTPeerInfo
}

// DHTStats is one line of stats/dht.
type DHTStats struct {
	Name    string
	Buckets []DHTBucket
}

// ProvideStats is the body of stats/provide.
type ProvideStats struct {
	TotalProvides          int64
	AvgProvideDuration     time.Duration
	LastReprovideDuration  time.Duration
	LastReprovideBatchSize int
}

func routingCmd(path, synopsis string, args []rpc.Arg, opts []rpc.Option, run func(r *rpc.Request, e rpc.Emitter) error, text func(*rpc.TextEnv, *RoutingEvent) error) *rpc.Command {
	return &rpc.Command{Path: path, Synopsis: synopsis, Args: args, Options: opts, Output: rpc.OutStream, Run: run,
		Type: func() any { return &RoutingEvent{} },
		Text: func(t *rpc.TextEnv, v any) error {
			ev := v.(*RoutingEvent)
			if t.Req != nil && t.Req.Bool("verbose") {
				if err := verboseEvent(t.Out, ev); err != nil {
					return err
				}
			}
			if text == nil {
				return nil
			}
			return text(t, ev)
		}}
}

var verboseOpt = rpc.Option{Names: []string{"verbose", "v"}, Type: rpc.Bool, Help: "Print extra information."}

var dhtCommands = []*rpc.Command{
	routingCmd("dht/findpeer", "Find the multiaddresses associated with a Peer ID.",
		[]rpc.Arg{{Name: "peerID", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "The ID of the peer to search for."}},
		[]rpc.Option{verboseOpt}, runFindPeer, func(t *rpc.TextEnv, ev *RoutingEvent) error {
			if ev.Type != routing.FinalPeer || len(ev.Responses) == 0 {
				return nil
			}
			for _, a := range ev.Responses[0].Addrs {
				if _, err := fmt.Fprintln(t.Out, a); err != nil {
					return err
				}
			}
			return nil
		}),
	routingCmd("dht/findprovs", "Find peers that can provide a specific value, given a key.",
		[]rpc.Arg{{Name: "key", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "The key to find providers for."}},
		[]rpc.Option{verboseOpt, {Names: []string{"num-providers", "n"}, Type: rpc.Int, Default: int64(20), Help: "The number of providers to find."}},
		runFindProvs, func(t *rpc.TextEnv, ev *RoutingEvent) error {
			if ev.Type != routing.Provider || len(ev.Responses) == 0 {
				return nil
			}
			_, err := fmt.Fprintln(t.Out, ev.Responses[0].ID)
			return err
		}),
	routingCmd("dht/get", "Given a key, query the routing system for its best value.",
		[]rpc.Arg{{Name: "key", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "The key to find a value for."}},
		[]rpc.Option{verboseOpt}, runDHTGet, func(t *rpc.TextEnv, ev *RoutingEvent) error {
			if ev.Type != routing.Value {
				return nil
			}
			b, err := base64.StdEncoding.DecodeString(ev.Extra)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(t.Out, "%s\n", b)
			return err
		}),
	routingCmd("dht/put", "Write a key/value pair to the routing system.",
		[]rpc.Arg{{Name: "key", Kind: rpc.ArgString, Required: true, Help: "The key to store the value at."},
			{Name: "value-file", Kind: rpc.ArgFile, Required: true, Help: "A path to a file containing the value to store."}},
		[]rpc.Option{verboseOpt}, runDHTPut, func(t *rpc.TextEnv, ev *RoutingEvent) error {
			if ev.Type != routing.Value {
				return nil
			}
			_, err := fmt.Fprintln(t.Out, ev.ID)
			return err
		}),
	routingCmd("dht/provide", "Announce to the network that you are providing given values.",
		[]rpc.Arg{{Name: "key", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true, Help: "The key[s] to send provide records for."}},
		[]rpc.Option{verboseOpt, {Names: []string{"recursive", "r"}, Type: rpc.Bool, Help: "Recursively provide entire graph."}},
		runDHTProvide, nil),
	routingCmd("dht/query", "Find the closest Peer IDs to a given Peer ID by querying the DHT.",
		[]rpc.Arg{{Name: "peerID", Kind: rpc.ArgString, Required: true, Help: "The peerID to run the query against."}},
		[]rpc.Option{verboseOpt}, runDHTQuery, func(t *rpc.TextEnv, ev *RoutingEvent) error {
			if ev.Type != routing.FinalPeer {
				return nil
			}
			_, err := fmt.Fprintln(t.Out, ev.ID)
			return err
		}),
	{
		Path:     "stats/dht",
		Synopsis: "Returns statistics about the node's DHT(s).",
		Args:     []rpc.Arg{{Name: "dht", Kind: rpc.ArgString, Variadic: true, Help: "The DHT whose table should be listed (wanserver, lanserver, wan, lan). wan and lan refer to client routing tables."}},
		Output:   rpc.OutStream,
		Run:      runStatsDHT,
		Type:     func() any { return &DHTStats{} },
		Text:     statsDHTText,
	},
	{
		Path:     "stats/provide",
		Synopsis: "Returns statistics about the node's (re)provider system.",
		Output:   rpc.OutSingle,
		Run:      runStatsProvide,
		Type:     func() any { return &ProvideStats{} },
		Text: func(t *rpc.TextEnv, v any) error {
			s := v.(*ProvideStats)
			_, err := fmt.Fprintf(t.Out, "TotalProvides:          %d\nAvgProvideDuration:     %v\nLastReprovideDuration:  %v\nLastReprovideBatchSize: %d\n",
				s.TotalProvides, s.AvgProvideDuration, s.LastReprovideDuration, s.LastReprovideBatchSize)
			return err
		},
	},
}

func verboseEvent(w io.Writer, ev *RoutingEvent) error {
	var err error
	switch ev.Type {
	case routing.SendingQuery:
		_, err = fmt.Fprintf(w, "* querying %s\n", ev.ID)
	case routing.PeerResponse:
		_, err = fmt.Fprintf(w, "* %s says use ", ev.ID)
		for _, p := range ev.Responses {
			fmt.Fprintf(w, "%s ", p.ID)
		}
		fmt.Fprintln(w)
	case routing.QueryError:
		_, err = fmt.Fprintf(w, "error: %s\n", ev.Extra)
	case routing.DialingPeer:
		_, err = fmt.Fprintf(w, "dialing peer: %s\n", ev.ID)
	case routing.AddingPeer:
		_, err = fmt.Fprintf(w, "adding peer to query: %s\n", ev.ID)
	}
	return err
}

// errNotDHT is Kubo's error for DHT commands without a DHT.
var errNotDHT = errors.New("routing service is not a DHT")

// dhtOf returns the running (dual) DHT or the error a command answers.
func dhtOf(r *rpc.Request) (*p2p.Net, *dual.DHT, error) {
	nt, err := online(r)
	if err != nil {
		return nil, nil, err
	}
	if nt.DHT == nil {
		return nil, nil, errNotDHT
	}
	return nt, nt.DHT, nil
}

// streamEvents runs work with a context that collects routing events,
// emitting each as it comes; work's error ends the stream (trailer).
func streamEvents(r *rpc.Request, e rpc.Emitter, work func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(r.Ctx)
	defer cancel()
	ectx, events := routing.RegisterForQueryEvents(ctx)
	errc := make(chan error, 1)
	go func() {
		defer cancel()
		errc <- work(ectx)
	}()
	var emitErr error
	for ev := range events {
		if emitErr != nil {
			continue
		}
		re := &RoutingEvent{Type: ev.Type, Extra: ev.Extra, Responses: ev.Responses}
		if ev.ID != "" {
			re.ID = ev.ID.String()
		}
		if emitErr = e.Emit(re); emitErr != nil {
			cancel()
		}
	}
	err := <-errc
	if emitErr != nil {
		return emitErr
	}
	if err != nil && r.Ctx.Err() != nil {
		return r.Ctx.Err()
	}
	return err
}

func runFindPeer(r *rpc.Request, e rpc.Emitter) error {
	nt, d, err := dhtOf(r)
	if err != nil {
		return err
	}
	var ids []peer.ID
	for _, s := range r.Args {
		id, err := peer.Decode(s)
		if err != nil {
			return fmt.Errorf("invalid peer id %q: %w", s, err)
		}
		if id == nt.Host.ID() {
			return errors.New("cannot search for yourself")
		}
		ids = append(ids, id)
	}
	return streamEvents(r, e, func(ctx context.Context) error {
		for _, id := range ids {
			ai, err := d.FindPeer(ctx, id)
			if err != nil {
				// As Kubo: the error is an event too (clients that
				// cannot read the trailer see it).
				routing.PublishQueryEvent(ctx, &routing.QueryEvent{Type: routing.QueryError, Extra: err.Error()})
				return err
			}
			routing.PublishQueryEvent(ctx, &routing.QueryEvent{Type: routing.FinalPeer, Responses: []*peer.AddrInfo{&ai}})
		}
		return nil
	})
}

func parseCids(args []string) ([]cid.Cid, error) {
	out := make([]cid.Cid, 0, len(args))
	for _, s := range args {
		c, err := cid.Decode(s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func runFindProvs(r *rpc.Request, e rpc.Emitter) error {
	_, d, err := dhtOf(r)
	if err != nil {
		return err
	}
	n := r.Int("num-providers")
	if n < 1 {
		return errors.New("number of providers must be greater than 0")
	}
	if len(r.Args) > 1 {
		return errors.New("only one key may be given")
	}
	keys, err := parseCids(r.Args)
	if err != nil {
		return err
	}
	return streamEvents(r, e, func(ctx context.Context) error {
		for ai := range d.FindProvidersAsync(ctx, keys[0], int(n)) {
			routing.PublishQueryEvent(ctx, &routing.QueryEvent{Type: routing.Provider, Responses: []*peer.AddrInfo{&ai}})
		}
		// A query cut short by the deadline is an error, not an empty
		// answer.
		return r.Ctx.Err()
	})
}

// escapeDhtKey turns /ipns/<peer id> or /pk/<peer id> into the DHT's
// key (the ID's raw bytes), as Kubo does.
func escapeDhtKey(s string) (string, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[0] != "" || (parts[1] != "ipns" && parts[1] != "pk") {
		return "", errors.New("invalid key")
	}
	k, err := peer.Decode(parts[2])
	if err != nil {
		return "", err
	}
	return "/" + parts[1] + "/" + string(k), nil
}

func runDHTGet(r *rpc.Request, e rpc.Emitter) error {
	_, d, err := dhtOf(r)
	if err != nil {
		return err
	}
	if len(r.Args) > 1 {
		return errors.New("only one key may be given")
	}
	key, err := escapeDhtKey(r.Args[0])
	if err != nil {
		return err
	}
	return streamEvents(r, e, func(ctx context.Context) error {
		v, err := d.GetValue(ctx, key)
		if err != nil {
			return err
		}
		routing.PublishQueryEvent(ctx, &routing.QueryEvent{Type: routing.Value, Extra: base64.StdEncoding.EncodeToString(v)})
		return nil
	})
}

func runDHTPut(r *rpc.Request, e rpc.Emitter) error {
	nt, d, err := dhtOf(r)
	if err != nil {
		return err
	}
	value, err := readValueFile(r)
	if err != nil {
		return err
	}
	key, err := escapeDhtKey(r.Args[0])
	if err != nil {
		return err
	}
	return streamEvents(r, e, func(ctx context.Context) error {
		if err := d.PutValue(ctx, key, value); err != nil {
			return err
		}
		// The peers closest to the key are the ones that stored it.
		peers, err := nt.ActiveDHT().GetClosestPeers(ctx, key)
		if err != nil {
			return nil
		}
		for _, p := range peers {
			routing.PublishQueryEvent(ctx, &routing.QueryEvent{Type: routing.Value, ID: p})
		}
		return nil
	})
}

func runDHTProvide(r *rpc.Request, e rpc.Emitter) error {
	nt, d, err := dhtOf(r)
	if err != nil {
		return err
	}
	keys, err := parseCids(r.Args)
	if err != nil {
		return err
	}
	for _, c := range keys {
		has, err := r.Node.Blocks.Has(r.Ctx, c)
		if err != nil {
			return err
		}
		if !has {
			return fmt.Errorf("block %s not found locally, cannot provide", c)
		}
	}
	if d.WAN.RoutingTable().Size() == 0 && d.LAN.RoutingTable().Size() == 0 {
		return errors.New("cannot provide, no connected peers")
	}
	if r.Bool("recursive") {
		var all []cid.Cid
		seen := map[cid.Cid]bool{}
		for _, c := range keys {
			err := r.Node.Dag().Walk(r.Ctx, c, nil, func(x cid.Cid) error {
				if !seen[x] {
					seen[x] = true
					all = append(all, x)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		keys = all
	}
	return streamEvents(r, e, func(ctx context.Context) error {
		for _, c := range keys {
			if err := nt.ProvideNow(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
}

func runDHTQuery(r *rpc.Request, e rpc.Emitter) error {
	nt, _, err := dhtOf(r)
	if errors.Is(err, errOffline) {
		return errNotDHT // Kubo checks for a DHT client only
	}
	if err != nil {
		return err
	}
	d := nt.ActiveDHT()
	id, err := peer.Decode(r.Args[0])
	if err != nil {
		return fmt.Errorf("invalid peer id %q: %w", r.Args[0], err)
	}
	return streamEvents(r, e, func(ctx context.Context) error {
		peers, err := d.GetClosestPeers(ctx, string(id))
		if err != nil {
			return err
		}
		for _, p := range peers {
			routing.PublishQueryEvent(ctx, &routing.QueryEvent{Type: routing.FinalPeer, ID: p})
		}
		return nil
	})
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

func runStatsDHT(r *rpc.Request, e rpc.Emitter) error {
	nt, d, err := dhtOf(r)
	if err != nil {
		return err
	}
	names := r.Args
	if len(names) == 0 {
		names = []string{"wan", "lan"}
	}
	for _, name := range names {
		var table *dht.IpfsDHT
		switch name {
		case "wan", "wanserver":
			table = d.WAN
		case "lan", "lanserver":
			table = d.LAN
		default:
			return fmt.Errorf("unknown dht type: %s", name)
		}
		rt := table.RoutingTable()
		infos := rt.GetPeerInfos()
		self := kb.ConvertPeerID(nt.Host.ID())
		byBucket := map[int][]DHTPeerInfo{}
		maxB := 0
		for _, pi := range infos {
			b := kb.CommonPrefixLen(self, kb.ConvertPeerID(pi.Id))
			info := DHTPeerInfo{ID: pi.Id.String(),
				Connected:     nt.Host.Network().Connectedness(pi.Id) == network.Connected,
				LastUsefulAt:  fmtTime(pi.LastUsefulAt),
				LastQueriedAt: fmtTime(pi.LastSuccessfulOutboundQueryAt)}
			if v, err := nt.Host.Peerstore().Get(pi.Id, "AgentVersion"); err == nil {
				info.AgentVersion, _ = v.(string)
			}
			byBucket[b] = append(byBucket[b], info)
			maxB = max(maxB, b)
		}
		out := &DHTStats{Name: name, Buckets: []DHTBucket{}}
		for b := 0; b <= maxB && len(infos) > 0; b++ {
			peers := byBucket[b]
			sort.Slice(peers, func(i, j int) bool { return peers[i].ID < peers[j].ID })
			out.Buckets = append(out.Buckets, DHTBucket{Peers: orEmptyPeers(peers)})
		}
		if err := e.Emit(out); err != nil {
			return err
		}
	}
	return nil
}

func orEmptyPeers(p []DHTPeerInfo) []DHTPeerInfo {
	if p == nil {
		return []DHTPeerInfo{}
	}
	return p
}

func statsDHTText(t *rpc.TextEnv, v any) error {
	s := v.(*DHTStats)
	count := 0
	for _, b := range s.Buckets {
		count += len(b.Peers)
	}
	fmt.Fprintf(t.Out, "DHT %s (%d peers):\n", s.Name, count)
	for i, b := range s.Buckets {
		fmt.Fprintf(t.Out, "  Bucket %2d (%d peers) - refreshed %s:\n", i, len(b.Peers), b.LastRefresh)
		fmt.Fprintln(t.Out, "    Peer                                                  last useful  last queried  Agent Version")
		for _, p := range b.Peers {
			mark := " "
			if p.Connected {
				mark = "@"
			}
			fmt.Fprintf(t.Out, "  %s %-52s %12s %13s  %s\n", mark, p.ID, p.LastUsefulAt, p.LastQueriedAt, p.AgentVersion)
		}
		fmt.Fprintln(t.Out)
	}
	return nil
}

func runStatsProvide(r *rpc.Request, e rpc.Emitter) error {
	nt, _, err := dhtOf(r)
	if err != nil {
		return err
	}
	s := nt.ProvideStats()
	return e.Emit(&ProvideStats{TotalProvides: s.TotalProvides, AvgProvideDuration: s.AvgProvideDuration,
		LastReprovideDuration: s.LastReprovideDuration, LastReprovideBatchSize: s.LastReprovideBatchSize})
}
