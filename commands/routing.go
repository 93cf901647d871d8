// routing.go: Kubo 0.42's names of the DHT commands (routing/*) and
// provide/stat. findprovs, findpeer and provide are the dht/* commands
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
