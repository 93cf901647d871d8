// shutdown.go: the shutdown command (daemon only).

package commands

import "errors"

var shutdownCommands = []*Command{
	{
		Path:     "shutdown",
		Synopsis: "Shut down the daemon.",
		NoLocal:  true,
		Output:   OutNone,
		Run: func(r *Request, e Emitter) error {
			if r.Env == nil || r.Env.Shutdown == nil {
				return errors.New("daemon not running")
			}
			r.Env.Shutdown()
			return nil
		},
	},
}
