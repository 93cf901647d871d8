// files.go: turning command-line arguments into string arguments and a
// file tree, as Kubo's CLI does.

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"cairn/rpc"

	"github.com/ipfs/boxo/files"
)

// cliArgs splits inv.args into string arguments and a file tree for cmd.
// total is the byte count of the regular files (for progress bars).
func cliArgs(cmd *rpc.Command, inv *invocation, stdin io.Reader) (args []string, dir files.Directory, total int64, err error) {
	var fileDef *rpc.Arg
	nString := 0
	for i := range cmd.Args {
		if cmd.Args[i].Kind == rpc.ArgFile {
			fileDef = &cmd.Args[i]
		} else {
			nString++
		}
	}
	if fileDef == nil {
		args = inv.args
		if len(args) == 0 && len(cmd.Args) > 0 {
			last := cmd.Args[len(cmd.Args)-1]
			if last.Stdin && !isTTY(stdin) && stdin != nil {
				lines, err := readLines(stdin)
				if err != nil {
					return nil, nil, 0, err
				}
				args = lines
			}
		}
		if err := checkRequired(cmd, args); err != nil {
			return nil, nil, 0, err
		}
		return args, nil, 0, nil
	}
	// String arguments come first, then file paths.
	paths := inv.args
	if nString > 0 {
		if len(paths) < nString {
			return nil, nil, 0, checkRequired(cmd, paths)
		}
		args, paths = paths[:nString], paths[nString:]
	}
	entries, total, err := fileEntries(fileDef, inv, paths, stdin)
	if err != nil {
		return nil, nil, 0, err
	}
	if len(entries) == 0 {
		if fileDef.Required {
			return nil, nil, 0, fmt.Errorf("argument %q is required", fileDef.Name)
		}
		return args, nil, 0, nil
	}
	return args, files.NewSliceDirectory(entries), total, nil
}

func checkRequired(cmd *rpc.Command, args []string) error {
	n := 0
	for _, a := range cmd.Args {
		if a.Kind == rpc.ArgString && a.Required {
			if n >= len(args) {
				return fmt.Errorf("argument %q is required", a.Name)
			}
			n++
		}
	}
	return nil
}

func readLines(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if l := strings.TrimRight(sc.Text(), "\r"); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

func fileEntries(def *rpc.Arg, inv *invocation, paths []string, stdin io.Reader) ([]files.DirEntry, int64, error) {
	recursive := inv.opts["recursive"] == "true"
	hidden := inv.opts["hidden"] == "true"
	deref := inv.opts["dereference-symlinks"] == "true"
	derefArgs := deref || inv.opts["dereference-args"] == "true"
	filter, err := files.NewFilter(inv.opts["ignore-rules-path"], inv.list["ignore"], hidden)
	if err != nil {
		return nil, 0, err
	}
	var entries []files.DirEntry
	var total int64
	seen := map[string]string{}
	if len(paths) == 0 && def.Stdin && stdin != nil && !isTTY(stdin) {
		entries = append(entries, files.FileEntry(inv.opts["stdin-name"], files.NewReaderFile(stdin)))
		return entries, 0, nil
	}
	for _, p := range paths {
		if p == "-" {
			entries = append(entries, files.FileEntry(inv.opts["stdin-name"], files.NewReaderFile(stdin)))
			continue
		}
		p = filepath.Clean(p)
		if p == "." {
			if wd, err := os.Getwd(); err == nil {
				if r, err := filepath.EvalSymlinks(wd); err == nil {
					p = r
				}
			}
		}
		if derefArgs {
			r, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil, 0, err
			}
			p = r
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil, 0, err
		}
		if st.IsDir() {
			if !def.Recursive {
				return nil, 0, fmt.Errorf("invalid path '%s', argument '%s' does not support directories", p, def.Name)
			}
			if !recursive {
				return nil, 0, fmt.Errorf("'%s' is a directory, use the '-r' flag to specify directories", p)
			}
		}
		name := filepath.Base(p)
		if prev, dup := seen[name]; dup {
			if prev == p {
				continue
			}
			return nil, 0, fmt.Errorf("file name %s repeated under different import directories: %s and %s", name, prev, p)
		}
		seen[name] = p
		nd, err := files.NewSerialFileWithOptions(p, st, files.SerialFileOptions{Filter: filter, DereferenceSymlinks: deref})
		if err != nil {
			return nil, 0, err
		}
		if inv.opts["progress"] == "true" {
			total += treeSize(p, hidden)
		}
		entries = append(entries, files.FileEntry(name, nd))
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, total, nil
}

func treeSize(p string, hidden bool) int64 {
	var n int64
	_ = filepath.Walk(p, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if !hidden && path != p && strings.HasPrefix(info.Name(), ".") {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}
