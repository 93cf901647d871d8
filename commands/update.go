// update.go: "update" and its subcommands (Kubo 0.43's check, versions,
// install, revert, clean), CLI only as in Kubo. Kubo downloads releases
// from GitHub; cairn never downloads anything itself, so each says how a
// board is updated.

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

// updateSubcommands are Kubo 0.43's update check, versions, install,
// revert and clean: each says what cairn does instead (it never reaches
// a release server), then how a board is updated.
var updateSubcommands = func() []*rpc.Command {
	subs := []struct{ name, synopsis, says string }{
		{"check", "Check if a newer cairn version is available", "cairn does not look for releases online; 'cairn version check' compares this node with the cairn peers it knows."},
		{"versions", "List available cairn versions", "cairn does not list releases online; 'cairn version' shows the one running."},
		{"install", "Download and install a cairn update", "cairn does not download or replace its own binary."},
		{"revert", "Revert to the previously installed cairn version", "cairn keeps no previous binary; reinstall the older .deb or dist/ the same way."},
		{"clean", "Remove backups of previous cairn binaries", "cairn keeps no backups of previous binaries: there is nothing to clean."},
	}
	var out []*rpc.Command
	for _, s := range subs {
		msg := s.says + "\n\n" + updateHowTo
		out = append(out, &rpc.Command{
			Path:     "update/" + s.name,
			Synopsis: s.synopsis,
			Help:     s.says + "\n\nKubo's 'ipfs update " + s.name + "' reaches GitHub Releases; cairn never downloads anything by itself.",
			Options: []rpc.Option{
				{Names: []string{"pre"}, Type: rpc.Bool, Help: "Include pre-release versions (ignored)."},
				{Names: []string{"count", "n"}, Type: rpc.Int, Help: "Number of versions to list (ignored)."},
				{Names: []string{"allow-downgrade"}, Type: rpc.Bool, Help: "Allow installing an older version (ignored)."},
			},
			Args:     []rpc.Arg{{Name: "version", Kind: rpc.ArgString, Help: "Version to install (ignored)."}},
			NoRemote: true,
			NoRepo:   true,
			Output:   rpc.OutSingle,
			Run: func(r *rpc.Request, e rpc.Emitter) error {
				return e.Emit(&MessageOutput{Message: msg})
			},
			Type: func() any { return &MessageOutput{} },
			Text: func(t *rpc.TextEnv, v any) error {
				_, err := fmt.Fprintln(t.Out, v.(*MessageOutput).Message)
				return err
			},
		})
	}
	return out
}()

func runUpdate(r *rpc.Request, e rpc.Emitter) error {
	if args := r.Args; len(args) > 0 {
		return errors.New("cairn update takes no subcommands (" + fmt.Sprint(args) + "): " + updateHowTo)
	}
	return e.Emit(&MessageOutput{Message: updateHowTo})
}
