// bitswap.go: the bitswap commands, stats/bitswap and stats/bw.

package commands

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"cairn/rpc"

	humanize "github.com/dustin/go-humanize"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// BitswapStat is the body of bitswap/stat.
type BitswapStat struct {
	ProvideBufLen    int
	Wantlist         []CidLink
	Peers            []string
	BlocksReceived   uint64
	DataReceived     uint64
	BlocksSent       uint64
	DataSent         uint64
	DupBlksReceived  uint64
	DupDataReceived  uint64
	MessagesReceived uint64
}

// BitswapLedger is the body of bitswap/ledger.
type BitswapLedger struct {
	Peer      string
	Value     float64
	Sent      uint64
	Recv      uint64
	Exchanged uint64
}

// WantlistOutput is the body of bitswap/wantlist.
type WantlistOutput struct {
	Keys []CidLink
}

// BandwidthCaps are cairn's configured caps (bytes per second; 0: none).
type BandwidthCaps struct {
	LANIn, LANOut, WANIn, WANOut int64
}

// BandwidthStats is one line of stats/bw; Caps is cairn's addition,
// present when Swarm.Bandwidth sets a cap.
type BandwidthStats struct {
	TotalIn  int64
	TotalOut int64
	RateIn   float64
	RateOut  float64
	Caps     *BandwidthCaps `json:",omitempty"`
}

// provideBufSize is the provide buffer Kubo reports (HasBlockBufferSize).
const provideBufSize = 256

func bitswapStatCmd(path string) *rpc.Command {
	return &rpc.Command{
		Path:     path,
		Synopsis: "Show some diagnostic information on the bitswap agent.",
		Options: []rpc.Option{
			{Names: []string{"verbose", "v"}, Type: rpc.Bool, Help: "Print extra information."},
			{Names: []string{"human"}, Type: rpc.Bool, Help: "Print sizes in human readable format (e.g., 1K 234M 2G)."},
		},
		Output: rpc.OutSingle,
		Run:    runBitswapStat,
		Type:   func() any { return &BitswapStat{} },
		Text:   bitswapStatText,
	}
}

var bitswapCommands = []*rpc.Command{
	bitswapStatCmd("bitswap/stat"),
	bitswapStatCmd("stats/bitswap"),
	{
		Path:     "bitswap/wantlist",
		Synopsis: "Show blocks currently on the wantlist.",
		Options:  []rpc.Option{{Names: []string{"peer", "p"}, Type: rpc.String, Help: "Specify which peer to show wantlist for."}},
		Output:   rpc.OutSingle,
		Run:      runWantlist,
		Type:     func() any { return &WantlistOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			for _, k := range v.(*WantlistOutput).Keys {
				if _, err := fmt.Fprintln(t.Out, k.Cid); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		Path:     "bitswap/ledger",
		Synopsis: "Show the current ledger for a peer.",
		Args:     []rpc.Arg{{Name: "peer", Kind: rpc.ArgString, Required: true, Help: "The PeerID (B58) of the ledger to inspect."}},
		Output:   rpc.OutSingle,
		Run:      runLedger,
		Type:     func() any { return &BitswapLedger{} },
		Text: func(t *rpc.TextEnv, v any) error {
			l := v.(*BitswapLedger)
			_, err := fmt.Fprintf(t.Out, "Ledger for %s\nDebt ratio:\t%f\nExchanges:\t%d\nBytes sent:\t%d\nBytes received:\t%d\n",
				l.Peer, l.Value, l.Exchanged, l.Sent, l.Recv)
			return err
		},
	},
	{
		Path:     "bitswap/reprovide",
		Synopsis: "Trigger reprovider.",
		Output:   rpc.OutNone,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			if _, err := online(r); err != nil {
				return err
			}
			_, err := r.Node.Network().Reprovide(r.Ctx)
			return err
		},
	},
	{
		Path:     "stats/bw",
		Synopsis: "Print cairn bandwidth information.",
		Help:     "'cairn stats bw' prints bandwidth information for the cairn daemon.\nIt displays: TotalIn, TotalOut, RateIn, RateOut, and the caps of\nSwarm.Bandwidth when set.",
		Options: []rpc.Option{
			{Names: []string{"peer", "p"}, Type: rpc.String, Help: "Specify a peer to print bandwidth for."},
			{Names: []string{"proto", "t"}, Type: rpc.String, Help: "Specify a protocol to print bandwidth for."},
			{Names: []string{"poll"}, Type: rpc.Bool, Help: "Print bandwidth at an interval."},
			{Names: []string{"interval", "i"}, Type: rpc.String, Default: "1s", Help: "Time interval to wait between updating output, if 'poll' is true."},
		},
		Output: rpc.OutStream,
		Run:    runStatsBW,
		Type:   func() any { return &BandwidthStats{} },
		Text:   statsBWText,
	},
}

func runBitswapStat(r *rpc.Request, e rpc.Emitter) error {
	nt, err := onlineStat(r)
	if err != nil {
		return err
	}
	st, err := nt.Bitswap.Stat()
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	out := &BitswapStat{ProvideBufLen: nt.ProvideStats().Queued, Wantlist: []CidLink{}, Peers: orEmpty(st.Peers),
		BlocksReceived: st.BlocksReceived, DataReceived: st.DataReceived, BlocksSent: st.BlocksSent,
		DataSent: st.DataSent, DupBlksReceived: st.DupBlksReceived, DupDataReceived: st.DupDataReceived,
		MessagesReceived: st.MessagesReceived}
	for _, c := range st.Wantlist {
		out.Wantlist = append(out.Wantlist, CidLink{Cid: enc.Encode(c)})
	}
	sort.Strings(out.Peers)
	return e.Emit(out)
}

func bitswapStatText(t *rpc.TextEnv, v any) error {
	s := v.(*BitswapStat)
	human := t.Req != nil && t.Req.Bool("human")
	verbose := t.Req != nil && t.Req.Bool("verbose")
	size := func(n uint64) string {
		if human {
			return humanize.Bytes(n)
		}
		return fmt.Sprint(n)
	}
	w := t.Out
	fmt.Fprintln(w, "bitswap status")
	fmt.Fprintf(w, "\tprovides buffer: %d / %d\n", s.ProvideBufLen, provideBufSize)
	fmt.Fprintf(w, "\tblocks received: %d\n", s.BlocksReceived)
	fmt.Fprintf(w, "\tblocks sent: %d\n", s.BlocksSent)
	fmt.Fprintf(w, "\tdata received: %s\n", size(s.DataReceived))
	fmt.Fprintf(w, "\tdata sent: %s\n", size(s.DataSent))
	fmt.Fprintf(w, "\tdup blocks received: %d\n", s.DupBlksReceived)
	fmt.Fprintf(w, "\tdup data received: %s\n", size(s.DupDataReceived))
	fmt.Fprintf(w, "\twantlist [%d keys]\n", len(s.Wantlist))
	for _, k := range s.Wantlist {
		fmt.Fprintf(w, "\t\t%s\n", k.Cid)
	}
	_, err := fmt.Fprintf(w, "\tpartners [%d]\n", len(s.Peers))
	if verbose {
		for _, p := range s.Peers {
			fmt.Fprintf(w, "\t\t%s\n", p)
		}
	}
	return err
}

func runWantlist(r *rpc.Request, e rpc.Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	p := nt.Host.ID()
	if s := r.String("peer"); s != "" {
		if p, err = peer.Decode(s); err != nil {
			return err
		}
	}
	out := &WantlistOutput{Keys: []CidLink{}}
	for _, c := range nt.Bitswap.WantlistForPeer(p) {
		out.Keys = append(out.Keys, CidLink{Cid: enc.Encode(c)})
	}
	return e.Emit(out)
}

func runLedger(r *rpc.Request, e rpc.Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	p, err := peer.Decode(r.Args[0])
	if err != nil {
		return err
	}
	if nt.Bitswap.Server == nil {
		return errors.New("bitswap server is disabled")
	}
	rc := nt.Bitswap.Server.LedgerForPeer(p)
	if rc == nil {
		return e.Emit(&BitswapLedger{Peer: p.String()})
	}
	return e.Emit(&BitswapLedger{Peer: rc.Peer, Value: rc.Value, Sent: rc.Sent, Recv: rc.Recv, Exchanged: rc.Exchanged})
}

func runStatsBW(r *rpc.Request, e rpc.Emitter) error {
	nt, err := onlineStat(r)
	if err != nil {
		return err
	}
	ps, proto := r.String("peer"), r.String("proto")
	if ps != "" && proto != "" {
		return rpc.ClientError("please only specify peer OR protocol")
	}
	var pid peer.ID
	if ps != "" {
		if pid, err = peer.Decode(ps); err != nil {
			return err
		}
	}
	interval, err := time.ParseDuration(r.String("interval"))
	if err != nil {
		return err
	}
	if interval <= 0 {
		return errors.New("interval must be greater than 0")
	}
	var caps *BandwidthCaps
	if l := nt.Limits; l.LANIn+l.LANOut+l.WANIn+l.WANOut > 0 {
		caps = &BandwidthCaps{LANIn: l.LANIn, LANOut: l.LANOut, WANIn: l.WANIn, WANOut: l.WANOut}
	}
	read := func() *BandwidthStats {
		var s metrics.Stats
		switch {
		case pid != "":
			s = nt.BW.GetBandwidthForPeer(pid)
		case proto != "":
			s = nt.BW.GetBandwidthForProtocol(protocol.ID(proto))
		default:
			s = nt.BW.GetBandwidthTotals()
		}
		return &BandwidthStats{TotalIn: s.TotalIn, TotalOut: s.TotalOut, RateIn: s.RateIn, RateOut: s.RateOut, Caps: caps}
	}
	if !r.Bool("poll") {
		return e.Emit(read())
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := e.Emit(read()); err != nil {
			return err
		}
		select {
		case <-r.Ctx.Done():
			return nil
		case <-nt.Ctx().Done():
			return errors.New("node is shutting down")
		case <-t.C:
		}
	}
}

func statsBWText(t *rpc.TextEnv, v any) error {
	s := v.(*BandwidthStats)
	w := t.Out
	fmt.Fprintln(w, "Bandwidth")
	fmt.Fprintf(w, "TotalIn: %s\n", humanize.Bytes(uint64(s.TotalIn)))
	fmt.Fprintf(w, "TotalOut: %s\n", humanize.Bytes(uint64(s.TotalOut)))
	fmt.Fprintf(w, "RateIn: %s/s\n", humanize.Bytes(uint64(s.RateIn)))
	_, err := fmt.Fprintf(w, "RateOut: %s/s\n", humanize.Bytes(uint64(s.RateOut)))
	if s.Caps != nil {
		c := s.Caps
		capStr := func(n int64) string {
			if n <= 0 {
				return "none"
			}
			return humanize.IBytes(uint64(n)) + "/s"
		}
		_, err = fmt.Fprintf(w, "Caps: LAN in %s, out %s; WAN in %s, out %s\n",
			capStr(c.LANIn), capStr(c.LANOut), capStr(c.WANIn), capStr(c.WANOut))
	}
	return err
}
