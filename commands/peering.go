// peering.go: swarm/peering/add, ls and rm (Kubo 0.42): the running set
// of peers the node keeps connected (p2p.Net.Peering; Peering.Peers in
// the config is loaded at start, these commands do not save to it).

package commands

import (
	"fmt"

	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// PeeringResult is one line of swarm/peering/add and rm.
type PeeringResult struct {
	ID     string
	Status string
}

// PeeringPeers is the body of swarm/peering/ls.
type PeeringPeers struct {
	Peers []peer.AddrInfo
}

func peeringResultCmd(path, synopsis, verb string, arg rpc.Arg, run func(r *rpc.Request, e rpc.Emitter) error) *rpc.Command {
	return &rpc.Command{Path: path, Synopsis: synopsis, Args: []rpc.Arg{arg}, Output: rpc.OutStream, Run: run,
		Type: func() any { return &PeeringResult{} },
		Text: func(t *rpc.TextEnv, v any) error {
			p := v.(*PeeringResult)
			_, err := fmt.Fprintf(t.Out, "%s %s %s\n", verb, p.ID, p.Status)
			return err
		}}
}

var peeringCommands = []*rpc.Command{
	peeringResultCmd("swarm/peering/add", "Add peers into the peering subsystem.", "add",
		rpc.Arg{Name: "address", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "address of peer to add into the peering subsystem"},
		func(r *rpc.Request, e rpc.Emitter) error {
			addrs := make([]ma.Multiaddr, len(r.Args))
			for i, s := range r.Args {
				m, err := ma.NewMultiaddr(s)
				if err != nil {
					return err
				}
				addrs[i] = m
			}
			infos, err := peer.AddrInfosFromP2pAddrs(addrs...)
			if err != nil {
				return err
			}
			nt, err := online(r)
			if err != nil {
				return err
			}
			for _, ai := range infos {
				nt.Peering.AddPeer(ai)
				if err := e.Emit(&PeeringResult{ID: ai.ID.String(), Status: "success"}); err != nil {
					return err
				}
			}
			return nil
		}),
	{
		Path:     "swarm/peering/ls",
		Synopsis: "List peers registered in the peering subsystem.",
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			nt, err := online(r)
			if err != nil {
				return err
			}
			return e.Emit(&PeeringPeers{Peers: nt.Peering.ListPeers()})
		},
		Type: func() any { return &PeeringPeers{} },
		Text: func(t *rpc.TextEnv, v any) error {
			for _, ai := range v.(*PeeringPeers).Peers {
				fmt.Fprintf(t.Out, "%s\n", ai.ID)
				for _, a := range ai.Addrs {
					if _, err := fmt.Fprintf(t.Out, "\t%s\n", a); err != nil {
						return err
					}
				}
			}
			return nil
		},
	},
	peeringResultCmd("swarm/peering/rm", "Remove a peer from the peering subsystem.", "remove",
		rpc.Arg{Name: "ID", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "ID of peer to remove from the peering subsystem"},
		func(r *rpc.Request, e rpc.Emitter) error {
			nt, err := online(r)
			if err != nil {
				return err
			}
			for _, s := range r.Args {
				id, err := peer.Decode(s)
				if err != nil {
					return err
				}
				nt.Peering.RemovePeer(id)
				if err := e.Emit(&PeeringResult{ID: id.String(), Status: "success"}); err != nil {
					return err
				}
			}
			return nil
		}),
}
