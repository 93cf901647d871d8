// update.go: "update", CLI only as in Kubo. Kubo hands it to the separate
// ipfs-update tool; cairn never downloads anything itself, so it says how
// a board is updated.

package commands

import (
	"errors"
	"fmt"

	"cairn/rpc"
)

// updateHowTo is what "cairn update" prints.
const updateHowTo = `cairn does not download or install updates itself. To update a board:

  - installed from the .deb:   build or fetch the new cairn_<version>_<arch>.deb
                               (make deb), then: sudo dpkg -i cairn_*.deb
  - installed with install.sh: copy the new dist/ and board/ to the board
                               (make cross), then: sudo board/install.sh

Both keep the repo (/var/lib/cairn), replace /usr/bin/cairn and restart the
cairn service. Check the result with 'cairn version' and 'systemctl status cairn'.`

var updateCommands = []*rpc.Command{{
	Path:     "update",
	Synopsis: "Explain how to update cairn.",
	Help: `Kubo's 'ipfs update' runs the separate ipfs-update tool, which downloads
new releases. cairn never downloads anything by itself: 'cairn update'
prints how to install a new version on a board (the .deb or install.sh).`,
	Args:     []rpc.Arg{{Name: "args", Kind: rpc.ArgString, Variadic: true, Help: "Arguments for subcommands of ipfs-update (not supported)."}},
	NoRemote: true,
	NoRepo:   true,
	Output:   rpc.OutSingle,
	Run:      runUpdate,
	Type:     func() any { return &MessageOutput{} },
	Text: func(t *rpc.TextEnv, v any) error {
		_, err := fmt.Fprintln(t.Out, v.(*MessageOutput).Message)
		return err
	},
}}

func runUpdate(r *rpc.Request, e rpc.Emitter) error {
	if args := r.Args; len(args) > 0 {
		return errors.New("cairn update takes no subcommands (" + fmt.Sprint(args) + "): " + updateHowTo)
	}
	return e.Emit(&MessageOutput{Message: updateHowTo})
}
