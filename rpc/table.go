// table.go: the command tree built from the declared commands. The HTTP
// server, the CLI, local execution and /api/v0/commands all read it.

package rpc

import (
	"sort"
	"strings"
	"sync"
)

// Table is the command tree built from the declared commands.
type Table struct {
	Root *TreeNode
	// Global options apply to every command.
	Global []Option

	options sync.Map // path => []Option (OptionsFor), filled on demand
}

// TreeNode is one path segment of the tree.
type TreeNode struct {
	Name     string
	Cmd      *Command // nil for pure parents ("pin", "swarm")
	Children map[string]*TreeNode
}

// NewTable builds the tree; it panics on a duplicate path (static data).
func NewTable(global []Option, cmds ...[]*Command) *Table {
	t := &Table{Root: &TreeNode{}, Global: global}
	for _, list := range cmds {
		for _, c := range list {
			n := t.Root
			for seg := range strings.SplitSeq(c.Path, "/") {
				ch := n.Children[seg]
				if ch == nil {
					// A leaf's Children stays nil: most nodes are leaves.
					ch = &TreeNode{Name: seg}
					if n.Children == nil {
						n.Children = map[string]*TreeNode{}
					}
					n.Children[seg] = ch
				}
				n = ch
			}
			if n.Cmd != nil {
				panic("rpc: duplicate command " + c.Path)
			}
			n.Cmd = c
		}
	}
	return t
}

// Lookup walks segs as far as they name commands. It returns the node
// reached and how many segments were used.
func (t *Table) Lookup(segs []string) (*TreeNode, int) {
	n := t.Root
	i := 0
	for ; i < len(segs); i++ {
		ch := n.Children[segs[i]]
		if ch == nil {
			break
		}
		n = ch
	}
	return n, i
}

// Find returns the command at path, or nil.
func (t *Table) Find(path string) *Command {
	n, used := t.Lookup(strings.Split(path, "/"))
	if used != len(strings.Split(path, "/")) {
		return nil
	}
	return n.Cmd
}

// Commands lists every command, sorted by path.
func (t *Table) Commands() []*Command {
	var out []*Command
	var walk func(n *TreeNode)
	walk = func(n *TreeNode) {
		if n.Cmd != nil {
			out = append(out, n.Cmd)
		}
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(t.Root)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// OptionsFor returns the options valid for a command: global ones, then
// those of each command on its path (options of "files" apply to
// "files/write"). The list is computed once per path and shared: callers
// must not change its elements (its capacity is its length, so an append
// copies).
func (t *Table) OptionsFor(path string) []Option {
	if o, ok := t.options.Load(path); ok {
		return o.([]Option)
	}
	opts := t.optionsFor(path)
	opts = opts[:len(opts):len(opts)]
	t.options.Store(path, opts)
	return opts
}

func (t *Table) optionsFor(path string) []Option {
	opts := append([]Option{}, t.Global...)
	segs := strings.Split(path, "/")
	n := t.Root
	for _, s := range segs {
		n = n.Children[s]
		if n == nil {
			break
		}
		if n.Cmd != nil {
			opts = append(opts, n.Cmd.Options...)
		}
	}
	return opts
}
