// completion.go: commands completion bash|zsh|fish (Kubo 0.43): a shell
// completion script generated from the command table, so that it lists
// exactly the commands and options this build has.

package commands

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"cairn/rpc"
)

// complNode is one command path as the scripts see it: "cairn files ls",
// its subcommands, its options and its synopsis.
type complNode struct {
	path     string
	synopsis string
	subs     []string
	opts     []rpc.Option
}

// complTree lists every path of t under "cairn", parents before children.
func complTree(t *rpc.Table) []complNode {
	var out []complNode
	var walk func(n *rpc.TreeNode, path string)
	walk = func(n *rpc.TreeNode, path string) {
		cn := complNode{path: path}
		if n == t.Root {
			cn.opts = t.Global
		} else if n.Cmd != nil {
			cn.opts = n.Cmd.Options
			cn.synopsis = n.Cmd.Synopsis
		}
		for k := range n.Children {
			cn.subs = append(cn.subs, k)
		}
		sort.Strings(cn.subs)
		out = append(out, cn)
		for _, k := range cn.subs {
			walk(n.Children[k], path+" "+k)
		}
	}
	walk(t.Root, "cairn")
	return out
}

// optWords are an option's names as typed: --long and -s.
func optWords(o rpc.Option) []string {
	var w []string
	for _, n := range o.Names {
		if len(n) == 1 {
			w = append(w, "-"+n)
		} else {
			w = append(w, "--"+n)
		}
	}
	return w
}

func allOptWords(opts []rpc.Option) string {
	var w []string
	for _, o := range opts {
		w = append(w, optWords(o)...)
	}
	return strings.Join(w, " ")
}

// shQuote quotes s for bash, zsh and fish alike (single quotes; a quote
// inside ends the string, is escaped and reopens it).
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishQuote quotes s for fish, whose single quotes take \' and \\.
func fishQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// completionFunc is the shell function bash and zsh (through
// bashcompinit) share: it walks the words typed so far down the tree of
// _cairn_subs, then offers the options of the command reached (and the
// global ones) after a dash, else its subcommands; with nothing to offer,
// -o default falls back to file names.
const completionFunc = `_cairn() {
  local cur=${COMP_WORDS[COMP_CWORD]} path=cairn i w
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    [[ $w == -* ]] && continue
    [[ " ${_cairn_subs[$path]} " == *" $w "* ]] || break
    path="$path $w"
  done
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "${_cairn_opts[$path]} ${_cairn_opts[cairn]}" -- "$cur"))
  elif [[ -n ${_cairn_subs[$path]} ]]; then
    COMPREPLY=($(compgen -W "${_cairn_subs[$path]}" -- "$cur"))
  fi
}
complete -o default -F _cairn cairn
`

func writeBashCompletion(w io.Writer, tree []complNode, zsh bool) error {
	var b strings.Builder
	if zsh {
		b.WriteString("#compdef cairn\n# zsh completion for cairn: cairn commands completion zsh > ~/.zsh/_cairn\n")
		b.WriteString("autoload -U +X bashcompinit && bashcompinit\n")
	} else {
		b.WriteString("# bash completion for cairn: cairn commands completion bash > /etc/bash_completion.d/cairn\n")
	}
	// zsh spells an associative array's literal as key value pairs; bash
	// (before 5.1) only as [key]=value.
	entry := func(k, v string) string {
		if zsh {
			return "  " + shQuote(k) + " " + shQuote(v) + "\n"
		}
		return "  [" + shQuote(k) + "]=" + shQuote(v) + "\n"
	}
	decl := "declare -gA"
	if zsh {
		decl = "typeset -gA"
	}
	b.WriteString(decl + " _cairn_subs _cairn_opts\n_cairn_subs=(\n")
	for _, n := range tree {
		if len(n.subs) > 0 {
			b.WriteString(entry(n.path, strings.Join(n.subs, " ")))
		}
	}
	b.WriteString(")\n_cairn_opts=(\n")
	for _, n := range tree {
		if len(n.opts) > 0 {
			b.WriteString(entry(n.path, allOptWords(n.opts)))
		}
	}
	b.WriteString(")\n")
	b.WriteString(completionFunc)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFishCompletion(w io.Writer, tree []complNode) error {
	var b strings.Builder
	b.WriteString("# fish completion for cairn: cairn commands completion fish > ~/.config/fish/completions/cairn.fish\n")
	b.WriteString("set -g __cairn_paths")
	for _, n := range tree {
		b.WriteString(" " + fishQuote(n.path))
	}
	b.WriteString(`
# __cairn_at PATH: the words typed so far lead to the command PATH.
function __cairn_at
    set -l path cairn
    for w in (commandline -opc)[2..-1]
        string match -q -- '-*' $w; and continue
        contains -- "$path $w" $__cairn_paths; or break
        set path "$path $w"
    end
    test "$path" = "$argv[1]"
end
complete -c cairn -f
`)
	synopsis := make(map[string]string, len(tree))
	for _, n := range tree {
		synopsis[n.path] = n.synopsis
	}
	for _, n := range tree {
		cond := fishQuote("__cairn_at " + shQuote(n.path))
		for _, s := range n.subs {
			fmt.Fprintf(&b, "complete -c cairn -n %s -a %s -d %s\n", cond, fishQuote(s), fishQuote(synopsis[n.path+" "+s]))
		}
		for _, o := range n.opts {
			b.WriteString("complete -c cairn")
			if n.path != "cairn" {
				b.WriteString(" -n " + cond)
			}
			for _, name := range o.Names {
				if len(name) == 1 {
					b.WriteString(" -s " + fishQuote(name))
				} else {
					b.WriteString(" -l " + fishQuote(name))
				}
			}
			if o.Type != rpc.Bool {
				b.WriteString(" -r")
			}
			b.WriteString(" -d " + fishQuote(o.Help) + "\n")
		}
		if len(n.subs) == 0 {
			// A command without subcommands takes file names.
			fmt.Fprintf(&b, "complete -c cairn -n %s -F\n", cond)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func completionCommand(shell string, write func(io.Writer, []complNode) error) *rpc.Command {
	return &rpc.Command{
		Path:     "commands/completion/" + shell,
		Synopsis: "Generate " + shell + " shell completions.",
		Help: "Generates command completions for the " + shell + " shell, from the commands and\n" +
			"options this cairn has.\n\n" +
			"  > cairn commands completion " + shell + " > cairn-completion." + shell + "\n\n" +
			"then load that file from the shell's start-up (bash: source it from ~/.bashrc\n" +
			"or put it in /etc/bash_completion.d; zsh: a directory on $fpath as _cairn;\n" +
			"fish: ~/.config/fish/completions/cairn.fish).",
		NoRepo: true,
		Output: rpc.OutBytes,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			t := DefaultTable
			if r.Env != nil && r.Env.Table != nil {
				t = r.Env.Table
			}
			return write(e, complTree(t))
		},
	}
}

var completionCommands = []*rpc.Command{
	completionCommand("bash", func(w io.Writer, t []complNode) error { return writeBashCompletion(w, t, false) }),
	completionCommand("zsh", func(w io.Writer, t []complNode) error { return writeBashCompletion(w, t, true) }),
	completionCommand("fish", writeFishCompletion),
}
