// version.go: the version and version/deps commands.

package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"cairn/node"
	"cairn/rpc"
)

// versionInfo is what version answers, with its JSON encoding; fixed
// once the program runs (Commit is set at link time). Shared: encoders
// only read it.
var versionInfo = sync.OnceValue(func() *VersionInfo {
	v := &VersionInfo{Version: node.Version, Commit: node.Commit, Repo: node.RepoVersion,
		System: runtime.GOARCH + "/" + runtime.GOOS, Golang: runtime.Version()}
	b, err := json.Marshal(v)
	if err == nil {
		v.encoded = b
	}
	return v
})

var versionCommands = []*rpc.Command{
	{
		Path:     "version",
		Synopsis: "Show cairn version information.",
		Help:     "Returns the current version of cairn and exits.",
		Options: []rpc.Option{
			{Names: []string{"number", "n"}, Type: rpc.Bool, Help: "Only show the version number."},
			{Names: []string{"commit"}, Type: rpc.Bool, Help: "Show the commit hash."},
			{Names: []string{"repo"}, Type: rpc.Bool, Help: "Show repo version."},
			{Names: []string{"all"}, Type: rpc.Bool, Help: "Show all version information"},
		},
		NoRepo: true,
		Output: rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			return e.Emit(versionInfo())
		},
		Type: func() any { return &VersionInfo{} },
		Text: versionText,
	},
	{
		Path:     "version/deps",
		Synopsis: "Shows information about dependencies used for build.",
		Output:   rpc.OutStream,
		NoRepo:   true,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
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
		Text: func(t *rpc.TextEnv, v any) error {
			d := v.(*Dependency)
			s := d.Path + "@" + d.Version
			if d.ReplacedBy != "" {
				s += " => " + d.ReplacedBy
			}
			_, err := fmt.Fprintln(t.Out, s)
			return err
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

	encoded []byte // json.Marshal's output, kept by versionInfo
}

// EncodedJSON is v's JSON encoding if versionInfo kept one (rpc.EncodedJSON).
func (v *VersionInfo) EncodedJSON() []byte { return v.encoded }

func versionText(t *rpc.TextEnv, v any) error {
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
