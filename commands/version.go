// version.go: the version and version/deps commands.

package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
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
	versionCheckCommand,
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

// VersionCheckOutput is the output of version check (Kubo 0.43's shape).
type VersionCheckOutput struct {
	UpdateAvailable    bool
	RunningVersion     string
	GreatestVersion    string
	PeersSampled       int
	WithGreaterVersion int
}

// defaultVersionCheckPercent is Kubo's Version.SwarmCheckPercentThreshold
// default.
const defaultVersionCheckPercent = 5

var versionCheckCommand = &rpc.Command{
	Path:     "version/check",
	Synopsis: "Checks cairn version against connected peers.",
	Help: `This command uses the libp2p identify protocol to check the 'AgentVersion'
of the peers in the DHT's routing tables and see if the cairn version we're
running is outdated (as Kubo's checks its peers running kubo/).

Peers with an AgentVersion that doesn't start with 'cairn/' are ignored;
so are pre-releases. 'UpdateAvailable' is set to true only if the
'min-percent' criteria are met.`,
	Options: []rpc.Option{{Names: []string{"min-percent", "t"}, Type: rpc.Int, Default: defaultVersionCheckPercent,
		Help: "Percentage (1-100) of sampled peers with the new cairn version needed to trigger an update warning."}},
	Output: rpc.OutSingle,
	Run:    runVersionCheck,
	Type:   func() any { return &VersionCheckOutput{} },
}

func runVersionCheck(r *rpc.Request, e rpc.Emitter) error {
	nt, err := online(r)
	if err != nil {
		return err
	}
	ours, ok := coreVersion(node.Version)
	if !ok {
		return fmt.Errorf("could not parse our own version %q", node.Version)
	}
	if nt.DHT == nil {
		return errors.New("could not perform version check due to missing or incompatible DHT configuration")
	}
	minPercent := int(r.Int("min-percent"))
	if minPercent == 0 {
		minPercent = defaultVersionCheckPercent
	}
	if minPercent < 1 || minPercent > 100 {
		return errors.New("Version.SwarmCheckPercentThreshold must be between 1 and 100")
	}
	greatest, sampled, greater := ours, 1, 0
	rt := nt.DHT.WAN.RoutingTable()
	if rt.Size() == 0 {
		rt = nt.DHT.LAN.RoutingTable()
	}
	for _, p := range rt.ListPeers() {
		v, err := nt.Host.Peerstore().Get(p, "AgentVersion")
		if err != nil {
			continue
		}
		s, _ := v.(string)
		name, rest, _ := strings.Cut(s, "/")
		if name != "cairn" {
			continue
		}
		pv, ok := coreVersion(strings.SplitN(rest, "/", 2)[0])
		if !ok {
			continue
		}
		sampled++
		if versionLess(ours, pv) {
			greater++
		}
		if versionLess(greatest, pv) {
			greatest = pv
		}
	}
	return e.Emit(&VersionCheckOutput{
		UpdateAvailable:    float64(greater)/float64(sampled) >= float64(minPercent)/100,
		RunningVersion:     versionString(ours),
		GreatestVersion:    versionString(greatest),
		PeersSampled:       sampled,
		WithGreaterVersion: greater,
	})
}

// coreVersion parses MAJOR.MINOR.PATCH; a pre-release or build suffix
// ("-rc1", "+dirty") is refused, as Kubo ignores such peers.
func coreVersion(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func versionLess(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func versionString(v [3]int) string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }
