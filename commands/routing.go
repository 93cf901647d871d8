// routing.go: Kubo 0.42's names of the DHT commands (routing/*),
// provide/stat (and its old name stats/reprovide), provide/once and
// provide/clear (Kubo 0.43). findprovs, findpeer and provide are the dht/* commands
// under another name; get and put answer one event as Kubo 0.42's do
// (dht/get and dht/put keep 0.9's stream of query events).

package commands

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	"cairn/node/p2p"
	"cairn/rpc"

	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/routing"
)

// errAllowOffline is Kubo's answer to routing/put on an offline node.
var errAllowOffline = errors.New("can't put while offline: pass `--allow-offline` to override")

// LegacyProvideStats is the Legacy object of provide/stat (boxo's
// ReproviderStats, as Kubo 0.42 sends it for its legacy provider).
type LegacyProvideStats struct {
	TotalReprovides        uint64
	LastReprovideBatchSize uint64
	ReprovideInterval      time.Duration
	AvgReprovideDuration   time.Duration
	LastReprovideDuration  time.Duration
	LastRun                time.Time
}

// ProvideStatOutput is the body of provide/stat: cairn's provider is
// Kubo's legacy kind (no sweep statistics).
type ProvideStatOutput struct {
	Sweep  *struct{}
	Legacy *LegacyProvideStats
	FullRT bool
}

// renamed returns a copy of the command path names (same Run, options
// and output).
func renamed(path string, from []*rpc.Command, name string) *rpc.Command {
	for _, c := range from {
		if c.Path == name {
			cp := *c
			cp.Path = path
			return &cp
		}
	}
	panic("routing: no command " + name)
}

var routingCommands = []*rpc.Command{
	renamed("routing/findprovs", dhtCommands, "dht/findprovs"),
	renamed("routing/findpeer", dhtCommands, "dht/findpeer"),
	renamed("routing/provide", dhtCommands, "dht/provide"),
	renamed("routing/reprovide", bitswapCommands, "bitswap/reprovide"),
	{
		Path:     "routing/get",
		Synopsis: "Given a key, query the routing system for its best value.",
		Args:     []rpc.Arg{{Name: "key", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "The key to find a value for."}},
		Output:   rpc.OutStream,
		Run:      runRoutingGet,
		Type:     func() any { return &RoutingEvent{} },
		Text: func(t *rpc.TextEnv, v any) error {
			b, err := base64.StdEncoding.DecodeString(v.(*RoutingEvent).Extra)
			if err != nil {
				return err
			}
			_, err = t.Out.Write(b)
			return err
		},
	},
	{
		Path:     "routing/put",
		Synopsis: "Write a key/value pair to the routing system.",
		Args: []rpc.Arg{{Name: "key", Kind: rpc.ArgString, Required: true, Help: "The key to store the value at."},
			{Name: "value-file", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "A path to a file containing the value to store."}},
		Options: []rpc.Option{{Names: []string{"allow-offline"}, Type: rpc.Bool,
			Help: "When offline, save the IPNS record to the local datastore without broadcasting to the network instead of simply failing."}},
		Output: rpc.OutStream,
		Run:    runRoutingPut,
		Type:   func() any { return &RoutingEvent{} },
		Text: func(t *rpc.TextEnv, v any) error {
			ev := v.(*RoutingEvent)
			if ev.Type != routing.Value {
				return nil
			}
			_, err := fmt.Fprintln(t.Out, ev.ID)
			return err
		},
	},
	{
		Path:     "provide/stat",
		Synopsis: "Show statistics about the provide system",
		Options: []rpc.Option{
			{Names: []string{"lan"}, Type: rpc.Bool, Help: "Show stats for LAN DHT only (for Sweep+Dual DHT only)"},
			{Names: []string{"all", "a"}, Type: rpc.Bool, Help: "Display all provide sweep stats"},
			{Names: []string{"compact"}, Type: rpc.Bool, Help: "Display stats in 2-column layout (requires --all)"},
			{Names: []string{"connectivity"}, Type: rpc.Bool, Help: "Display DHT connectivity status"},
			{Names: []string{"network"}, Type: rpc.Bool, Help: "Display network stats (peers, reachability, region size)"},
			{Names: []string{"schedule"}, Type: rpc.Bool, Help: "Display reprovide schedule (CIDs/regions scheduled, next reprovide time)"},
			{Names: []string{"timings"}, Type: rpc.Bool, Help: "Display timing information (uptime, cycle start, reprovide interval)"},
			{Names: []string{"workers"}, Type: rpc.Bool, Help: "Display worker pool stats (active/available/queued workers)"},
			{Names: []string{"operations"}, Type: rpc.Bool, Help: "Display operation stats (ongoing/past provides, rates, errors)"},
			{Names: []string{"queues"}, Type: rpc.Bool, Help: "Display provide and reprovide queue sizes"},
		},
		Output: rpc.OutSingle,
		Run:    runProvideStat,
		Type:   func() any { return &ProvideStatOutput{} },
		Text:   provideStatText,
	},
}

// ProvideOnceEvent is one CID provide once queued.
type ProvideOnceEvent struct {
	Queued string
}

// maxProvideOnceSeen bounds the CIDs provide once remembers to announce
// each only once; past it a CID shared by several roots may be queued
// again, which costs an announcement and no memory.
const maxProvideOnceSeen = 1 << 20

var provideMoreCommands = []*rpc.Command{
	{
		Path:     "provide/clear",
		Synopsis: "Clear all CIDs from the provide queue.",
		Help: `Clears the provide queue: CIDs waiting to be advertised to the DHT for the
first time. Does not affect content that is already being reprovided on
schedule.`,
		Options: []rpc.Option{{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Do not write output."}},
		// Kubo emits the count as a stream of one value.
		Output: rpc.OutStream,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			// Offline nothing is queued: Kubo answers 0 too.
			n := 0
			if r.Node.Net != nil {
				n = r.Node.Net.ClearProvideQueue()
			}
			if r.Bool("quiet") {
				return nil
			}
			return e.Emit(&n)
		},
		Type: func() any { return new(int) },
		Text: func(t *rpc.TextEnv, v any) error {
			if t.Req != nil && t.Req.Bool("quiet") {
				return nil
			}
			_, err := fmt.Fprintf(t.Out, "removed %d items from provide queue\n", *v.(*int))
			return err
		},
	},
	{
		Path:     "provide/once",
		Synopsis: "Announce CIDs to the routing system on demand.",
		Help: `Publishes provider records for the given CIDs once. The periodic
reprovide schedule is left unchanged: CIDs announced here are NOT added
to it. CIDs can be passed as arguments or streamed from stdin (one per line).

The CIDs go to the provide queue, which announces them at a bounded rate
(two a second); each is answered as it is queued. Use 'cairn provide stat'
to follow progress.

Use --recursive to walk the DAG and announce every reachable block.
CIDs must already exist in the local blockstore. A CID reached twice
(arguments, stdin, walks) is announced once.`,
		Args:    []rpc.Arg{{Name: "cid", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true, Help: "The CID(s) to announce."}},
		Options: []rpc.Option{{Names: []string{"recursive", "r"}, Type: rpc.Bool, Help: "Recursively announce the entire DAG."}},
		Output:  rpc.OutStream,
		Run:     runProvideOnce,
		Type:    func() any { return &ProvideOnceEvent{} },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := fmt.Fprintln(t.Out, v.(*ProvideOnceEvent).Queued)
			return err
		},
	},
	renamed("stats/reprovide", routingCommands, "provide/stat"),
}

func runProvideOnce(r *rpc.Request, e rpc.Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	if !r.Node.Config().Provide.Enabled.WithDefault(true) {
		return errors.New("cannot provide: Provide.Enabled is false")
	}
	if nt.DHT == nil {
		return errors.New("cannot provide: Routing.Type is none")
	}
	if len(nt.Host.Network().Conns()) == 0 {
		return errors.New("cannot provide: no connected peers")
	}
	seen := map[string]struct{}{}
	announce := func(c cid.Cid) (bool, error) {
		k := string(c.Hash())
		if _, ok := seen[k]; ok {
			return false, nil
		}
		if len(seen) < maxProvideOnceSeen {
			seen[k] = struct{}{}
		}
		if err := nt.ProvideOnce(r.Ctx, c); err != nil {
			return false, err
		}
		return true, e.Emit(&ProvideOnceEvent{Queued: c.String()})
	}
	for _, arg := range r.Args {
		c, err := cid.Decode(arg)
		if err != nil {
			return fmt.Errorf("invalid CID %q: %w", arg, err)
		}
		has, err := r.Node.Blocks.Has(r.Ctx, c)
		if err != nil {
			return err
		}
		if !has {
			return fmt.Errorf("block %s not found locally, cannot provide", c)
		}
		if !r.Bool("recursive") {
			if _, err := announce(c); err != nil {
				return err
			}
			continue
		}
		err = r.Node.Dag().Walk(r.Ctx, c, nil, func(x cid.Cid) error {
			_, err := announce(x)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// provideStatFlags are the sweep-only flags of provide/stat.
var provideStatFlags = []string{"all", "compact", "connectivity", "network", "schedule", "timings", "workers", "operations", "queues"}

func runRoutingGet(r *rpc.Request, e rpc.Emitter) error {
	_, d, err := dhtOf(r)
	if err != nil {
		return err
	}
	key, err := escapeDhtKey(r.Args[0])
	if err != nil {
		return err
	}
	v, err := d.GetValue(r.Ctx, key)
	if err != nil {
		return err
	}
	return e.Emit(&RoutingEvent{Type: routing.Value, Extra: base64.StdEncoding.EncodeToString(v)})
}

func runRoutingPut(r *rpc.Request, e rpc.Emitter) error {
	if r.Node == nil {
		return errAllowOffline
	}
	if r.Node.Net == nil && !r.Bool("allow-offline") {
		return errAllowOffline
	}
	value, err := readValueFile(r)
	if err != nil {
		return err
	}
	name, err := ipns.NameFromString(r.Args[0])
	if err != nil {
		return err
	}
	key, err := escapeDhtKey(r.Args[0])
	if err != nil {
		return err
	}
	if err := r.Node.Names().PutRecord(r.Ctx, key, value); err != nil {
		return err
	}
	return e.Emit(&RoutingEvent{Type: routing.Value, ID: name.Peer().String()})
}

func runProvideStat(r *rpc.Request, e rpc.Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	if r.Bool("lan") {
		return errors.New("LAN stats only available for Sweep provider with Dual DHT")
	}
	s := nt.ProvideStats()
	l := &LegacyProvideStats{
		TotalReprovides:        uint64(s.TotalProvides),
		LastReprovideBatchSize: uint64(s.LastReprovideBatchSize),
		ReprovideInterval:      p2p.ReprovideInterval,
		AvgReprovideDuration:   s.AvgProvideDuration,
		LastReprovideDuration:  s.LastReprovideDuration,
		LastRun:                s.LastReprovide,
	}
	return e.Emit(&ProvideStatOutput{Legacy: l})
}

func provideStatText(t *rpc.TextEnv, v any) error {
	s := v.(*ProvideStatOutput)
	if t.Req != nil {
		for _, f := range provideStatFlags {
			if t.Req.Bool(f) {
				return errors.New("cannot use flags with legacy provide stats")
			}
		}
	}
	if s.Legacy == nil {
		return errors.New("no provide stats available")
	}
	l := s.Legacy
	fmt.Fprintf(t.Out, "TotalReprovides:        %d\n", l.TotalReprovides)
	fmt.Fprintf(t.Out, "AvgReprovideDuration:   %v\n", l.AvgReprovideDuration)
	fmt.Fprintf(t.Out, "LastReprovideDuration:  %v\n", l.LastReprovideDuration)
	if !l.LastRun.IsZero() {
		_, err := fmt.Fprintf(t.Out, "LastReprovide:          %s\n", l.LastRun.Format(time.DateTime))
		return err
	}
	return nil
}

// readValueFile reads the value of dht/put and routing/put (at most 1 MiB,
// the DHT's record limit).
func readValueFile(r *rpc.Request) ([]byte, error) {
	f, err := firstFile(r.Files)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	value, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil {
		return nil, err
	}
	if len(value) > 1<<20 {
		return nil, errors.New("value too large: the DHT takes at most 1 MiB")
	}
	return value, nil
}
