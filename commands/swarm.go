// swarm.go: the swarm commands (peers, connections, addresses and their
// AutoNAT reachability, filters).

package commands

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"cairn/node"
	"cairn/node/config"
	"cairn/node/p2p"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	ma "github.com/multiformats/go-multiaddr"
)

// StringsOutput is Kubo's stringList: {"Strings":[...]}.
type StringsOutput struct {
	Strings []string
}

func stringsText(t *rpc.TextEnv, v any) error {
	for _, s := range v.(*StringsOutput).Strings {
		if _, err := fmt.Fprintln(t.Out, s); err != nil {
			return err
		}
	}
	return nil
}

func stringsCmd(path, synopsis string, args []rpc.Arg, opts []rpc.Option, run func(r *rpc.Request, e rpc.Emitter) error) *rpc.Command {
	return &rpc.Command{Path: path, Synopsis: synopsis, Args: args, Options: opts, Output: rpc.OutSingle, Run: run,
		Type: func() any { return &StringsOutput{} }, Text: stringsText}
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
		if m, err := ma.NewMultiaddr(s); err == nil {
			if _, last := ma.SplitLast(m); last == nil || last.Protocol().Code != ma.P_P2P {
				return nil, fmt.Errorf("found no ipfs peers at %s", m) // Kubo's text
			}
		}
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

// AutoNATOutput is the output of swarm addrs autonat (Kubo 0.43): the
// host's reachability and its addresses by AutoNAT V2's verdict.
type AutoNATOutput struct {
	Reachability string   `json:"reachability"`
	NAT          string   `json:"nat,omitempty"`
	Reachable    []string `json:"reachable,omitempty"`
	Unreachable  []string `json:"unreachable,omitempty"`
	Unknown      []string `json:"unknown,omitempty"`
}

// autoNATHost is what go-libp2p's basic host answers about reachability.
type autoNATHost interface {
	Reachability() network.Reachability
	ConfirmedAddrs() (reachable, unreachable, unknown []ma.Multiaddr)
}

func runSwarmAddrsAutoNAT(r *rpc.Request, e rpc.Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	out := &AutoNATOutput{Reachability: network.ReachabilityUnknown.String()}
	if h, ok := nt.Host.(autoNATHost); ok {
		out.Reachability = h.Reachability().String()
		reach, unreach, unknown := h.ConfirmedAddrs()
		out.Reachable, out.Unreachable, out.Unknown = addrStrings(reach), addrStrings(unreach), addrStrings(unknown)
	}
	return e.Emit(out)
}

func addrStrings(as []ma.Multiaddr) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.String())
	}
	return out
}

func autoNATText(t *rpc.TextEnv, v any) error {
	o := v.(*AutoNATOutput)
	w := t.Out
	fmt.Fprintln(w, "AutoNAT V2 Status:")
	fmt.Fprintf(w, "  Reachability: %s\n", o.Reachability)
	if o.NAT != "" {
		fmt.Fprintf(w, "  NAT: %s\n", o.NAT)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Per-Address Reachability:")
	for _, s := range []struct {
		label string
		addrs []string
	}{{"Reachable", o.Reachable}, {"Unreachable", o.Unreachable}, {"Unknown", o.Unknown}} {
		if len(s.addrs) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s:\n", s.label)
		for _, a := range s.addrs {
			fmt.Fprintf(w, "    %s\n", a)
		}
	}
	if len(o.Reachable)+len(o.Unreachable)+len(o.Unknown) == 0 {
		fmt.Fprintln(w, "  (no address reachability data available)")
	}
	return nil
}

// limitRows are the lines of swarm resources' table for one scope.
func limitRows(scope string, u p2p.ScopeUsage) [][5]string {
	type lv struct {
		name  string
		limit int64
		usage int64
	}
	rows := [][5]string{}
	for _, l := range []lv{
		{"Memory", int64(u.Memory), u.MemoryUsage}, {"FD", int64(u.FD), int64(u.FDUsage)},
		{"Conns", int64(u.Conns), int64(u.ConnsUsage)}, {"ConnsInbound", int64(u.ConnsInbound), int64(u.ConnsInboundUsage)},
		{"ConnsOutbound", int64(u.ConnsOutbound), int64(u.ConnsOutboundUsage)}, {"Streams", int64(u.Streams), int64(u.StreamsUsage)},
		{"StreamsInbound", int64(u.StreamsInbound), int64(u.StreamsInboundUsage)}, {"StreamsOutbound", int64(u.StreamsOutbound), int64(u.StreamsOutboundUsage)},
	} {
		value, pct := fmt.Sprint(l.limit), "n/a"
		switch {
		case l.limit == int64(rcmgr.Unlimited):
			value = "unlimited"
		case l.limit == int64(rcmgr.BlockAllLimit):
			value = "blockAll"
		case l.limit > 0:
			pct = fmt.Sprintf("%.1f%%", float64(l.usage)*100/float64(l.limit))
		}
		rows = append(rows, [5]string{scope, l.name, value, fmt.Sprint(l.usage), pct})
	}
	return rows
}

func swarmResourcesText(t *rpc.TextEnv, v any) error {
	r := v.(*p2p.ResourceUsage)
	tw := tabwriter.NewWriter(t.Out, 20, 8, 0, '\t', 0)
	fmt.Fprintf(tw, "Scope\tLimit Name\tLimit Value\tLimit Usage Amount\tLimit Usage Percent\t\n")
	rows := append(limitRows("system", r.System), limitRows("transient", r.Transient)...)
	for _, group := range []struct {
		prefix string
		m      map[string]p2p.ScopeUsage
	}{{"svc:", r.Services}, {"proto:", r.Protocols}, {"peer:", r.Peers}} {
		names := make([]string, 0, len(group.m))
		for k := range group.m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			rows = append(rows, limitRows(group.prefix+k, group.m[k])...)
		}
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", row[0], row[1], row[2], row[3], row[4])
	}
	return tw.Flush()
}

var swarmCommands = []*rpc.Command{
	{
		Path:     "swarm/resources",
		Synopsis: "Get a summary of all resources accounted for by the libp2p Resource Manager.",
		Help: `Get a summary of all resources accounted for by the libp2p Resource Manager.
This includes the limits and the usage against those limits.
This can output a human readable table and JSON encoding.

cairn's limits come from the board's memory budget (docs/board.md).`,
		Output: rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			if r.Node == nil || r.Node.Net == nil {
				return p2p.ErrNoResourceMgr
			}
			u, err := r.Node.Net.Resources()
			if err != nil {
				return err
			}
			return e.Emit(u)
		},
		Type: func() any { return &p2p.ResourceUsage{} },
		Text: swarmResourcesText,
	},
	{
		Path:     "swarm/addrs/autonat",
		Synopsis: "Show address reachability as determined by AutoNAT V2.",
		Help: `'cairn swarm addrs autonat' shows the reachability status of your node's
addresses as verified by AutoNAT V2.

The output shows:
- Reachability: Overall status (Public, Private, or Unknown)
- Reachable: Addresses confirmed to be publicly reachable
- Unreachable: Addresses that failed reachability checks
- Unknown: Addresses that haven't been tested yet

cairn does not classify carrier-grade or double NAT (Kubo's "nat" field).`,
		Output: rpc.OutSingle,
		Run:    runSwarmAddrsAutoNAT,
		Type:   func() any { return &AutoNATOutput{} },
		Text:   autoNATText,
	},
	{
		Path:     "swarm/peers",
		Synopsis: "List peers with open connections.",
		Help:     "'cairn swarm peers' lists the set of peers this node is connected to.",
		Options: []rpc.Option{
			{Names: []string{"verbose", "v"}, Type: rpc.Bool, Help: "display all extra information"},
			{Names: []string{"streams"}, Type: rpc.Bool, Help: "Also list information about open streams for each peer"},
			{Names: []string{"latency"}, Type: rpc.Bool, Help: "Also list information about latency to each peer"},
			{Names: []string{"direction"}, Type: rpc.Bool, Help: "Also list information about the direction of connection"},
			{Names: []string{"identify"}, Type: rpc.Bool, Help: "Also list information about peers identify"},
		},
		Output: rpc.OutSingle,
		Run:    runSwarmPeers,
		Type:   func() any { return &SwarmPeers{} },
		Text:   swarmPeersText,
	},
	stringsCmd("swarm/connect", "Open connection to a given peer.",
		[]rpc.Arg{{Name: "address", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "Address of peer to connect to."}},
		nil, runSwarmConnect),
	stringsCmd("swarm/disconnect", "Close connection to a given address.",
		[]rpc.Arg{{Name: "address", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "Address of peer to disconnect from."}},
		nil, runSwarmDisconnect),
	{
		Path:     "swarm/addrs",
		Synopsis: "List known addresses. Useful for debugging.",
		Output:   rpc.OutSingle,
		Run:      runSwarmAddrs,
		Type:     func() any { return &SwarmAddrs{} },
		Text:     swarmAddrsText,
	},
	stringsCmd("swarm/addrs/listen", "List interface listening addresses.", nil, nil, func(r *rpc.Request, e rpc.Emitter) error {
		nt, err := onlineSwarm(r)
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
		[]rpc.Option{{Names: []string{"id"}, Type: rpc.Bool, Help: "Show peer ID in addresses."}},
		func(r *rpc.Request, e rpc.Emitter) error {
			nt, err := onlineSwarm(r)
			if err != nil {
				return err
			}
			suffix := ""
			if r.Bool("id") {
				suffix = "/p2p/" + nt.Host.ID().String()
			}
			return e.Emit(&StringsOutput{Strings: sortedAddrs(nt.Host.Addrs(), suffix)})
		}),
	stringsCmd("swarm/filters", "Manipulate address filters.", nil, nil, func(r *rpc.Request, e rpc.Emitter) error {
		nt, err := online(r)
		if err != nil {
			return err
		}
		return e.Emit(&StringsOutput{Strings: nt.Filters.List()}) // null when empty, as Kubo
	}),
	stringsCmd("swarm/filters/add", "Add an address filter.",
		[]rpc.Arg{{Name: "address", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "Multiaddr to filter."}},
		nil, runFiltersAdd),
	stringsCmd("swarm/filters/rm", "Remove an address filter.",
		[]rpc.Arg{{Name: "address", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "Multiaddr filter to remove."}},
		nil, runFiltersRm),
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

func runSwarmPeers(r *rpc.Request, e rpc.Emitter) error {
	nt, err := onlineSwarm(r)
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

func swarmPeersText(t *rpc.TextEnv, v any) error {
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

// runSwarmConnect parses every address first, then connects (offline:
// the first address fails with Kubo's text).
func runSwarmConnect(r *rpc.Request, e rpc.Emitter) error {
	ais, err := parseAddresses(r.Args)
	if err != nil {
		return err
	}
	nt, offline := onlineSwarm(r)
	out := make([]string, 0, len(ais))
	for _, ai := range ais {
		err := offline
		if err == nil {
			err = nt.Connect(r.Ctx, ai)
		}
		if err != nil {
			return fmt.Errorf("connect %s failure: %s", ai.ID, err)
		}
		out = append(out, "connect "+ai.ID.String()+" success")
	}
	return e.Emit(&StringsOutput{Strings: out})
}

// runSwarmDisconnect answers one line per address of each peer (one for a
// peer given without one), success or failure, as Kubo; offline every
// line is a failure, still a 200.
func runSwarmDisconnect(r *rpc.Request, e rpc.Emitter) error {
	ais, err := parseAddresses(r.Args)
	if err != nil {
		return err
	}
	nt, offline := onlineSwarm(r)
	var out []string
	for _, ai := range ais {
		addrs := ai.Addrs
		if len(addrs) == 0 {
			addrs = []ma.Multiaddr{nil}
		}
		for _, a := range addrs {
			msg := "disconnect " + ai.ID.String()
			err := offline
			if err == nil {
				err = disconnect(nt, ai.ID, a)
			}
			if err != nil {
				msg += " failure: " + err.Error()
			} else {
				msg += " success"
			}
			out = append(out, msg)
		}
	}
	return e.Emit(&StringsOutput{Strings: out})
}

// disconnect closes the peer's connections (addr nil), or its first
// connection on addr, with Kubo's texts when there is none.
func disconnect(nt *p2p.Net, id peer.ID, addr ma.Multiaddr) error {
	net := nt.Host.Network()
	if addr == nil {
		if net.Connectedness(id) != network.Connected {
			return errors.New("not connected")
		}
		return net.ClosePeer(id)
	}
	for _, c := range net.ConnsToPeer(id) {
		if c.RemoteMultiaddr().Equal(addr) {
			return c.Close()
		}
	}
	return errors.New("conn not found")
}

func runSwarmAddrs(r *rpc.Request, e rpc.Emitter) error {
	nt, err := onlineSwarm(r)
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

func swarmAddrsText(t *rpc.TextEnv, v any) error {
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
	return n.ConfigFile().Update(func(doc map[string]any) error {
		var list []string
		if v, err := config.GetKey(doc, "Swarm.AddrFilters"); err == nil {
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
		return config.SetKey(doc, "Swarm.AddrFilters", arr)
	})
}

func runFiltersAdd(r *rpc.Request, e rpc.Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	for _, s := range r.Args {
		if _, err := p2p.ParseAddrFilter(s); err != nil {
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

func runFiltersRm(r *rpc.Request, e rpc.Emitter) error {
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
