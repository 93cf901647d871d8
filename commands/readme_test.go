package commands_test

import (
	"os"
	"strings"
	"testing"

	"cairn/commands"
)

// Ensure the command table of docs/commands.md is the one the code generates.
func TestCommandsDoc_CommandTable(t *testing.T) {
	b, err := os.ReadFile("../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const begin, end = "<!-- commands:begin -->\n", "<!-- commands:end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatal("docs/commands.md has no command table markers")
	}
	got := s[i+len(begin) : j]
	if want := commands.READMETable(); got != want {
		t.Fatalf("docs/commands.md command table is stale; regenerate it with scripts/update-command-table.sh.\ngot:\n%s\nwant:\n%s", got, want)
	}
}
