// parse.go: argv against the command table (Kubo's CLI syntax).

package main

import (
	"fmt"
	"strings"

	"cairn/rpc"
)

// invocation is a parsed command line.
type invocation struct {
	path string        // "block/stat"
	cmd  *rpc.Command  // nil for a parent ("cairn pin")
	node *rpc.TreeNode // tree node reached
	args []string
	opts map[string]string // canonical name => raw value (as typed)
	list map[string][]string
	help bool
}

// parseArgs splits argv (without the program name) into command path,
// options and arguments. Options may appear anywhere; "--" ends them.
func parseArgs(t *rpc.Table, argv []string) (*invocation, error) {
	inv := &invocation{opts: map[string]string{}, list: map[string][]string{}}
	n := t.Root
	var segs []string
	i := 0
	// The command path is the leading words that name subcommands; global
	// flags may come before it.
	var pre []string
	for i < len(argv) {
		a := argv[i]
		if strings.HasPrefix(a, "-") && a != "-" {
			pre = append(pre, a)
			// A global option with a separate value.
			if !strings.Contains(a, "=") {
				if o, ok := findOpt(t.Global, strings.TrimLeft(a, "-")); ok && o.Type != rpc.Bool && i+1 < len(argv) {
					pre = append(pre, argv[i+1])
					i++
				}
			}
			i++
			continue
		}
		ch := n.Children[a]
		if ch == nil {
			break
		}
		n = ch
		segs = append(segs, a)
		i++
	}
	inv.node = n
	inv.path = strings.Join(segs, "/")
	inv.cmd = n.Cmd
	valid := t.Global
	if inv.path != "" {
		valid = t.OptionsFor(inv.path)
	}
	rest := append(pre, argv[i:]...)
	noMore := false
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if noMore || !strings.HasPrefix(a, "-") || a == "-" {
			inv.args = append(inv.args, a)
			continue
		}
		if a == "--" {
			noMore = true
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		long := strings.HasPrefix(a, "--")
		o, ok := findOpt(valid, name)
		if !ok && !long && len(name) > 1 && !hasVal {
			// -abc: several one-letter bool flags.
			all := true
			for _, r := range name {
				if oo, ok := findOpt(valid, string(r)); !ok || oo.Type != rpc.Bool {
					all = false
				}
			}
			if all {
				for _, r := range name {
					oo, _ := findOpt(valid, string(r))
					inv.opts[oo.Name()] = "true"
				}
				continue
			}
		}
		if !ok {
			return nil, fmt.Errorf("unknown option %q", name)
		}
		if o.Name() == "help" || o.Name() == "h" {
			inv.help = true
			continue
		}
		if !hasVal {
			if o.Type == rpc.Bool {
				val = "true"
			} else {
				if j+1 >= len(rest) {
					return nil, fmt.Errorf("missing argument for option %q", name)
				}
				j++
				val = rest[j]
			}
		}
		if _, err := rpc.ConvertOption(o, val); err != nil {
			return nil, err
		}
		if o.Type == rpc.StringList {
			inv.list[o.Name()] = append(inv.list[o.Name()], val)
			continue
		}
		if _, dup := inv.opts[o.Name()]; dup && o.Type != rpc.Bool {
			return nil, fmt.Errorf("option %q given more than once", o.Name())
		}
		inv.opts[o.Name()] = val
	}
	return inv, nil
}

func findOpt(opts []rpc.Option, name string) (rpc.Option, bool) {
	for _, o := range opts {
		for _, n := range o.Names {
			if n == name {
				return o, true
			}
		}
	}
	return rpc.Option{}, false
}
