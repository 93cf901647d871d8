package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"cairn/node"
)

// Ensure init and daemon print Kubo-style help (USAGE, OPTIONS,
// DESCRIPTION), not Go's flag package output.
func TestCLI_InitDaemon_HelpKuboStyle(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"init", "--help"}, []string{"USAGE\n  cairn init [<default-config>]\n", "\nARGUMENTS\n  <default-config> - Initialize with the given configuration.",
			"\nOPTIONS\n", "  --algorithm, -a", "  --bits, -b", "  --empty-repo, -e", "  --profile, -p", "--board", "\nDESCRIPTION\n  Initializes cairn configuration files"}},
		{[]string{"init", "-h"}, []string{"USAGE\n  cairn init"}},
		{[]string{"daemon", "--help"}, []string{"USAGE\n  cairn daemon\n", "  Run a network-connected node.", "--init-profile", "--routing", "--enable-gc",
			"--enable-pubsub-experiment", "--enable-namesys-pubsub", "--migrate", "--mount", "--manage-fdlimit", "--unrestricted-api",
			"--enable-mplex-experiment", "--agent-version-suffix", "\nDESCRIPTION\n  'cairn daemon' runs a persistent cairn daemon"}},
	} {
		out, errs, code := cli(t, repo, nil, tc.args...)
		if code != 0 || errs != "" {
			t.Fatalf("%v: code %d, stderr %q", tc.args, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: help lacks %q:\n%s", tc.args, w, out)
			}
		}
		if strings.Contains(out, "Usage of") || strings.Contains(out, "-board string") {
			t.Errorf("%v: Go flag output:\n%s", tc.args, out)
		}
	}
	if _, err := os.Stat(repo); err == nil {
		t.Fatal("help created a repo")
	}
	_, errs, code := cli(t, repo, nil, "init", "--nope")
	if code != 1 || !strings.Contains(errs, `Error: unknown option "nope"`) || !strings.Contains(errs, "USAGE\n  cairn init") {
		t.Fatalf("unknown option: %d %q", code, errs)
	}
}

var readmeCmd = regexp.MustCompile(`\n\tcairn cat (/ipfs/\w+/readme)\n`)

// Ensure init --empty-repo=false (Kubo's -e default is true) adds the
// welcome documents, and the command it prints works; by default the repo
// stays empty and no such command is printed.
func TestInit_WelcomeDocs_PrintedCommandWorks(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	out, errs, code := cli(t, repo, nil, "init", "--profile=test", "--empty-repo=false")
	m := readmeCmd.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("init: %d %q %q", code, out, errs)
	}
	got, errs, code := cli(t, repo, nil, "cat", m[1])
	if code != 0 || !strings.HasPrefix(got, "Hello and welcome to cairn!") {
		t.Fatalf("cat %s: %d %q %q", m[1], code, got, errs)
	}
	pins, _, _ := cli(t, repo, nil, "pin", "ls", "--type=recursive", "-q")
	root := strings.TrimSuffix(strings.TrimPrefix(m[1], "/ipfs/"), "/readme")
	if got := sortedLines(pins); got != sortedLines(root+"\n"+emptyDir+"\n") {
		t.Fatalf("recursive pins after init --empty-repo=false: %q, want the welcome docs %s and the empty directory", pins, root)
	}
	for _, args := range [][]string{{"init", "--profile=test"}, {"init", "--profile=test", "-e"}} {
		repo := filepath.Join(t.TempDir(), "repo")
		out, errs, code := cli(t, repo, nil, args...)
		if code != 0 || strings.Contains(out, "cairn cat") {
			t.Fatalf("%v: %d %q %q", args, code, out, errs)
		}
		if pins, _, _ := cli(t, repo, nil, "pin", "ls", "-q"); pins != emptyDir+"\n" {
			t.Fatalf("%v: pins %q, want only the empty directory", args, pins)
		}
	}
}

// emptyDir is the CID of the empty UnixFS directory.
const emptyDir = "QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn"

func sortedLines(s string) string {
	l := strings.Fields(s)
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// Ensure init, and daemon --init, seed the repo as Kubo 0.43's init does:
// the empty directory pinned recursively and no name record, so /ipns/<self>
// does not resolve before the first name publish.
func TestInit_PinsEmptyDir_PublishesNoName(t *testing.T) {
	repo := initRepo(t)
	id, _, _ := cli(t, repo, nil, "id", "-f", "<id>")
	for _, name := range []string{"", strings.TrimSpace(id)} {
		args := []string{"name", "resolve"}
		if name != "" {
			args = append(args, name)
		}
		out, errs, code := cli(t, repo, nil, args...)
		if code == 0 || out != "" || errs != "Error: could not resolve name\n" {
			t.Fatalf("%v on a fresh repo: %d %q %q", args, code, out, errs)
		}
	}
	if out, errs, code := cli(t, repo, nil, "pin", "ls", "--type=recursive"); code != 0 || out != emptyDir+" recursive\n" {
		t.Fatalf("pin ls on a fresh repo: %d %q %q", code, out, errs)
	}

	repo = filepath.Join(t.TempDir(), "repo")
	cmd := exec.Command(os.Args[0], "daemon", "--init", "--init-profile=test", "--offline")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1", "CAIRN_PATH="+repo)
	var dout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &dout, &dout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for a, _ := node.ReadAPIFile(repo); a == ""; a, _ = node.ReadAPIFile(repo) {
		if time.Now().After(deadline) {
			t.Fatalf("daemon --init did not start: %s", dout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, errs, code := cli(t, repo, nil, "pin", "ls", "--type=recursive"); code != 0 || out != emptyDir+" recursive\n" {
		t.Fatalf("pin ls after daemon --init: %d %q %q", code, out, errs)
	}
	if _, errs, code := cli(t, repo, nil, "name", "resolve"); code == 0 || !strings.Contains(errs, "could not resolve name") {
		t.Fatalf("name resolve after daemon --init: %d %q", code, errs)
	}
}

// Ensure init takes Kubo's key flags and a config file argument.
func TestInit_KuboFlags_AlgorithmAndConfigFile(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	out, errs, code := cli(t, repo, nil, "init", "-p", "test", "-a", "rsa", "-b", "2048")
	if code != 0 || !strings.Contains(out, "generating 2048-bit RSA keypair...done\npeer identity: Qm") {
		t.Fatalf("rsa: %d %q %q", code, out, errs)
	}
	if _, errs, code := cli(t, filepath.Join(t.TempDir(), "r"), nil, "init", "-a", "dsa"); code != 1 || !strings.Contains(errs, "unrecognized key type: dsa") {
		t.Fatalf("dsa: %d %q", code, errs)
	}
	if _, errs, code := cli(t, filepath.Join(t.TempDir(), "r"), nil, "init", "-a", "rsa", "-b", "1024"); code != 1 || !strings.Contains(errs, "Error: ") {
		t.Fatalf("rsa 1024: %d %q", code, errs)
	}
	// A config file: its identity and settings are kept, profiles apply.
	cfg := loadConfig(t, repo)
	cfg.Datastore.StorageMax = "3GB"
	b, _ := json.Marshal(cfg)
	file := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(file, b, 0o600)
	repo2 := filepath.Join(t.TempDir(), "repo")
	out, errs, code = cli(t, repo2, nil, "init", "--profile=test", file)
	if code != 0 || !strings.Contains(out, "peer identity: "+cfg.Identity.PeerID) {
		t.Fatalf("config file: %d %q %q", code, out, errs)
	}
	if got := loadConfig(t, repo2); got.Identity.PeerID != cfg.Identity.PeerID || got.Datastore.StorageMax != "3GB" {
		t.Fatalf("config from file: %+v", got.Datastore)
	}
	os.WriteFile(file, []byte(`{"Identity":{}}`), 0o600)
	if _, errs, code := cli(t, filepath.Join(t.TempDir(), "r"), nil, "init", file); code != 1 || !strings.Contains(errs, "identity") {
		t.Fatalf("config file without identity: %d %q", code, errs)
	}
}

// Ensure the daemon accepts every flag of Kubo 0.42's daemon: the ones
// cairn cannot honour fail with a message naming the feature, the others
// start it.
func TestDaemon_KuboFlags(t *testing.T) {
	repo := initRepo(t)
	for _, tc := range []struct {
		flag, want string
	}{
		{"--mount", "Error: mount is not currently supported in offline mode"},
		{"--disable-transport-encryption", "Error: --disable-transport-encryption: cairn always encrypts"},
		{"--routing=delegated", "Error: --routing=delegated is not supported by cairn"},
		{"--routing=bogus", "Error: unrecognized routing option: bogus"},
	} {
		_, errs, code := cli(t, repo, nil, "daemon", "--offline", tc.flag)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: code %d %q, want %q", tc.flag, code, errs, tc.want)
		}
	}
	// Accepted flags: the daemon starts (offline, so nothing is dialled).
	d, _, out := startDaemonFlags(t, repo, []string{"--offline", "--migrate", "--manage-fdlimit=false", "--unrestricted-api",
		"--enable-mplex-experiment", "--enable-pubsub-experiment", "--enable-namesys-pubsub", "--mount-ipfs=/ipfs", "--routing=none", "--agent-version-suffix=test", "--enable-gc=false"})
	d.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, d, 10*time.Second); code != 0 || !strings.Contains(out.String(), "WARNING: --enable-mplex-experiment") {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	// --init with --init-profile makes the repo first.
	fresh := filepath.Join(t.TempDir(), "repo")
	d, _, out = startDaemonFlags(t, fresh, []string{"--init", "--init-profile=test", "--offline"})
	d.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, d, 10*time.Second); code != 0 || !strings.Contains(out.String(), "initialized cairn repo at "+fresh) {
		t.Fatalf("--init: exit %d: %s", code, out.String())
	}
}
