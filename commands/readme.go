// readme.go: the README's command table, generated from the table so the
// two cannot disagree (a test compares them).

package commands

import (
	"fmt"
	"strings"

	"cairn/rpc"
)

// READMETable renders every command as a markdown table row with its
// status: implemented, not yet (answers an error), or cairn-only.
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
