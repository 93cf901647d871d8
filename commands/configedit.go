// configedit.go: "config edit", CLI only as in Kubo: the config file in
// $EDITOR, saved only if what comes back is a valid config.

package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"
)

var configEditCommands = []*rpc.Command{{
	Path:     "config/edit",
	Synopsis: "Open the config file for editing in $EDITOR.",
	Help: `To use 'cairn config edit', you must have the $EDITOR environment
variable set to your preferred text editor.

The editor works on a copy of the config. When it exits, the copy is
checked (it must be a JSON object that decodes as a cairn config, with an
identity whose PeerID matches its private key) and only then saved, in
place of the old config, atomically. An invalid copy is not saved: the
error names the problem and the file that keeps your edit.

The config cannot be edited while a daemon runs on the repo (the daemon
would overwrite the edit): stop it first, or use 'cairn config <key>
<value>', which the daemon applies.`,
	NoRemote: true,
	NoRepo:   true,
	Output:   rpc.OutNone,
	Run:      runConfigEdit,
}}

// errNoEditor is Kubo's text for a missing $EDITOR.
var errNoEditor = errors.New("ENV variable $EDITOR not set")

func runConfigEdit(r *rpc.Request, _ rpc.Emitter) error {
	editor := os.Getenv("EDITOR")
	if editor == "" {
		return errNoEditor
	}
	dir := repoDir(r)
	if !node.IsInitialized(dir) {
		return fmt.Errorf("%w at %s: please run 'cairn init'", node.ErrNoRepo, dir)
	}
	lk, err := node.LockRepo(dir)
	if err != nil {
		if errors.Is(err, node.ErrRepoLocked) {
			return errors.New("cannot edit the config while a cairn daemon is running on this repo: stop it first, or use 'cairn config <key> <value>'")
		}
		return err
	}
	defer lk.Unlock()

	path := filepath.Join(dir, config.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "config.edit-*.json")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(orig); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}

	// $EDITOR may carry arguments ("code --wait"), as shells read it; the
	// file name goes in as a positional parameter, never through the shell.
	cmd := exec.CommandContext(r.Ctx, "/bin/sh", "-c", editor+` "$1"`, "sh", tmp.Name())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("config edit: the editor failed (%v); nothing was saved", err)
	}

	edited, err := os.ReadFile(tmp.Name())
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(edited, &doc); err != nil {
		keep = true
		return fmt.Errorf("config edit: the edited config is not valid JSON (%v); nothing was saved, your edit is in %s", err, tmp.Name())
	}
	if _, err := node.CheckConfigDoc(doc); err != nil {
		keep = true
		return fmt.Errorf("config edit: the edited config is not valid (%v); nothing was saved, your edit is in %s", err, tmp.Name())
	}
	return config.WriteDoc(dir, doc)
}
