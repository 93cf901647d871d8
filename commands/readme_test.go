package commands_test

import (
	"os"
	"strings"
	"testing"

	"cairn/commands"
)

// Ensure the README's command table is the one the code generates.
func TestREADME_CommandTable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const begin, end = "<!-- commands:begin -->\n", "<!-- commands:end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatal("README has no command table markers")
	}
	got := s[i+len(begin) : j]
	if want := commands.READMETable(); got != want {
		t.Fatalf("README command table is stale; regenerate it with go run ./scripts/cmdtable.\ngot:\n%s\nwant:\n%s", got, want)
	}
}
