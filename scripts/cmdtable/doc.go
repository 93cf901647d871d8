// Command cmdtable prints the command table of docs/commands.md from the
// command table itself (commands.DefaultTable): implemented
// or not yet. scripts/update-command-table.sh writes it into the file.
//
//	go run ./scripts/cmdtable > /tmp/table.md
//
// main.go prints the table.
package main
