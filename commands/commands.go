// commands.go: the commands command (the tree of commands and options).

package commands

import (
	"fmt"
	"sort"
	"strings"

	"cairn/rpc"
)

var commandsCommands = []*rpc.Command{
	{
		Path:     "commands",
		Synopsis: "List all available commands.",
		Options:  []rpc.Option{{Names: []string{"flags", "f"}, Type: rpc.Bool, Help: "Show command flags."}},
		NoRepo:   true,
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			t := DefaultTable
			if r.Env != nil && r.Env.Table != nil {
				t = r.Env.Table
			}
			// Kubo's clients look for the root by Kubo's name.
			ci := cmdTree(t, t.Root, "ipfs", r.Env != nil)
			return e.Emit(&ci)
		},
		Type: func() any { return &CommandInfo{} },
		Text: commandsText,
	},
}

// CommandInfo is the shape of /api/v0/commands.
type CommandInfo struct {
	Name        string
	Subcommands []CommandInfo
	Options     []OptionInfo
}

// OptionInfo lists an option's names, long first.
type OptionInfo struct {
	Names []string
}

func cmdTree(t *rpc.Table, n *rpc.TreeNode, name string, remote bool) CommandInfo {
	ci := CommandInfo{Name: name, Subcommands: []CommandInfo{}, Options: []OptionInfo{}}
	opts := t.Global
	if n.Cmd != nil {
		opts = n.Cmd.Options
	}
	for _, o := range opts {
		ci.Options = append(ci.Options, OptionInfo{Names: o.Names})
	}
	names := make([]string, 0, len(n.Children))
	for k := range n.Children {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ch := n.Children[k]
		if remote && ch.Cmd != nil && ch.Cmd.NoRemote {
			continue
		}
		ci.Subcommands = append(ci.Subcommands, cmdTree(t, ch, k, remote))
	}
	return ci
}

func commandsText(t *rpc.TextEnv, v any) error {
	ci := v.(*CommandInfo)
	flags := t.Req != nil && t.Req.Bool("flags")
	var lines []string
	var walk func(c *CommandInfo, prefix string, root bool)
	walk = func(c *CommandInfo, prefix string, root bool) {
		lines = append(lines, prefix)
		if flags && !root {
			for _, o := range c.Options {
				parts := make([]string, len(o.Names))
				for i, n := range o.Names {
					if len(n) > 1 {
						parts[i] = prefix + " --" + n
					} else {
						parts[i] = prefix + " -" + n
					}
				}
				lines = append(lines, strings.Join(parts, " / "))
			}
		}
		for i := range c.Subcommands {
			walk(&c.Subcommands[i], prefix+" "+c.Subcommands[i].Name, false)
		}
	}
	walk(ci, "cairn", true) // the program the user runs
	sort.Strings(lines)
	for _, l := range lines {
		if _, err := fmt.Fprintln(t.Out, l); err != nil {
			return err
		}
	}
	return nil
}
