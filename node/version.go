// version.go: cairn's version and the agent string it gives peers and
// HTTP servers.

package node

// Version is cairn's own semver (the Kubo CLI parses it as semver).
// Commit is set at build time with -ldflags "-X cairn/node.Commit=...".
var (
	Version = "0.1.0"
	Commit  = ""
)

// AgentVersion is what id reports, identify announces (unless the daemon
// adds a suffix) and the delegated publishers get as User-Agent, as Kubo
// sends its own ("kubo/0.42.0/<commit>").
func AgentVersion() string {
	v := "cairn/" + Version
	if Commit != "" {
		v += "/" + Commit
	}
	return v
}
