// swarm.go: the swarm, ping and bootstrap commands.

package httprpc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"cairn/node"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	ma "github.com/multiformats/go-multiaddr"
)

// StringsOutput is Kubo's stringList: {"Strings":[...]}.
type StringsOutput struct {
	Strings []string
}

func stringsText(t *TextEnv, v any) error {
	for _, s := range v.(*StringsOutput).Strings {
		if _, err := fmt.Fprintln(t.Out, s); err != nil {
			return err
		}
	}
	return nil
}

func stringsCmd(path, synopsis string, args []Arg, opts []Option, run func(r *Request, e Emitter) error) *Command {
	return &Command{Path: path, Synopsis: synopsis, Args: args, Options: opts, Output: OutSingle, Run: run,
		Type: func() any { return &StringsOutput{} }, Text: stringsText}
}

// online returns the node's network layer, or Kubo's offline error.
func online(r *Request) (*node.Net, error) {
	if r.Node == nil || r.Node.Net == nil {
		return nil, errOffline
	}
	return r.Node.Net, nil
}

// parsePeerParam reads a peer ID or a multiaddr ending in /p2p/<id>.
func parsePeerParam(s string) (peer.AddrInfo, error) {
	if strings.HasPrefix(s, "/") {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return peer.AddrInfo{}, err
		}
		ai, err := peer.AddrInfoFromP2pAddr(m)
		if err != nil {
			return peer.AddrInfo{}, err
		}
		return *ai, nil
	}
	id, err := peer.Decode(s)
	if err != nil {
		return peer.AddrInfo{}, fmt.Errorf("invalid peer id %q: %w", s, err)
	}
	return peer.AddrInfo{ID: id}, nil
}

// parseAddresses reads swarm/connect arguments: multiaddrs ending in
// /p2p/<id> (several for one peer merge) or bare peer IDs.
func parseAddresses(args []string) ([]peer.AddrInfo, error) {
	byID := map[peer.ID]*peer.AddrInfo{}
	var order []peer.ID
	for _, s := range args {
		ai, err := parsePeerParam(s)
		if err != nil {
			return nil, err
		}
		if cur, ok := byID[ai.ID]; ok {
			cur.Addrs = append(cur.Addrs, ai.Addrs...)
			continue
		}
		byID[ai.ID] = &ai
		order = append(order, ai.ID)
	}
	out := make([]peer.AddrInfo, len(order))
	for i, id := range order {
		out[i] = *byID[id]
	}
	return out, nil
}

// SwarmStream is one stream of a swarm/peers entry.
type SwarmStream struct {
	Protocol string
}

// SwarmPeer is one connection of swarm/peers (0.42: omitempty, plus
// Identify).
type SwarmPeer struct {
	Addr      string        `json:",omitempty"`
	Peer      string        `json:",omitempty"`
	Latency   string        `json:",omitempty"`
	Muxer     string        `json:",omitempty"`
	Direction int           `json:",omitempty"`
	Streams   []SwarmStream `json:",omitempty"`
	Identify  IDOutput
}

// SwarmPeers is the body of swarm/peers.
type SwarmPeers struct {
	Peers []SwarmPeer
}

// SwarmAddrs is the body of swarm/addrs.
type SwarmAddrs struct {
	Addrs map[string][]string
}

// PingResult is one line of ping.
type PingResult struct {
	Success bool
	Time    time.Duration
	Text    string
}

// BootstrapOutput is the body of the bootstrap commands.
type BootstrapOutput struct {
	Peers []string
}

var swarmCommands = []*Command{
	{
		Path:     "swarm/peers",
		Synopsis: "List peers with open connections.",
		Help:     "'cairn swarm peers' lists the set of peers this node is connected to.",
		Options: []Option{
			{Names: []string{"verbose", "v"}, Type: Bool, Help: "display all extra information"},
			{Names: []string{"streams"}, Type: Bool, Help: "Also list information about open streams for each peer"},
			{Names: []string{"latency"}, Type: Bool, Help: "Also list information about latency to each peer"},
			{Names: []string{"direction"}, Type: Bool, Help: "Also list information about the direction of connection"},
			{Names: []string{"identify"}, Type: Bool, Help: "Also list information about peers identify"},
		},
		Output: OutSingle,
		Run:    runSwarmPeers,
		Type:   func() any { return &SwarmPeers{} },
		Text:   swarmPeersText,
	},
	stringsCmd("swarm/connect", "Open connection to a given peer.",
		[]Arg{{Name: "address", Kind: ArgString, Required: true, Variadic: true, Help: "Address of peer to connect to."}},
		nil, runSwarmConnect),
	stringsCmd("swarm/disconnect", "Close connection to a given address.",
		[]Arg{{Name: "address", Kind: ArgString, Required: true, Variadic: true, Help: "Address of peer to disconnect from."}},
		nil, runSwarmDisconnect),
	{
		Path:     "swarm/addrs",
		Synopsis: "List known addresses. Useful for debugging.",
		Output:   OutSingle,
		Run:      runSwarmAddrs,
		Type:     func() any { return &SwarmAddrs{} },
		Text:     swarmAddrsText,
	},
	stringsCmd("swarm/addrs/listen", "List interface listening addresses.", nil, nil, func(r *Request, e Emitter) error {
		nt, err := online(r)
		if err != nil {
			return err
		}
		addrs, err := nt.Host.Network().InterfaceListenAddresses()
		if err != nil {
			return err
		}
		return e.Emit(&StringsOutput{Strings: sortedAddrs(addrs, "")})
	}),
	stringsCmd("swarm/addrs/local", "List local addresses.", nil,
		[]Option{{Names: []string{"id"}, Type: Bool, Help: "Show peer ID in addresses."}},
		func(r *Request, e Emitter) error {
			nt, err := online(r)
			if err != nil {
				return err
			}
			suffix := ""
			if r.Bool("id") {
				suffix = "/p2p/" + nt.Host.ID().String()
			}
			return e.Emit(&StringsOutput{Strings: sortedAddrs(nt.Host.Addrs(), suffix)})
		}),
	stringsCmd("swarm/filters", "Manipulate address filters.", nil, nil, func(r *Request, e Emitter) error {
		nt, err := online(r)
		if err != nil {
			return err
		}
		return e.Emit(&StringsOutput{Strings: nt.Filters.List()}) // null when empty, as Kubo
	}),
	stringsCmd("swarm/filters/add", "Add an address filter.",
		[]Arg{{Name: "address", Kind: ArgString, Required: true, Variadic: true, Help: "Multiaddr to filter."}},
		nil, runFiltersAdd),
	stringsCmd("swarm/filters/rm", "Remove an address filter.",
		[]Arg{{Name: "address", Kind: ArgString, Required: true, Variadic: true, Help: "Multiaddr filter to remove."}},
		nil, runFiltersRm),
	{
		Path:     "ping",
		Synopsis: "Send echo request packets to IPFS hosts.",
		Help:     "'cairn ping' is a tool to test sending data to other nodes. It finds nodes\nvia the routing system, sends pings, waits for pongs, and prints out round-\ntrip latency information.",
		Args:     []Arg{{Name: "peer ID", Kind: ArgString, Required: true, Help: "ID of peer to be pinged."}},
		Options:  []Option{{Names: []string{"count", "n"}, Type: Int, Default: int64(10), Help: "Number of ping messages to send."}},
		Output:   OutStream,
		Run:      runPing,
		Type:     func() any { return &PingResult{} },
		Text:     pingText,
	},
	bootstrapCmd("bootstrap", "Show or edit the list of bootstrap peers.", nil, nil, runBootstrapList),
	bootstrapCmd("bootstrap/list", "Show peers in the bootstrap list.", nil, nil, runBootstrapList),
	bootstrapCmd("bootstrap/add", "Add peers to the bootstrap list.",
		[]Arg{{Name: "peer", Kind: ArgString, Variadic: true, Stdin: true, Help: "A peer to add to the bootstrap list (in the format '<multiaddr>/<peerID>')"}},
		[]Option{{Names: []string{"default"}, Type: Bool, Help: "Add default bootstrap nodes. (Deprecated, use 'default' subcommand instead)"}},
		runBootstrapAdd),
	bootstrapCmd("bootstrap/add/default", "Add default peers to the bootstrap list.", nil, nil,
		func(r *Request, e Emitter) error { return bootstrapAdd(r, e, node.DefaultBootstrap) }),
	bootstrapCmd("bootstrap/rm", "Remove peers from the bootstrap list.",
		[]Arg{{Name: "peer", Kind: ArgString, Variadic: true, Stdin: true, Help: "A peer to add to the bootstrap list (in the format '<multiaddr>/<peerID>')"}},
		[]Option{{Names: []string{"all"}, Type: Bool, Help: "Remove all bootstrap peers. (Deprecated, use 'all' subcommand)"}},
		runBootstrapRm),
	bootstrapCmd("bootstrap/rm/all", "Remove all peers from the bootstrap list.", nil, nil, bootstrapRmAll),
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortedAddrs(addrs []ma.Multiaddr, suffix string) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.String()+suffix)
	}
	sort.Strings(out)
	return out
}

func directionString(d int) string {
	switch network.Direction(d) {
	case network.DirInbound:
		return "inbound"
	case network.DirOutbound:
		return "outbound"
	}
	return ""
}

func runSwarmPeers(r *Request, e Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	verbose := r.Bool("verbose")
	latency, streams, direction := verbose || r.Bool("latency"), verbose || r.Bool("streams"), verbose || r.Bool("direction")
	out := &SwarmPeers{} // Kubo answers {"Peers":null} with no connection
	for _, c := range nt.Host.Network().Conns() {
		p := c.RemotePeer()
		sp := SwarmPeer{Addr: c.RemoteMultiaddr().String(), Peer: p.String()}
		if verbose {
			sp.Muxer = string(c.ConnState().StreamMultiplexer)
		}
		if latency {
			sp.Latency = "n/a"
			if l := nt.Host.Peerstore().LatencyEWMA(p); l != 0 {
				sp.Latency = l.String()
			}
		}
		if direction {
			sp.Direction = int(c.Stat().Direction)
		}
		if streams {
			for _, s := range c.GetStreams() {
				sp.Streams = append(sp.Streams, SwarmStream{Protocol: string(s.Protocol())})
			}
			sort.Slice(sp.Streams, func(i, j int) bool { return sp.Streams[i].Protocol < sp.Streams[j].Protocol })
		}
		if r.Bool("identify") {
			sp.Identify = peerInfo(nt, p, func(id peer.ID) (string, error) { return id.String(), nil })
		}
		out.Peers = append(out.Peers, sp)
	}
	sort.Slice(out.Peers, func(i, j int) bool { return out.Peers[i].Addr < out.Peers[j].Addr })
	return e.Emit(out)
}

func swarmPeersText(t *TextEnv, v any) error {
	for _, p := range v.(*SwarmPeers).Peers {
		line := p.Addr + "/p2p/" + p.Peer
		if p.Latency != "" {
			line += " " + p.Latency
		}
		if d := directionString(p.Direction); d != "" {
			line += " " + d
		}
		if _, err := fmt.Fprintln(t.Out, line); err != nil {
			return err
		}
		for _, s := range p.Streams {
			name := s.Protocol
			if name == "" {
				name = "<no protocol name>"
			}
			if _, err := fmt.Fprintf(t.Out, "  %s\n", name); err != nil {
				return err
			}
		}
	}
	return nil
}

func runSwarmConnect(r *Request, e Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	ais, err := parseAddresses(r.Args)
	if err != nil {
		return err
	}
	out := make([]string, 0, len(ais))
	for _, ai := range ais {
		if err := nt.Connect(r.Ctx, ai); err != nil {
			return fmt.Errorf("connect %s failure: %s", ai.ID, err)
		}
		out = append(out, "connect "+ai.ID.String()+" success")
	}
	return e.Emit(&StringsOutput{Strings: out})
}

func runSwarmDisconnect(r *Request, e Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	ais, err := parseAddresses(r.Args)
	if err != nil {
		return err
	}
	out := make([]string, 0, len(ais))
	for _, ai := range ais {
		msg := "disconnect " + ai.ID.String()
		if err := disconnect(nt, ai); err != nil {
			msg += " failure: " + err.Error()
		} else {
			msg += " success"
		}
		out = append(out, msg)
	}
	return e.Emit(&StringsOutput{Strings: out})
}

// disconnect closes the peer's connections (only those on the given
// addresses, when some are given).
func disconnect(nt *node.Net, ai peer.AddrInfo) error {
	conns := nt.Host.Network().ConnsToPeer(ai.ID)
	if len(conns) == 0 {
		return errors.New("not connected")
	}
	if len(ai.Addrs) == 0 {
		return nt.Host.Network().ClosePeer(ai.ID)
	}
	closed := false
	for _, c := range conns {
		for _, a := range ai.Addrs {
			if c.RemoteMultiaddr().Equal(a) {
				c.Close()
				closed = true
			}
		}
	}
	if !closed {
		return errors.New("not connected to this address")
	}
	return nil
}

func runSwarmAddrs(r *Request, e Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	ps := nt.Host.Peerstore()
	out := &SwarmAddrs{Addrs: map[string][]string{}}
	for _, p := range ps.PeersWithAddrs() {
		out.Addrs[p.String()] = sortedAddrs(ps.Addrs(p), "")
	}
	return e.Emit(out)
}

func swarmAddrsText(t *TextEnv, v any) error {
	m := v.(*SwarmAddrs).Addrs
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := fmt.Fprintf(t.Out, "%s (%d)\n", id, len(m[id])); err != nil {
			return err
		}
		for _, a := range m[id] {
			if _, err := fmt.Fprintf(t.Out, "\t%s\n", a); err != nil {
				return err
			}
		}
	}
	return nil
}

// filtersUpdate applies fn to Swarm.AddrFilters in the config file.
func filtersUpdate(n *node.Node, fn func(list []string) []string) error {
	return n.UpdateConfig(func(doc map[string]any) error {
		var list []string
		if v, err := node.GetKey(doc, "Swarm.AddrFilters"); err == nil {
			if arr, ok := v.([]any); ok {
				for _, x := range arr {
					if s, ok := x.(string); ok {
						list = append(list, s)
					}
				}
			}
		}
		list = fn(list)
		arr := make([]any, len(list))
		for i, s := range list {
			arr[i] = s
		}
		return node.SetKey(doc, "Swarm.AddrFilters", arr)
	})
}

func runFiltersAdd(r *Request, e Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	for _, s := range r.Args {
		if _, err := node.ParseAddrFilter(s); err != nil {
			return err
		}
	}
	var added []string
	for _, s := range r.Args {
		ok, _ := nt.Filters.Add(s)
		if ok {
			added = append(added, s)
		}
	}
	err = filtersUpdate(r.Node, func(list []string) []string {
		for _, s := range r.Args {
			if !contains(list, s) {
				list = append(list, s)
			}
		}
		return list
	})
	if err != nil {
		return err
	}
	// A new filter also closes open connections it covers.
	for _, c := range nt.Host.Network().Conns() {
		if nt.Filters.Blocked(c.RemoteMultiaddr()) {
			c.Close()
		}
	}
	return e.Emit(&StringsOutput{Strings: orEmpty(added)})
}

func runFiltersRm(r *Request, e Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	targets := r.Args
	if len(targets) == 1 && targets[0] == "all" {
		targets = nt.Filters.List()
	}
	var removed []string
	for _, s := range targets {
		if nt.Filters.Remove(s) {
			removed = append(removed, s)
		}
	}
	err = filtersUpdate(r.Node, func(list []string) []string {
		kept := list[:0]
		for _, s := range list {
			if !contains(targets, s) {
				kept = append(kept, s)
			}
		}
		return kept
	})
	if err != nil {
		return err
	}
	return e.Emit(&StringsOutput{Strings: orEmpty(removed)})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

const pingTimeout = 10 * time.Second

func runPing(r *Request, e Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	ai, err := parsePeerParam(r.Args[0])
	if err != nil {
		return err
	}
	if ai.ID == nt.Host.ID() {
		return errors.New("error: can't ping self")
	}
	count := r.Int("count")
	if count <= 0 {
		return fmt.Errorf("ping count must be greater than 0, was %d", count)
	}
	ps := nt.Host.Peerstore()
	if len(ai.Addrs) > 0 {
		ps.AddAddrs(ai.ID, ai.Addrs, peerstore.TempAddrTTL)
	}
	if len(ps.Addrs(ai.ID)) == 0 {
		if err := e.Emit(&PingResult{Success: true, Text: "Looking up peer " + ai.ID.String()}); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(r.Ctx, pingTimeout)
		found, err := nt.FindPeer(ctx, ai.ID)
		cancel()
		if err != nil {
			return fmt.Errorf("peer lookup failed: %s", err)
		}
		ps.AddAddrs(found.ID, found.Addrs, peerstore.TempAddrTTL)
	}
	if err := e.Emit(&PingResult{Success: true, Text: fmt.Sprintf("PING %s.", ai.ID)}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Ctx, pingTimeout*time.Duration(count))
	defer cancel()
	results := ping.Ping(ctx, nt.Host, ai.ID)
	var total time.Duration
	var ok int
	for i := int64(0); i < count; i++ {
		res, more := <-results
		if !more {
			break
		}
		if res.Error != nil {
			err = e.Emit(&PingResult{Text: fmt.Sprintf("Ping error: %s", res.Error)})
		} else {
			ok++
			total += res.RTT
			err = e.Emit(&PingResult{Success: true, Time: res.RTT})
		}
		if err != nil {
			return err
		}
		if i+1 == count {
			break
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			i = count
		}
	}
	if ok == 0 {
		return errors.New("ping failed")
	}
	avg := total.Seconds() * 1000 / float64(ok)
	return e.Emit(&PingResult{Success: true, Text: fmt.Sprintf("Average latency: %.2fms", avg)})
}

func pingText(t *TextEnv, v any) error {
	p := v.(*PingResult)
	var err error
	switch {
	case p.Text != "":
		_, err = fmt.Fprintln(t.Out, p.Text)
	case p.Success:
		_, err = fmt.Fprintf(t.Out, "Pong received: time=%.2f ms\n", p.Time.Seconds()*1000)
	default:
		_, err = fmt.Fprintln(t.Out, "Pong failed")
	}
	return err
}

func bootstrapCmd(path, synopsis string, args []Arg, opts []Option, run func(r *Request, e Emitter) error) *Command {
	return &Command{Path: path, Synopsis: synopsis, Args: args, Options: opts, Output: OutSingle, Run: run,
		Type: func() any { return &BootstrapOutput{} }, Text: bootstrapText}
}

func bootstrapText(t *TextEnv, v any) error {
	for _, p := range v.(*BootstrapOutput).Peers {
		if _, err := fmt.Fprintln(t.Out, p); err != nil {
			return err
		}
	}
	return nil
}

func runBootstrapList(r *Request, e Emitter) error {
	return e.Emit(&BootstrapOutput{Peers: orEmpty(append([]string(nil), r.Node.Cfg().Bootstrap...))})
}

func runBootstrapAdd(r *Request, e Emitter) error {
	if r.Bool("default") {
		return bootstrapAdd(r, e, node.DefaultBootstrap)
	}
	if len(r.Args) == 0 {
		return errors.New("no bootstrap peers to add")
	}
	return bootstrapAdd(r, e, r.Args)
}

// bootstrapList reads Bootstrap from a config document.
func bootstrapList(doc map[string]any) []string {
	var list []string
	if v, err := node.GetKey(doc, "Bootstrap"); err == nil {
		if arr, ok := v.([]any); ok {
			for _, x := range arr {
				if s, ok := x.(string); ok {
					list = append(list, s)
				}
			}
		}
	}
	return list
}

func setBootstrap(doc map[string]any, list []string) error {
	arr := make([]any, len(list))
	for i, s := range list {
		arr[i] = s
	}
	return node.SetKey(doc, "Bootstrap", arr)
}

func bootstrapAdd(r *Request, e Emitter, peers []string) error {
	for _, s := range peers {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return fmt.Errorf("invalid bootstrap address %q: %w", s, err)
		}
		if _, err := peer.AddrInfoFromP2pAddr(m); err != nil {
			return fmt.Errorf("invalid bootstrap address %q: %w", s, err)
		}
	}
	var added []string
	err := r.Node.UpdateConfig(func(doc map[string]any) error {
		list := bootstrapList(doc)
		for _, s := range peers {
			if !contains(list, s) && !contains(added, s) {
				added = append(added, s)
			}
		}
		return setBootstrap(doc, append(list, added...))
	})
	if err != nil {
		return err
	}
	return e.Emit(&BootstrapOutput{Peers: orEmpty(added)})
}

func runBootstrapRm(r *Request, e Emitter) error {
	if r.Bool("all") {
		return bootstrapRmAll(r, e)
	}
	if len(r.Args) == 0 {
		return errors.New("no bootstrap peers to remove")
	}
	targets := map[string]bool{}
	var ids []peer.ID
	for _, s := range r.Args {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return fmt.Errorf("invalid bootstrap address %q: %w", s, err)
		}
		ai, err := peer.AddrInfoFromP2pAddr(m)
		if err != nil {
			return fmt.Errorf("invalid bootstrap address %q: %w", s, err)
		}
		targets[s] = true
		// "/p2p/<id>" alone removes every address of the peer.
		if len(ai.Addrs) == 0 {
			ids = append(ids, ai.ID)
		}
	}
	var removed []string
	err := r.Node.UpdateConfig(func(doc map[string]any) error {
		var kept []string
		for _, s := range bootstrapList(doc) {
			drop := targets[s]
			if !drop && len(ids) > 0 {
				if m, err := ma.NewMultiaddr(s); err == nil {
					if ai, err := peer.AddrInfoFromP2pAddr(m); err == nil {
						for _, id := range ids {
							drop = drop || ai.ID == id
						}
					}
				}
			}
			if drop {
				removed = append(removed, s)
			} else {
				kept = append(kept, s)
			}
		}
		return setBootstrap(doc, kept)
	})
	if err != nil {
		return err
	}
	return e.Emit(&BootstrapOutput{Peers: orEmpty(removed)})
}

func bootstrapRmAll(r *Request, e Emitter) error {
	var removed []string
	err := r.Node.UpdateConfig(func(doc map[string]any) error {
		removed = bootstrapList(doc)
		return setBootstrap(doc, nil)
	})
	if err != nil {
		return err
	}
	return e.Emit(&BootstrapOutput{Peers: orEmpty(removed)})
}
