// misc.go: version, commands and shutdown.

package httprpc

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"cairn/node"
)

// Version is cairn's own semver (the Kubo CLI parses it as semver).
// Commit is set at build time with -ldflags "-X cairn/httprpc.Commit=...".
var (
	Version = "0.1.0"
	Commit  = ""
)

// AgentVersion is what id reports.
func AgentVersion() string {
	v := "cairn/" + Version
	if Commit != "" {
		v += "/" + Commit
	}
	return v
}

var miscCommands = []*Command{
	{
		Path:     "version",
		Synopsis: "Show cairn version information.",
		Help:     "Returns the current version of cairn and exits.",
		Options: []Option{
			{Names: []string{"number", "n"}, Type: Bool, Help: "Only show the version number."},
			{Names: []string{"commit"}, Type: Bool, Help: "Show the commit hash."},
			{Names: []string{"repo"}, Type: Bool, Help: "Show repo version."},
			{Names: []string{"all"}, Type: Bool, Help: "Show all version information"},
		},
		NoRepo: true,
		Output: OutSingle,
		Run: func(r *Request, e Emitter) error {
			return e.Emit(&VersionInfo{Version: Version, Commit: Commit, Repo: node.RepoVersion,
				System: runtime.GOARCH + "/" + runtime.GOOS, Golang: runtime.Version()})
		},
		Type: func() any { return &VersionInfo{} },
		Text: versionText,
	},
	{
		Path:     "version/deps",
		Synopsis: "Shows information about dependencies used for build.",
		Output:   OutStream,
		NoRepo:   true,
		Run: func(r *Request, e Emitter) error {
			bi, ok := debug.ReadBuildInfo()
			if !ok {
				return errors.New("no embedded dependency information")
			}
			if err := e.Emit(depInfo(&bi.Main)); err != nil {
				return err
			}
			for _, d := range bi.Deps {
				if err := e.Emit(depInfo(d)); err != nil {
					return err
				}
			}
			return nil
		},
		Type: func() any { return &Dependency{} },
		Text: func(t *TextEnv, v any) error {
			d := v.(*Dependency)
			s := d.Path + "@" + d.Version
			if d.ReplacedBy != "" {
				s += " => " + d.ReplacedBy
			}
			_, err := fmt.Fprintln(t.Out, s)
			return err
		},
	},
	{
		Path:     "commands",
		Synopsis: "List all available commands.",
		Options:  []Option{{Names: []string{"flags", "f"}, Type: Bool, Help: "Show command flags."}},
		NoRepo:   true,
		Output:   OutSingle,
		Run: func(r *Request, e Emitter) error {
			t := DefaultTable
			if r.Env != nil && r.Env.Table != nil {
				t = r.Env.Table
			}
			ci := cmdTree(t, t.Root, "cairn", r.Env != nil)
			return e.Emit(&ci)
		},
		Type: func() any { return &CommandInfo{} },
		Text: commandsText,
	},
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

// VersionInfo is the body of version.
type VersionInfo struct {
	Version string
	Commit  string
	Repo    string
	System  string
	Golang  string
}

func versionText(t *TextEnv, v any) error {
	vi := v.(*VersionInfo)
	commit := ""
	if vi.Commit != "" {
		commit = "-" + vi.Commit
	}
	r := t.Req
	switch {
	case r != nil && r.Bool("all"):
		_, err := fmt.Fprintf(t.Out, "cairn version: %s%s\nRepo version: %s\nSystem version: %s\nGolang version: %s\n",
			vi.Version, commit, vi.Repo, vi.System, vi.Golang)
		return err
	case r != nil && r.Bool("repo"):
		_, err := fmt.Fprintln(t.Out, vi.Repo)
		return err
	}
	if r == nil || !r.Bool("commit") {
		commit = ""
	}
	if r != nil && r.Bool("number") {
		_, err := fmt.Fprintln(t.Out, vi.Version+commit)
		return err
	}
	_, err := fmt.Fprintf(t.Out, "cairn version %s%s\n", vi.Version, commit)
	return err
}

// Dependency is one line of version/deps.
type Dependency struct {
	Path       string
	Version    string
	ReplacedBy string
	Sum        string
}

func depInfo(m *debug.Module) *Dependency {
	d := &Dependency{Path: m.Path, Version: m.Version, Sum: m.Sum}
	if m.Replace != nil {
		d.ReplacedBy = m.Replace.Path + "@" + m.Replace.Version
	}
	return d
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

func cmdTree(t *Table, n *TreeNode, name string, remote bool) CommandInfo {
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

func commandsText(t *TextEnv, v any) error {
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
	walk(ci, ci.Name, true)
	sort.Strings(lines)
	for _, l := range lines {
		if _, err := fmt.Fprintln(t.Out, l); err != nil {
			return err
		}
	}
	return nil
}
