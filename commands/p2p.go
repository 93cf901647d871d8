// p2p.go: p2p/listen, forward, close, ls, stream/ls and stream/close,
// libp2p stream mounting (node/p2p/mount.go does the work; docs/p2p.md).
// Each answers Kubo's "libp2p stream mounting not enabled" unless
// Experimental.Libp2pStreamMounting is set, then Kubo's offline error on
// an offline node. listen and forward return at once; with --foreground
// they stream a status object and return when the listener is closed
// (p2p/close) or the client goes, removing the listener then.

package commands

import (
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"cairn/node/p2p"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"
)

// P2PListenerInfo is one listener of p2p/ls (Kubo's field names).
type P2PListenerInfo struct {
	Protocol      string
	ListenAddress string
	TargetAddress string
}

// P2PLsOutput is the body of p2p/ls.
type P2PLsOutput struct {
	Listeners []P2PListenerInfo
}

// P2PStreamInfo is one stream of p2p/stream/ls.
type P2PStreamInfo struct {
	HandlerID     string
	Protocol      string
	OriginAddress string
	TargetAddress string
}

// P2PStreamsOutput is the body of p2p/stream/ls.
type P2PStreamsOutput struct {
	Streams []P2PStreamInfo
}

// P2PForegroundOutput is what listen and forward stream with --foreground.
type P2PForegroundOutput struct {
	Status   string // "active", then "closing" when p2p/close removed it
	Protocol string
	Address  string
}

var p2pCustomOpt = rpc.Option{Names: []string{"allow-custom-protocol"}, Type: rpc.Bool, Help: "Don't require /x/ prefix"}

var (
	p2pProtocolArg = rpc.Arg{Name: "protocol", Kind: rpc.ArgString, Required: true, Help: "Protocol name."}
	p2pTargetArg   = rpc.Arg{Name: "target-address", Kind: rpc.ArgString, Required: true, Help: "Target endpoint."}
)

// p2pForegroundOpt is listen's and forward's --foreground; what is
// "listener" or "forwarder".
func p2pForegroundOpt(what string) rpc.Option {
	return rpc.Option{Names: []string{"foreground", "f"}, Type: rpc.Bool, Help: "Run in foreground; " + what + " is removed when command exits"}
}

func newP2PForegroundOutput() any { return &P2PForegroundOutput{} }

var p2pHeadersOpt = rpc.Option{Names: []string{"headers", "v"}, Type: rpc.Bool, Help: "Print table headers."}

var p2pCommands = []*rpc.Command{
	{
		Path:     "p2p/listen",
		Synopsis: "Create libp2p service.",
		Help:     "Forward the streams of <protocol> from any peer to <target-address> (a TCP multiaddr such as /ip4/127.0.0.1/tcp/3000).",
		Args:     []rpc.Arg{p2pProtocolArg, p2pTargetArg},
		Options: []rpc.Option{
			p2pCustomOpt,
			{Names: []string{"report-peer-id", "r"}, Type: rpc.Bool, Help: "Send remote base58 peerid to target when a new connection is established"},
			p2pForegroundOpt("listener"),
		},
		Output: rpc.OutStream,
		Run:    runP2PListen,
		Type:   newP2PForegroundOutput,
		Text: func(t *rpc.TextEnv, v any) error {
			return p2pForegroundText(t, v, "Listening on %s, forwarding to %s, waiting for interrupt...\n", "Received interrupt, removing listener for %s\n")
		},
	},
	{
		Path:     "p2p/forward",
		Synopsis: "Forward connections to libp2p service.",
		Help:     "Forward connections made to <listen-address> (a local TCP multiaddr) to <target-address> (/p2p/<peer>) over streams of <protocol>.",
		Args:     []rpc.Arg{p2pProtocolArg, {Name: "listen-address", Kind: rpc.ArgString, Required: true, Help: "Listening endpoint."}, p2pTargetArg},
		Options:  []rpc.Option{p2pCustomOpt, p2pForegroundOpt("forwarder")},
		Output:   rpc.OutStream,
		Run:      runP2PForward,
		Type:     newP2PForegroundOutput,
		Text: func(t *rpc.TextEnv, v any) error {
			return p2pForegroundText(t, v, "Forwarding %s to %s, waiting for interrupt...\n", "Received interrupt, removing forwarder for %s\n")
		},
	},
	{
		Path:     "p2p/close",
		Synopsis: "Stop listening for new connections to forward.",
		Options: []rpc.Option{
			{Names: []string{"all", "a"}, Type: rpc.Bool, Help: "Close all listeners."},
			{Names: []string{"protocol", "p"}, Type: rpc.String, Help: "Match protocol name"},
			{Names: []string{"listen-address", "l"}, Type: rpc.String, Help: "Match listen address"},
			{Names: []string{"target-address", "t"}, Type: rpc.String, Help: "Match target address"},
		},
		Output: rpc.OutSingle,
		Run:    runP2PClose,
		Type:   func() any { var n int; return &n },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := fmt.Fprintf(t.Out, "Closed %d stream(s)\n", *v.(*int))
			return err
		},
	},
	{
		Path:     "p2p/ls",
		Synopsis: "List active p2p listeners.",
		Options:  []rpc.Option{p2pHeadersOpt},
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			p, err := r.Node.Network().P2P()
			if err != nil {
				return err
			}
			out := &P2PLsOutput{}
			for _, l := range p.Listeners() {
				out.Listeners = append(out.Listeners, P2PListenerInfo(l))
			}
			return e.Emit(out)
		},
		Type: func() any { return &P2PLsOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			var rows [][]string
			for _, l := range v.(*P2PLsOutput).Listeners {
				rows = append(rows, []string{l.Protocol, l.ListenAddress, l.TargetAddress})
			}
			return p2pTable(t, []string{"Protocol", "Listen Address", "Target Address"}, rows)
		},
	},
	{
		Path:     "p2p/stream/ls",
		Synopsis: "List active p2p streams.",
		Options:  []rpc.Option{p2pHeadersOpt},
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			p, err := r.Node.Network().P2P()
			if err != nil {
				return err
			}
			out := &P2PStreamsOutput{}
			for _, s := range p.Streams() {
				out.Streams = append(out.Streams, P2PStreamInfo{HandlerID: strconv.FormatUint(s.ID, 10),
					Protocol: s.Protocol, OriginAddress: s.OriginAddress, TargetAddress: s.TargetAddress})
			}
			return e.Emit(out)
		},
		Type: func() any { return &P2PStreamsOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			var rows [][]string
			for _, s := range v.(*P2PStreamsOutput).Streams {
				rows = append(rows, []string{s.HandlerID, s.Protocol, s.OriginAddress, s.TargetAddress})
			}
			return p2pTable(t, []string{"ID", "Protocol", "Origin", "Target"}, rows)
		},
	},
	{
		Path:     "p2p/stream/close",
		Synopsis: "Close active p2p stream.",
		Args:     []rpc.Arg{{Name: "id", Kind: rpc.ArgString, Help: "Stream identifier"}},
		Options:  []rpc.Option{{Names: []string{"all", "a"}, Type: rpc.Bool, Help: "Close all streams."}},
		Output:   rpc.OutNone,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			p, err := r.Node.Network().P2P()
			if err != nil {
				return err
			}
			all := r.Bool("all")
			var id uint64
			if !all {
				if len(r.Args) == 0 {
					return errors.New("no id specified")
				}
				if id, err = strconv.ParseUint(r.Args[0], 10, 64); err != nil {
					return err
				}
			}
			p.ResetStreams(id, all)
			return nil
		},
	},
}

// p2pProtocol checks a protocol argument against the /x/ rule.
func p2pProtocol(r *rpc.Request) (protocol.ID, error) {
	if err := p2p.CheckProtocol(r.Args[0], r.Bool("allow-custom-protocol")); err != nil {
		return "", err
	}
	return protocol.ID(r.Args[0]), nil
}

func runP2PListen(r *rpc.Request, e rpc.Emitter) error {
	p, err := r.Node.Network().P2P()
	if err != nil {
		return err
	}
	target, err := ma.NewMultiaddr(r.Args[1])
	if err != nil {
		return err
	}
	if err := p2p.CheckTarget(target); err != nil {
		return err
	}
	proto, err := p2pProtocol(r)
	if err != nil {
		return err
	}
	h, err := p.Listen(proto, target, r.Bool("report-peer-id"))
	if err != nil {
		return err
	}
	return p2pForeground(r, e, p, h, r.Args[1])
}

func runP2PForward(r *rpc.Request, e rpc.Emitter) error {
	p, err := r.Node.Network().P2P()
	if err != nil {
		return err
	}
	listen, err := ma.NewMultiaddr(r.Args[1])
	if err != nil {
		return err
	}
	target, err := r.Node.Network().ParseP2PTarget(r.Ctx, r.Args[2])
	if err != nil {
		return err
	}
	proto, err := p2pProtocol(r)
	if err != nil {
		return err
	}
	h, err := p.Forward(proto, listen, target)
	if err != nil {
		return err
	}
	return p2pForeground(r, e, p, h, r.Args[1])
}

// p2pForeground waits, with --foreground, until the listener is closed
// (saying so) or the client goes (closing it), as Kubo does.
func p2pForeground(r *rpc.Request, e rpc.Emitter, p *p2p.P2P, h *p2p.Handle, addr string) error {
	if !r.Bool("foreground") {
		return nil
	}
	proto := r.Args[0]
	if err := e.Emit(&P2PForegroundOutput{Status: "active", Protocol: proto, Address: addr}); err != nil {
		p.CloseHandle(h)
		return err
	}
	select {
	case <-r.Ctx.Done():
		p.CloseHandle(h)
		return nil
	case <-h.Done():
		return e.Emit(&P2PForegroundOutput{Status: "closing", Protocol: proto, Address: addr})
	}
}

func p2pForegroundText(t *rpc.TextEnv, v any, active, closing string) error {
	o := v.(*P2PForegroundOutput)
	var err error
	switch o.Status {
	case "active":
		_, err = fmt.Fprintf(t.Out, active, o.Protocol, o.Address)
	case "closing":
		_, err = fmt.Fprintf(t.Out, closing, o.Protocol)
	}
	return err
}

// p2pTable prints rows in columns, under the header with --headers.
func p2pTable(t *rpc.TextEnv, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(t.Out, 1, 2, 1, ' ', 0)
	line := func(cols []string) {
		for i, c := range cols {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	if t.Req != nil && t.Req.Bool("headers") && len(rows) > 0 {
		line(header)
	}
	for _, row := range rows {
		line(row)
	}
	return tw.Flush()
}

func runP2PClose(r *rpc.Request, e rpc.Emitter) error {
	p, err := r.Node.Network().P2P()
	if err != nil {
		return err
	}
	all := r.Bool("all")
	proto, hasProto := r.Opts["protocol"].(string)
	listenS, hasListen := r.Opts["listen-address"].(string)
	targetS, hasTarget := r.Opts["target-address"].(string)
	var listen, target ma.Multiaddr
	if hasListen {
		if listen, err = ma.NewMultiaddr(listenS); err != nil {
			return err
		}
	}
	if hasTarget {
		if target, err = ma.NewMultiaddr(targetS); err != nil {
			return err
		}
	}
	if !(all || hasProto || hasListen || hasTarget) {
		return errors.New("no matching options given")
	}
	if all && (hasProto || hasListen || hasTarget) {
		return errors.New("can't combine --all with other matching options")
	}
	n := p.CloseListeners(func(l p2p.ListenerInfo) bool {
		if all {
			return true
		}
		if hasProto && l.Protocol != proto {
			return false
		}
		if hasListen && !maEqual(listen, l.ListenAddress) {
			return false
		}
		if hasTarget && !maEqual(target, l.TargetAddress) {
			return false
		}
		return true
	})
	return e.Emit(&n)
}

// maEqual compares a multiaddr with one in its string form.
func maEqual(a ma.Multiaddr, s string) bool {
	b, err := ma.NewMultiaddr(s)
	return err == nil && a.Equal(b)
}
