// bootstrap.go: the bootstrap commands (the Bootstrap list of the config).

package commands

import (
	"errors"
	"fmt"

	"cairn/node/config"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

var bootstrapCommands = []*rpc.Command{
	bootstrapCmd("bootstrap", "Show or edit the list of bootstrap peers.", nil, nil, runBootstrapList),
	bootstrapCmd("bootstrap/list", "Show peers in the bootstrap list.", nil, nil, runBootstrapList),
	bootstrapCmd("bootstrap/add", "Add peers to the bootstrap list.",
		[]rpc.Arg{{Name: "peer", Kind: rpc.ArgString, Variadic: true, Stdin: true, Help: "A peer to add to the bootstrap list (in the format '<multiaddr>/<peerID>')"}},
		[]rpc.Option{{Names: []string{"default"}, Type: rpc.Bool, Help: "Add default bootstrap nodes. (Deprecated, use 'default' subcommand instead)"}},
		runBootstrapAdd),
	bootstrapCmd("bootstrap/add/default", "Add default peers to the bootstrap list.", nil, nil,
		func(r *rpc.Request, e rpc.Emitter) error { return bootstrapAdd(r, e, config.DefaultBootstrap) }),
	bootstrapCmd("bootstrap/rm", "Remove peers from the bootstrap list.",
		[]rpc.Arg{{Name: "peer", Kind: rpc.ArgString, Variadic: true, Stdin: true, Help: "A peer to add to the bootstrap list (in the format '<multiaddr>/<peerID>')"}},
		[]rpc.Option{{Names: []string{"all"}, Type: rpc.Bool, Help: "Remove all bootstrap peers. (Deprecated, use 'all' subcommand)"}},
		runBootstrapRm),
	bootstrapCmd("bootstrap/rm/all", "Remove all peers from the bootstrap list.", nil, nil, bootstrapRmAll),
}

// BootstrapOutput is the body of the bootstrap commands.
type BootstrapOutput struct {
	Peers []string
}

func bootstrapCmd(path, synopsis string, args []rpc.Arg, opts []rpc.Option, run func(r *rpc.Request, e rpc.Emitter) error) *rpc.Command {
	return &rpc.Command{Path: path, Synopsis: synopsis, Args: args, Options: opts, Output: rpc.OutSingle, Run: run,
		Type: func() any { return &BootstrapOutput{} }, Text: bootstrapText}
}

func bootstrapText(t *rpc.TextEnv, v any) error {
	for _, p := range v.(*BootstrapOutput).Peers {
		if _, err := fmt.Fprintln(t.Out, p); err != nil {
			return err
		}
	}
	return nil
}

// runBootstrapList answers the config's list as Kubo does: [] for an
// empty list, null once rm all has set it to null.
func runBootstrapList(r *rpc.Request, e rpc.Emitter) error {
	doc, err := r.Node.ConfigFile().Doc()
	if err != nil {
		return err
	}
	list := bootstrapList(doc)
	if v, err := config.GetKey(doc, "Bootstrap"); err == nil && v != nil {
		list = orEmpty(list)
	}
	return e.Emit(&BootstrapOutput{Peers: list})
}

func runBootstrapAdd(r *rpc.Request, e rpc.Emitter) error {
	if r.Bool("default") {
		return bootstrapAdd(r, e, config.DefaultBootstrap)
	}
	if len(r.Args) == 0 {
		return errors.New("no bootstrap peers to add")
	}
	return bootstrapAdd(r, e, r.Args)
}

// bootstrapList reads Bootstrap from a config document.
func bootstrapList(doc map[string]any) []string {
	var list []string
	if v, err := config.GetKey(doc, "Bootstrap"); err == nil {
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
	return config.SetKey(doc, "Bootstrap", arr)
}

func bootstrapAdd(r *rpc.Request, e rpc.Emitter, peers []string) error {
	for _, s := range peers {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return err
		}
		tpt, last := ma.SplitLast(m)
		if last == nil || last.Protocol().Code != ma.P_P2P {
			return fmt.Errorf("invalid bootstrap address: %s", s)
		}
		if tpt == nil {
			return fmt.Errorf("bootstrap address without a transport: %s", s)
		}
	}
	// Kubo's order: the peers given (each once, echoed even when already
	// listed), then the others already listed.
	var added []string
	err := r.Node.ConfigFile().Update(func(doc map[string]any) error {
		list := []string{}
		for _, s := range peers {
			if !contains(added, s) {
				added = append(added, s)
			}
		}
		list = append(list, added...)
		for _, s := range bootstrapList(doc) {
			if !contains(list, s) {
				list = append(list, s)
			}
		}
		return setBootstrap(doc, list)
	})
	if err != nil {
		return err
	}
	return e.Emit(&BootstrapOutput{Peers: orEmpty(added)})
}

func runBootstrapRm(r *rpc.Request, e rpc.Emitter) error {
	if r.Bool("all") {
		return bootstrapRmAll(r, e)
	}
	targets := map[string]bool{}
	var ids []peer.ID
	for _, s := range r.Args {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return err
		}
		ai, err := peer.AddrInfoFromP2pAddr(m)
		if err != nil {
			return err
		}
		targets[s] = true
		// "/p2p/<id>" alone removes every address of the peer.
		if len(ai.Addrs) == 0 {
			ids = append(ids, ai.ID)
		}
	}
	var removed []string
	err := r.Node.ConfigFile().Update(func(doc map[string]any) error {
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

func bootstrapRmAll(r *rpc.Request, e rpc.Emitter) error {
	var removed []string
	err := r.Node.ConfigFile().Update(func(doc map[string]any) error {
		removed = bootstrapList(doc)
		// Kubo sets the list to null, which list then answers.
		return config.SetKey(doc, "Bootstrap", nil)
	})
	if err != nil {
		return err
	}
	return e.Emit(&BootstrapOutput{Peers: orEmpty(removed)})
}
