// shutdown.go: the shutdown command (daemon only).

package commands

import (
	"errors"

	"cairn/rpc"
)

var shutdownCommands = []*rpc.Command{
	{
		Path:     "shutdown",
		Synopsis: "Shut down the daemon.",
		NoLocal:  true,
		Output:   rpc.OutNone,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			if r.Env == nil || r.Env.Shutdown == nil {
				return errors.New("daemon not running")
			}
			r.Env.Shutdown()
			return nil
		},
	},
}
