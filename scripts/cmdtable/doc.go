// Command cmdtable prints the README's command table from the command
// table itself (commands.DefaultTable): implemented or not yet.
//
//	go run ./scripts/cmdtable > /tmp/table.md
package main
