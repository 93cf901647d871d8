// readme.go: the command table of docs/commands.md, generated from the
// table so the two cannot disagree (a test compares them).

package commands

import (
	"fmt"
	"strings"

	"cairn/rpc"
)

// READMETable renders every command as a markdown table row with its
// status, implemented or not yet (answers an error), for docs/commands.md:
// the RPC reference's commands first, in its order, then the rest.
func READMETable() string {
	var b strings.Builder
	b.WriteString("| command | status | notes |\n|---|---|---|\n")
	seen := map[string]bool{}
	row := func(c *rpc.Command) {
		status := "implemented"
		note := c.Synopsis
		if c.Pending {
			status = "not yet"
			note = "answers `cairn: '" + strings.ReplaceAll(c.Path, "/", " ") + "' is not implemented yet`"
		}
		if c.NoRemote {
			note += " (CLI only, 404 over HTTP as in Kubo)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Path, status, note)
	}
	for _, p := range SeedCommands {
		if c := DefaultTable.Find(p); c != nil {
			row(c)
			seen[p] = true
		}
	}
	for _, c := range DefaultTable.Commands() {
		if !seen[c.Path] {
			row(c)
		}
	}
	return b.String()
}
