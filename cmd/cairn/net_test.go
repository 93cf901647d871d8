package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"cairn/node"
)

// startDaemonArgs starts `cairn daemon <args>` on repo and waits for its
// api file.
func startDaemonArgs(t *testing.T, repo string, args ...string) *syncBuffer {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"daemon"}, args...)...)
	cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1", "CAIRN_PATH="+repo)
	var out syncBuffer // written by the process's copier while the test reads it
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if a, _ := node.ReadAPIFile(repo); a != "" {
			return &out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("daemon did not start: %s", out.String())
	return nil
}

// Ensure the daemon goes online on its loopback swarm address (test
// profile), and stays offline with --offline.
func TestDaemon_OnlineAndOffline_Swarm(t *testing.T) {
	repo := initRepo(t)
	log := startDaemonArgs(t, repo)
	out, errs, code := cli(t, repo, nil, "swarm", "addrs", "listen")
	if code != 0 || !strings.HasPrefix(out, "/ip4/127.0.0.1/tcp/") {
		t.Fatalf("swarm addrs listen: %d %q %q", code, out, errs)
	}
	if !strings.Contains(log.String(), "Swarm listening on /ip4/127.0.0.1/tcp/") {
		t.Fatalf("daemon log: %s", log.String())
	}
	out, _, code = cli(t, repo, nil, "swarm", "peers")
	if code != 0 || out != "" {
		t.Fatalf("swarm peers of a lone node: %d %q", code, out)
	}

	repo2 := initRepo(t)
	startDaemonArgs(t, repo2, "--offline")
	_, errs, code = cli(t, repo2, nil, "swarm", "peers")
	if code != 1 || errs != "Error: this action must be run in online mode, try running 'ipfs daemon' first\n" {
		t.Fatalf("swarm peers on an offline daemon: %d %q", code, errs)
	}
}
