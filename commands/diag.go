// diag.go: the "diag" family: diag/healthy (Kubo 0.43), diag/sys,
// diag/cmds (and its clear and set-time), diag/profile, as Kubo's
// core/commands/diag.go, active.go and profile.go.

package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"cairn/node"
	"cairn/rpc"

	ft "github.com/ipfs/boxo/ipld/unixfs"
)

// diagHealthyProbe is the empty UnixFS directory, which init pins.
const diagHealthyProbe = "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn"

var diagCommands = []*rpc.Command{{
	Path:     "diag/healthy",
	Synopsis: "Report whether the daemon is operational.",
	Help: `Exits 0 if the daemon is running and can resolve the well-known empty
UnixFS directory. Exits non-zero if the DAG pipeline is broken (a store
that cannot read or write). The directory's block is stored again if it
was removed. Intended for container and systemd healthchecks.`,
	Output: rpc.OutSingle,
	Run: func(r *rpc.Request, e rpc.Emitter) error {
		c, err := resolveRoot(r.Ctx, r.Node, "/ipfs/"+diagHealthyProbe)
		if err != nil {
			return fmt.Errorf("probe resolve: %w", err)
		}
		has, err := r.Node.Blocks.Has(r.Ctx, c)
		if err != nil {
			return fmt.Errorf("probe fetch: %w", err)
		}
		if !has {
			if err := r.Node.DAG.Add(r.Ctx, ft.EmptyDirNode()); err != nil {
				return fmt.Errorf("probe store: %w", err)
			}
		}
		if _, err := r.Node.Block().Get(r.Ctx, c); err != nil {
			return fmt.Errorf("probe fetch: %w", err)
		}
		ok := "ok"
		return e.Emit(&ok)
	},
	Type: func() any { return new(string) },
	Text: func(t *rpc.TextEnv, v any) error {
		_, err := io.WriteString(t.Out, *v.(*string))
		return err
	},
}, {
	Path:     "diag/sys",
	Synopsis: "Print system diagnostic information.",
	Help:     `Prints out information about your computer to aid in easier debugging.`,
	Output:   rpc.OutSingle,
	Run:      runDiagSys,
	Type:     func() any { return &map[string]any{} },
	Text: func(t *rpc.TextEnv, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = t.Out.Write(append(b, '\n'))
		return err
	},
}, {
	Path:     "diag/cmds",
	Synopsis: "List commands run on this IPFS node.",
	Help:     "Lists running and recently run commands.",
	Options:  []rpc.Option{{Names: []string{"verbose", "v"}, Type: rpc.Bool, Help: "Print extra information."}},
	NoLocal:  true,
	Output:   rpc.OutSingle,
	Run: func(r *rpc.Request, e rpc.Emitter) error {
		l, err := requestLog(r)
		if err != nil {
			return err
		}
		return e.Emit(l.Report())
	},
	Type: func() any { return &[]*rpc.ReqLogEntry{} },
	Text: diagCmdsText,
}, {
	Path:     "diag/cmds/clear",
	Synopsis: "Clear inactive requests from the log.",
	NoLocal:  true,
	Output:   rpc.OutNone,
	Run: func(r *rpc.Request, e rpc.Emitter) error {
		l, err := requestLog(r)
		if err != nil {
			return err
		}
		l.ClearInactive()
		return nil
	},
}, {
	Path:     "diag/cmds/set-time",
	Synopsis: "Set how long to keep inactive requests in the log.",
	Args:     []rpc.Arg{{Name: "time", Kind: rpc.ArgString, Required: true, Help: "Time to keep inactive requests in log."}},
	NoLocal:  true,
	Output:   rpc.OutNone,
	Run: func(r *rpc.Request, e rpc.Emitter) error {
		// As Kubo: any Go duration, a negative one too (finished requests
		// then leave the log at its next cleanup).
		d, err := time.ParseDuration(r.Args[0])
		if err != nil {
			return err
		}
		l, err := requestLog(r)
		if err != nil {
			return err
		}
		l.SetKeepTime(d)
		return nil
	},
}, {
	Path:     "diag/profile",
	Synopsis: "Collect a performance profile for debugging.",
	Help: `Collects profiles from a running cairn daemon into a single zip file.
To aid in debugging, this command also attempts to include a copy of the
running cairn binary.

Profiles can be examined using 'go tool pprof'.

The output file includes: a list of running goroutines, a CPU profile, a
heap inuse profile, a heap allocation profile, a mutex profile, a block
profile, an execution trace, your copy of cairn and the output of
'cairn version --all'.

It does not include any of your IPFS data or metadata, your config or
private key, your IP address, or the contents of your computer's memory or
file system. It could reveal your build path, if you built cairn yourself,
whether and how a command or feature is used (from the running functions),
and memory offsets of data structures.

The RPC serves it only to callers API.Authorizations allows, like every
command.`,
	Options: []rpc.Option{
		{Names: []string{"output", "o"}, Type: rpc.String, Help: "The path where the output .zip should be stored. Default: ./cairn-profile-[timestamp].zip"},
		{Names: []string{"collectors"}, Type: rpc.StringList, Default: slices.Clone(profileCollectorNames),
			Help: "The list of collectors to use for collecting diagnostic data."},
		{Names: []string{"profile-time"}, Type: rpc.String, Default: "30s", Help: "The amount of time spent profiling. If this is set to 0, then sampling profiles are skipped."},
		{Names: []string{"mutex-profile-fraction"}, Type: rpc.Int, Default: 4, Help: "The fraction 1/n of mutex contention events that are reported in the mutex profile."},
		{Names: []string{"block-profile-rate"}, Type: rpc.String, Default: "1ms", Help: "The duration to wait between sampling goroutine-blocking events for the blocking profile."},
	},
	NoLocal:      true,
	Output:       rpc.OutBytes,
	ContentType:  func(*rpc.Request) string { return "application/zip" },
	Run:          runDiagProfile,
	ClientOutput: profileClientOutput,
}}

// requestLog is the daemon's request log; commands run in-process have
// none.
func requestLog(r *rpc.Request) (*rpc.ReqLog, error) {
	if r.Env == nil || r.Env.Requests == nil {
		return nil, node.ErrOffline
	}
	return r.Env.Requests, nil
}

func runDiagSys(r *rpc.Request, e rpc.Emitter) error {
	info, err := r.Node.SysInfo()
	if err != nil {
		return err
	}
	info["ipfs_version"] = node.Version
	info["ipfs_commit"] = node.Commit
	return e.Emit(info)
}

// diagCmdsText is Kubo's table: Command, Active, StartTime, RunTime (and
// ID, Arguments, Options with --verbose).
func diagCmdsText(t *rpc.TextEnv, v any) error {
	verbose := t.Req != nil && t.Req.Bool("verbose")
	tw := tabwriter.NewWriter(t.Out, 4, 4, 2, ' ', 0)
	if verbose {
		fmt.Fprint(tw, "ID\t")
	}
	fmt.Fprint(tw, "Command\t")
	if verbose {
		fmt.Fprint(tw, "Arguments\tOptions\t")
	}
	fmt.Fprintln(tw, "Active\tStartTime\tRunTime")
	for _, req := range *v.(*[]*rpc.ReqLogEntry) {
		if verbose {
			fmt.Fprintf(tw, "%d\t", req.ID)
		}
		fmt.Fprintf(tw, "%s\t", req.Command)
		if verbose {
			var opts strings.Builder
			for _, k := range slices.Sorted(maps.Keys(req.Options)) {
				fmt.Fprintf(&opts, "%s=%v,", k, req.Options[k])
			}
			fmt.Fprintf(tw, "%v\t[%s]\t", req.Args, opts.String())
		}
		live := req.EndTime.Sub(req.StartTime)
		if req.Active {
			live = time.Since(req.StartTime)
		}
		fmt.Fprintf(tw, "%t\t%s\t%s\n", req.Active, req.StartTime.Format(time.Stamp), live)
	}
	return tw.Flush()
}

func runDiagProfile(r *rpc.Request, e rpc.Emitter) error {
	var collectors []string
	for _, c := range r.Strings("collectors") {
		collectors = append(collectors, strings.Split(c, ",")...)
	}
	dur, err := time.ParseDuration(r.String("profile-time"))
	if err != nil {
		return fmt.Errorf("failed to parse profile duration %q: %w", r.String("profile-time"), err)
	}
	rate, err := time.ParseDuration(r.String("block-profile-rate"))
	if err != nil {
		return fmt.Errorf("failed to parse block profile rate %q: %w", r.String("block-profile-rate"), err)
	}
	return writeProfiles(r.Ctx, e, profileOptions{
		Collectors:           collectors,
		ProfileDuration:      dur,
		MutexProfileFraction: int(r.Int("mutex-profile-fraction")),
		BlockProfileRate:     rate,
	})
}

// profileTimeFormat is RFC 3339 without colons (valid in file names
// everywhere).
var profileTimeFormat = strings.ReplaceAll(time.RFC3339, ":", "_")

// profileClientOutput writes the zip to --output and says where, as
// Kubo's CLI.
func profileClientOutput(r *rpc.Request, body io.Reader, stdout io.Writer) error {
	path := r.String("output")
	if path == "" {
		path = "cairn-profile-" + time.Now().Format(profileTimeFormat) + ".zip"
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "Wrote profiles to: %s\n", path)
	return err
}
