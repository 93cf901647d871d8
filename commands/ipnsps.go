// ipnsps.go: name/pubsub/state, subs and cancel, as Kubo 0.42's
// core/commands/name/ipnsps.go (node/ipnsps.go does the work;
// docs/names.md).

package commands

import (
	"fmt"
	"strings"

	"cairn/node"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/peer"
)

// IpnsPubsubState is the body of name/pubsub/state.
type IpnsPubsubState struct {
	Enabled bool
}

// IpnsPubsubCancel is the body of name/pubsub/cancel.
type IpnsPubsubCancel struct {
	Canceled bool
}

// ipnsPubsubOf returns the node's IPNS-over-pubsub router or Kubo's error.
func ipnsPubsubOf(r *rpc.Request) (*node.IpnsPubsub, error) {
	if r.Node == nil || r.Node.Network().IpnsPubsub() == nil {
		return nil, rpc.ClientError("%s", node.ErrIpnsPubsubDisabled)
	}
	return r.Node.Network().IpnsPubsub(), nil
}

var ipnsPubsubCommands = []*rpc.Command{
	{
		Path:     "name/pubsub/state",
		Synopsis: "Query the state of IPNS pubsub.",
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			_, err := ipnsPubsubOf(r)
			return e.Emit(&IpnsPubsubState{Enabled: err == nil})
		},
		Type: func() any { return &IpnsPubsubState{} },
		Text: func(t *rpc.TextEnv, v any) error {
			state := "disabled"
			if v.(*IpnsPubsubState).Enabled {
				state = "enabled"
			}
			_, err := fmt.Fprintln(t.Out, state)
			return err
		},
	},
	stringsCmd("name/pubsub/subs", "Show current name subscriptions.", nil, []rpc.Option{ipnsBaseOption},
		func(r *rpc.Request, e rpc.Emitter) error {
			enc, err := keyEncoderOf(r)
			if err != nil {
				return err
			}
			ps, err := ipnsPubsubOf(r)
			if err != nil {
				return err
			}
			var paths []string // none: null, as Kubo
			for _, id := range ps.Subscriptions() {
				paths = append(paths, "/ipns/"+enc.FormatID(id))
			}
			return e.Emit(&StringsOutput{Strings: paths})
		}),
	{
		Path:     "name/pubsub/cancel",
		Synopsis: "Cancel a name subscription.",
		Args:     []rpc.Arg{{Name: "name", Kind: rpc.ArgString, Required: true, Help: "Name to cancel the subscription for."}},
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			ps, err := ipnsPubsubOf(r)
			if err != nil {
				return err
			}
			id, err := peer.Decode(strings.TrimPrefix(r.Args[0], "/ipns/"))
			if err != nil {
				return rpc.ClientError("not a valid IPNS name: %s", err)
			}
			ok, err := ps.Cancel(id)
			if err != nil {
				return err
			}
			return e.Emit(&IpnsPubsubCancel{Canceled: ok})
		},
		Type: func() any { return &IpnsPubsubCancel{} },
		Text: func(t *rpc.TextEnv, v any) error {
			state := "no subscription"
			if v.(*IpnsPubsubCancel).Canceled {
				state = "canceled"
			}
			_, err := fmt.Fprintln(t.Out, state)
			return err
		},
	},
}
