package commands_test

import (
	"os/exec"
	"strings"
	"testing"

	"cairn/internal/testutil"
)

// complete runs the bash completion script with the words typed so far
// (the last one being completed) and returns what it offers.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	var q []string
	for _, w := range words {
		q = append(q, "'"+w+"'")
	}
	prog := script + "\nCOMP_WORDS=(cairn " + strings.Join(q, " ") + ")\nCOMP_CWORD=" +
		string(rune('0'+len(words))) + "\n_cairn\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command("bash", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// Ensure the bash script generated from the table completes commands,
// subcommands and the options of the command typed, and that the zsh and
// fish scripts name the same commands.
func TestCommandsCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on this machine")
	}
	n := testutil.MustOpenNode(t)
	bash := string(mustCall(t, n, "commands/completion/bash", nil, nil, nil).Bytes)
	if got := complete(t, bash, "fil"); strings.Join(got, " ") != "file files filestore" {
		t.Errorf("cairn fil<TAB>: %v", got)
	}
	if got := complete(t, bash, "files", "ch"); strings.Join(got, " ") != "chcid chmod chroot" {
		t.Errorf("cairn files ch<TAB>: %v", got)
	}
	got := complete(t, bash, "add", "--raw")
	if strings.Join(got, " ") != "--raw-leaves" {
		t.Errorf("cairn add --raw<TAB>: %v", got)
	}
	if got := complete(t, bash, "name", "put", "--api"); strings.Join(got, " ") != "--api --api-auth" {
		t.Errorf("global options after name put: %v", got)
	}
	if got := complete(t, bash, "pin", "add", "-r", "x"); len(got) != 0 {
		t.Errorf("an argument of pin add: %v", got)
	}
	zsh := string(mustCall(t, n, "commands/completion/zsh", nil, nil, nil).Bytes)
	fish := string(mustCall(t, n, "commands/completion/fish", nil, nil, nil).Bytes)
	if !strings.Contains(zsh, "bashcompinit") || !strings.Contains(zsh, "'cairn files' '") {
		t.Errorf("zsh script:\n%.400s", zsh)
	}
	if !strings.Contains(fish, "complete -c cairn -n '__cairn_at \\'cairn files\\'' -a 'chroot' -d 'Change the MFS root CID.'") ||
		!strings.Contains(fish, "-l 'raw-leaves'") {
		t.Errorf("fish script lacks files chroot or add --raw-leaves:\n%.600s", fish)
	}
}
