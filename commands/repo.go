// repo.go: the "repo" family (and stats/repo): gc, stat, verify, version,
// fsck, ls (refs local under Kubo 0.43's name), migrate (the block store's
// schema).

package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"cairn/node"
	"cairn/rpc"
	"cairn/storage"

	humanize "github.com/dustin/go-humanize"
	"github.com/ipfs/go-cid"
)

var repoStatCmd = rpc.Command{
	Synopsis: "Get stats for the currently used repo.",
	Options: []rpc.Option{
		{Names: []string{"size-only", "s"}, Type: rpc.Bool, Help: "Only report RepoSize and StorageMax."},
		{Names: []string{"human", "H"}, Type: rpc.Bool, Help: "Print sizes in human readable format (e.g., 1K 234M 2G)"},
	},
	Output: rpc.OutSingle,
	Run:    runRepoStat,
	Type:   func() any { return &RepoStat{} },
	Text:   repoStatText,
}

var repoCommands = []*rpc.Command{
	{
		Path:     "repo/gc",
		Synopsis: "Perform a garbage collection sweep on the repo.",
		Help: `Removes every block not reachable from a pin or the MFS root. It runs in
bounded batches: adds, cats and pins keep working meanwhile.`,
		Options: []rpc.Option{
			{Names: []string{"stream-errors"}, Type: rpc.Bool, Help: "Stream errors."},
			{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Write minimal output."},
			{Names: []string{"silent"}, Type: rpc.Bool, Help: "Write no output."},
		},
		Output: rpc.OutStream,
		Run:    runRepoGC,
		Type:   func() any { return &GcResult{} },
		Text: func(t *rpc.TextEnv, v any) error {
			r := v.(*GcResult)
			if r.Error != "" {
				fmt.Fprintf(t.Err, "Error: %s\n", r.Error)
				return nil
			}
			if t.Req != nil && t.Req.Bool("quiet") {
				fmt.Fprintln(t.Out, r.Key.Cid)
				return nil
			}
			fmt.Fprintf(t.Out, "removed %s\n", r.Key.Cid)
			return nil
		},
	},
	withPath(repoStatCmd, "repo/stat"),
	withPath(repoStatCmd, "stats/repo"),
	{
		Path:     "repo/verify",
		Synopsis: "Verify all blocks in repo are not corrupted.",
		Output:   rpc.OutStream,
		Run:      runRepoVerify,
		Type:     func() any { return &VerifyProgress{} },
		Text: func(t *rpc.TextEnv, v any) error {
			p := v.(*VerifyProgress)
			if p.Msg != "" {
				if t.TTY {
					fmt.Fprint(t.Err, "\033[2K\r")
				}
				fmt.Fprintln(t.Out, p.Msg)
			} else if t.TTY {
				fmt.Fprintf(t.Err, "\033[2K\r%d blocks processed.", p.Progress)
			}
			return nil
		},
	},
	{
		Path:     "repo/version",
		Synopsis: "Show the repo version.",
		Options:  []rpc.Option{{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Write minimal output."}},
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			// A number, as Kubo's; its CLI prints fs-repo@<n>.
			return e.Emit(&RepoVersion{Version: node.RepoVersion})
		},
		Type: func() any { return &RepoVersion{} },
		Text: func(t *rpc.TextEnv, v any) error {
			rv := v.(*RepoVersion)
			if t.Req != nil && t.Req.Bool("quiet") {
				fmt.Fprintf(t.Out, "fs-repo@%s\n", rv.Version)
				return nil
			}
			fmt.Fprintf(t.Out, "cairn repo version fs-repo@%s\n", rv.Version)
			return nil
		},
	},
	{
		Path:     "repo/fsck",
		Synopsis: "Remove repo lockfiles left by a killed daemon.",
		Help: `cairn's repo lock is an flock, which the kernel drops when a daemon dies, so a
stale lock cannot block a start; fsck removes the lock and api files when no
daemon holds them, and refuses while one runs.`,
		NoRemote: true,
		NoRepo:   true,
		Output:   rpc.OutSingle,
		Run:      runRepoFsck,
		Type:     func() any { return &MessageOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := fmt.Fprintln(t.Out, v.(*MessageOutput).Message)
			return err
		},
	},
	// Kubo 0.43's name for refs local.
	renamed("repo/ls", refsCommands, "refs/local"),
	{
		Path:     "repo/migrate",
		Synopsis: "Apply repository migrations to a specific version.",
		Help: `'cairn repo migrate' brings the repo's block store to the schema this cairn
writes (` + fmt.Sprint(storage.SchemaVersion) + `), as a daemon does when it opens an older store; a migration
that a crash interrupted resumes. The daemon must not be running.

Versions are the block store's schema (storage/doc.go), not Kubo's fs-repo
numbers. cairn cannot downgrade a store: --allow-downgrade is accepted and
refused with an explanation.

Examples:
  cairn repo migrate          # Migrate to the latest schema
  cairn repo migrate --to=` + fmt.Sprint(storage.SchemaVersion) + `   # The same, explicitly`,
		Options: []rpc.Option{
			{Names: []string{"to"}, Type: rpc.Int, Default: int(storage.SchemaVersion), Help: "Target repository version"},
			{Names: []string{"allow-downgrade"}, Type: rpc.Bool, Help: "Allow downgrading to a lower repo version"},
		},
		NoRemote: true,
		NoRepo:   true,
		Output:   rpc.OutSingle,
		Run:      runRepoMigrate,
		Type:     func() any { return &MessageOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := io.WriteString(t.Out, v.(*MessageOutput).Message)
			return err
		},
	},
}

func runRepoMigrate(r *rpc.Request, e rpc.Emitter) error {
	dir := repoDir(r)
	if !node.IsInitialized(dir) {
		return fmt.Errorf("%w at %s", node.ErrNoRepo, dir)
	}
	lk, err := node.LockRepo(dir)
	if err != nil {
		if errors.Is(err, node.ErrRepoLocked) {
			return errors.New("cannot migrate while a cairn daemon is running on this repo")
		}
		return err
	}
	defer lk.Unlock()
	path := filepath.Join(dir, storage.FileName)
	cur, err := storage.Schema(path)
	if err != nil {
		return fmt.Errorf("could not get current repo version: %w", err)
	}
	to := r.Int("to")
	switch {
	case cur == 0:
		return fmt.Errorf("no block store at %s yet: the daemon creates it at schema %d", path, storage.SchemaVersion)
	case to == int64(cur):
		return e.Emit(&MessageOutput{Message: fmt.Sprintf("Repository is already at version %d.\n", cur)})
	case to < int64(cur) && !r.Bool("allow-downgrade"):
		return fmt.Errorf("downgrade from version %d to %d requires --allow-downgrade flag", cur, to)
	case to < int64(cur):
		return fmt.Errorf("cairn cannot downgrade its block store from version %d to %d: a store is only ever migrated forward", cur, to)
	case to != int64(storage.SchemaVersion):
		return fmt.Errorf("cairn %s migrates the block store to version %d only, not %d", node.Version, storage.SchemaVersion, to)
	}
	st, err := storage.Open(path, nil)
	if err != nil {
		return fmt.Errorf("migrating repository from version %d to %d: %w", cur, to, err)
	}
	if err := st.Close(); err != nil {
		return err
	}
	return e.Emit(&MessageOutput{Message: fmt.Sprintf("Migrating repository from version %d to %d...\nRepository successfully migrated to version %d.\n", cur, to, to)})
}

func withPath(c rpc.Command, path string) *rpc.Command {
	c.Path = path
	return &c
}

// GcResult is one line of repo/gc.
type GcResult struct {
	Key   *CidLink
	Error string `json:",omitempty"`
}

// RepoStat is the body of repo/stat.
type RepoStat struct {
	RepoSize   uint64
	StorageMax uint64
	// Sent always, zero with size-only, as Kubo does.
	NumObjects uint64
	RepoPath   string
	Version    string
}

// VerifyProgress is one line of repo/verify.
type VerifyProgress struct {
	Msg      string
	Progress int
}

// RepoVersion is the body of repo/version.
type RepoVersion struct {
	Version string
}

// MessageOutput is Kubo's {"Message"} shape.
type MessageOutput struct {
	Message string
}

func runRepoGC(r *rpc.Request, e rpc.Emitter) error {
	streamErrs := r.Bool("stream-errors")
	silent := r.Bool("silent") && !streamErrs // Kubo: stream-errors lists keys anyway
	_, err := r.Node.Storage().CollectGarbage(r.Ctx, func(c cid.Cid) error {
		if silent {
			return nil
		}
		return e.Emit(&GcResult{Key: &CidLink{Cid: c.String()}})
	})
	if err != nil && streamErrs {
		if eerr := e.Emit(&GcResult{Error: err.Error()}); eerr != nil {
			return eerr
		}
		return errors.New("encountered errors during gc run")
	}
	return err
}

// repoSize is the bytes of the files in the repo directory, the store's
// reserve (storage.ReserveName) left out.
func repoSize(dir string) uint64 {
	var n uint64
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	for _, e := range entries {
		if e.Name() == storage.ReserveName {
			continue // space kept aside for a full disk, not data
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += uint64(fi.Size())
		}
	}
	return n
}

func runRepoStat(r *rpc.Request, e rpc.Emitter) error {
	st, err := r.Node.Store.Stat()
	if err != nil {
		return err
	}
	out := &RepoStat{RepoSize: repoSize(r.Node.Repo), StorageMax: r.Node.Storage().Max()}
	if out.StorageMax == 0 {
		out.StorageMax = ^uint64(0)
	}
	if !r.Bool("size-only") {
		abs, _ := filepath.Abs(r.Node.Repo)
		out.NumObjects = st.NumBlocks
		out.RepoPath = abs
		out.Version = "fs-repo@" + node.RepoVersion
	}
	return e.Emit(out)
}

func repoStatText(t *rpc.TextEnv, v any) error {
	s := v.(*RepoStat)
	human := t.Req != nil && t.Req.Bool("human")
	size := func(n uint64) string {
		if human {
			return humanize.Bytes(n)
		}
		return fmt.Sprint(n)
	}
	sizeOnly := t.Req != nil && t.Req.Bool("size-only")
	if !sizeOnly {
		fmt.Fprintf(t.Out, "NumObjects: %d\n", s.NumObjects)
	}
	fmt.Fprintf(t.Out, "RepoSize:   %s\n", size(s.RepoSize))
	if s.StorageMax != ^uint64(0) {
		fmt.Fprintf(t.Out, "StorageMax: %s\n", size(s.StorageMax))
	}
	if !sizeOnly {
		fmt.Fprintf(t.Out, "RepoPath:   %s\nVersion:    %s\n", s.RepoPath, s.Version)
	}
	return nil
}

func runRepoVerify(r *rpc.Request, e rpc.Emitter) error {
	bad := 0
	var emitErr error
	err := r.Node.Block().Verify(r.Ctx, func(c cid.Cid, err error) {
		bad++
		if emitErr == nil {
			emitErr = e.Emit(&VerifyProgress{Msg: fmt.Sprintf("block %s was corrupt (%s)", c, err)})
		}
	}, func(n int) {
		// One line per block, as Kubo streams them.
		if emitErr == nil {
			emitErr = e.Emit(&VerifyProgress{Progress: n})
		}
	})
	if err != nil {
		return err
	}
	if emitErr != nil {
		return emitErr
	}
	if bad > 0 {
		return fmt.Errorf("verify complete, %d blocks corrupt", bad)
	}
	return e.Emit(&VerifyProgress{Msg: "verify complete, all blocks validated."})
}

func runRepoFsck(r *rpc.Request, e rpc.Emitter) error {
	dir := repoDir(r)
	lk, err := node.LockRepo(dir)
	if err != nil {
		if errors.Is(err, node.ErrRepoLocked) {
			return errors.New("cannot run fsck while a cairn daemon is running on this repo")
		}
		return err
	}
	lk.Unlock()
	for _, f := range []string{node.LockFile, node.APIFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return e.Emit(&MessageOutput{Message: "Lockfiles have been removed."})
}
