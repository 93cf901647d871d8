// main.go: the CLI entry point: global options, choosing between the daemon
// and an in-process node, and running one command.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"cairn/commands"
	"cairn/node"
	"cairn/rpc"

	"golang.org/x/term"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process exit, for tests.
func run(argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(argv) > 0 {
		switch argv[0] {
		case "init":
			return cmdInit(argv[1:], stdout, stderr)
		case "daemon":
			return cmdDaemon(argv[1:], stdout, stderr)
		}
	}
	t := commands.DefaultTable
	inv, err := parseArgs(t, argv)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n\n", err)
		usage(stderr, t, nil, "")
		return 1
	}
	if inv.cmd == nil || inv.help {
		usage(stdout, t, inv.node, inv.path)
		if inv.cmd == nil && inv.path == "" && !inv.help {
			return 1
		}
		return 0
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := execute(ctx, t, inv, stdin, stdout, stderr); err != nil {
		var we *rpc.Error
		msg := err.Error()
		if errors.As(err, &we) {
			msg = we.Message
		}
		fmt.Fprintf(stderr, "Error: %s\n", msg)
		return 1
	}
	return 0
}

func repoPath(inv *invocation) string {
	if p := inv.opts["config"]; p != "" {
		return p
	}
	if p := inv.opts["repo-dir"]; p != "" {
		return p
	}
	return node.DefaultRepoPath()
}

func isTTY(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

// execute runs inv remotely when a daemon is known, else in-process.
func execute(ctx context.Context, t *rpc.Table, inv *invocation, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := inv.cmd
	repo := repoPath(inv)
	req := &rpc.Request{Ctx: ctx, Command: cmd, Opts: map[string]any{}}
	tenv := &rpc.TextEnv{Out: stdout, Err: stderr, Req: req, TTY: isTTY(stderr)}

	if cmd.PreRun != nil {
		cmd.PreRun(inv.opts, tenv) // client-side defaults
	}
	opts, err := typedOptions(t, inv)
	if err != nil {
		return err
	}
	req.Opts = opts

	args, dir, total, err := cliArgs(cmd, inv, stdin)
	if err != nil {
		return err
	}
	if total > 0 {
		req.Opts[commands.OptTotalSize] = total
	}
	req.Args, req.Files = args, dir

	api := inv.opts["api"]
	explicitAPI := api != ""
	if api == "" && !cmd.NoRepo {
		if a, err := node.ReadAPIFile(repo); err == nil {
			api = a
		}
	}
	if api != "" && !cmd.NoRemote {
		if cmd.EncodeArgs != nil {
			req.Args = cmd.EncodeArgs(req.Args)
		}
		err := runRemote(ctx, api, inv, req, tenv)
		if err == nil || explicitAPI || !errors.Is(err, rpc.ErrConnRefused) {
			return err
		}
		// Stale api file: the daemon is gone; run here.
	}
	if cmd.NoLocal {
		return node.ErrOffline
	}
	return runLocal(ctx, repo, req, tenv, inv)
}

func typedOptions(t *rpc.Table, inv *invocation) (map[string]any, error) {
	var pairs []rpc.KV
	for k, v := range inv.opts {
		pairs = append(pairs, rpc.KV{Key: k, Value: v})
	}
	for k, vs := range inv.list {
		for _, v := range vs {
			pairs = append(pairs, rpc.KV{Key: k, Value: v})
		}
	}
	return rpc.DecodeOptions(t.OptionsFor(inv.path), pairs)
}

func runRemote(ctx context.Context, api string, inv *invocation, req *rpc.Request, tenv *rpc.TextEnv) error {
	c, err := rpc.NewClient(api, inv.opts["api-auth"], "cairn/"+node.Version)
	if err != nil {
		return err
	}
	send := url.Values{}
	for k, v := range inv.opts {
		switch k {
		case "api", "api-auth", "config", "repo-dir", "encoding":
			continue
		}
		send.Set(k, v)
	}
	// Lists travel as repeated keys (ignore rules are applied here, to
	// the files sent).
	for k, vs := range inv.list {
		if k != "ignore" {
			send[k] = vs
		}
	}
	resp, err := c.SendQuery(ctx, req.Command, req.Args, send, req.Files)
	if err != nil {
		return err
	}
	defer resp.Close()
	if resp.Bytes {
		if co := req.Command.ClientOutput; co != nil {
			if err := co(req, resp.Body(), tenv.Out); err != nil {
				if terr := resp.Trailer(); terr != nil {
					return terr
				}
				return err
			}
			return resp.Trailer()
		}
		if _, err := io.Copy(tenv.Out, resp.Body()); err != nil {
			return err
		}
		return resp.Trailer()
	}
	jsonOut := inv.opts["encoding"] == "json"
	for {
		v, err := resp.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := render(tenv, req.Command, v, jsonOut); err != nil {
			return err
		}
	}
	return renderDone(tenv, req.Command, jsonOut)
}

func render(t *rpc.TextEnv, cmd *rpc.Command, v any, jsonOut bool) error {
	if jsonOut || cmd.Text == nil {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(t.Out, "%s\n", b)
		return err
	}
	return cmd.Text(t, v)
}

func renderDone(t *rpc.TextEnv, cmd *rpc.Command, jsonOut bool) error {
	if jsonOut || cmd.TextDone == nil {
		return nil
	}
	return cmd.TextDone(t)
}

func runLocal(ctx context.Context, repo string, req *rpc.Request, tenv *rpc.TextEnv, inv *invocation) error {
	if !req.Command.NoRepo {
		n, err := node.New(repo, nil)
		if err != nil {
			if errors.Is(err, node.ErrNoRepo) {
				return fmt.Errorf("no cairn repo found in %s.\nplease run: 'cairn init'", repo)
			}
			return err
		}
		defer n.Close()
		req.Node = n
	}
	jsonOut := inv.opts["encoding"] == "json"
	em := &rpc.FuncEmitter{
		OnValue: func(v any) error { return render(tenv, req.Command, v, jsonOut) },
		OnBytes: tenv.Out,
	}
	if co := req.Command.ClientOutput; co != nil {
		// The command writes into a pipe that the client side consumes.
		pr, pw := io.Pipe()
		em.OnBytes = pw
		errc := make(chan error, 1)
		go func() {
			err := req.Command.Run(req, em)
			pw.CloseWithError(err)
			errc <- err
		}()
		cerr := co(req, pr, tenv.Out)
		pr.CloseWithError(io.ErrClosedPipe)
		if err := <-errc; err != nil {
			return err
		}
		return cerr
	}
	if err := req.Command.Run(req, em); err != nil {
		return err
	}
	return renderDone(tenv, req.Command, jsonOut)
}

// usage prints help for a command or a parent.
func usage(w io.Writer, t *rpc.Table, n *rpc.TreeNode, path string) {
	name := "cairn"
	if path != "" {
		name += " " + strings.ReplaceAll(path, "/", " ")
	}
	if n == nil {
		n = t.Root
	}
	if c := n.Cmd; c != nil {
		fmt.Fprintf(w, "USAGE\n  %s", name)
		for _, a := range c.Args {
			s := "<" + a.Name + ">"
			if a.Variadic {
				s += "..."
			}
			if !a.Required {
				s = "[" + s + "]"
			}
			fmt.Fprintf(w, " %s", s)
		}
		fmt.Fprintf(w, "\n\n  %s\n", c.Synopsis)
		if len(c.Args) > 0 {
			fmt.Fprintf(w, "\nARGUMENTS\n")
			for _, a := range c.Args {
				fmt.Fprintf(w, "  <%s> - %s\n", a.Name, a.Help)
			}
		}
		if len(c.Options) > 0 {
			fmt.Fprintf(w, "\nOPTIONS\n")
			for _, o := range c.Options {
				var names []string
				for _, nm := range o.Names {
					if len(nm) == 1 {
						names = append(names, "-"+nm)
					} else {
						names = append(names, "--"+nm)
					}
				}
				def := ""
				if o.Default != nil {
					def = fmt.Sprintf(" Default: %v.", o.Default)
				}
				fmt.Fprintf(w, "  %-28s %s - %s%s\n", strings.Join(names, ", "), o.Type, o.Help, def)
			}
		}
		if c.Help != "" {
			fmt.Fprintf(w, "\nDESCRIPTION\n  %s\n", strings.ReplaceAll(c.Help, "\n", "\n  "))
		}
	} else {
		fmt.Fprintf(w, "USAGE\n  %s <command> ...\n", name)
	}
	if len(n.Children) > 0 {
		fmt.Fprintf(w, "\nSUBCOMMANDS\n")
		for _, c := range t.Commands() {
			prefix := path
			if prefix != "" {
				prefix += "/"
			}
			if !strings.HasPrefix(c.Path, prefix) || strings.Contains(strings.TrimPrefix(c.Path, prefix), "/") {
				continue
			}
			fmt.Fprintf(w, "  %-30s %s\n", "cairn "+strings.ReplaceAll(c.Path, "/", " "), c.Synopsis)
		}
		if path == "" {
			fmt.Fprintf(w, "  %-30s %s\n  %-30s %s\n", "cairn init", "Initialize a repo.", "cairn daemon", "Run a network-connected node.")
		}
	}
	fmt.Fprintf(w, "\n  Use 'cairn <command> --help' for more information about a command.\n")
	_ = filepath.Separator
}
