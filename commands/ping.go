// ping.go: the ping command.

package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
)

var pingCommands = []*rpc.Command{
	{
		Path:     "ping",
		Synopsis: "Send echo request packets to IPFS hosts.",
		Help:     "'cairn ping' is a tool to test sending data to other nodes. It finds nodes\nvia the routing system, sends pings, waits for pongs, and prints out round-\ntrip latency information.",
		Args:     []rpc.Arg{{Name: "peer ID", Kind: rpc.ArgString, Required: true, Help: "ID of peer to be pinged."}},
		Options:  []rpc.Option{{Names: []string{"count", "n"}, Type: rpc.Int, Default: int64(10), Help: "Number of ping messages to send."}},
		Output:   rpc.OutStream,
		Run:      runPing,
		Type:     func() any { return &PingResult{} },
		Text:     pingText,
	},
}

// PingResult is one line of ping.
type PingResult struct {
	Success bool
	Time    time.Duration
	Text    string
}

const pingTimeout = 10 * time.Second

func runPing(r *rpc.Request, e rpc.Emitter) error {
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

func pingText(t *rpc.TextEnv, v any) error {
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
