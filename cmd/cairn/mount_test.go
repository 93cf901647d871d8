//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cairn/mount"
)

// Ensure daemon --mount mounts /ipfs and /ipns (the config's mount points
// unless --mount-ipfs/--mount-ipns), prints where as Kubo, serves files
// through them, that the mount command remounts elsewhere, and that the
// daemon unmounts when it stops.
func TestDaemon_Mount_FUSE(t *testing.T) {
	if err := mount.Check("Mounts.IPFS", t.TempDir()); err != nil {
		t.Skipf("SKIPPED: %v", err)
	}
	repo := initRepo(t)
	base := t.TempDir()
	dirs := map[string]string{}
	for _, d := range []string{"ipfs", "ipns", "ipfs2", "ipns2"} {
		dirs[d] = filepath.Join(base, d)
		os.Mkdir(dirs[d], 0o755)
	}
	// A daemon killed by a failing test cannot unmount: detach what it left.
	t.Cleanup(func() {
		for _, dir := range dirs {
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	setConfig(t, repo, map[string]any{"Mounts.IPFS": dirs["ipfs"]})
	d, url, out := startDaemonFlags(t, repo, []string{"--mount", "--mount-ipns=" + dirs["ipns"], "--routing=none"})
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "Daemon is ready") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "IPFS mounted at: "+dirs["ipfs"]+"\nIPNS mounted at: "+dirs["ipns"]+"\n") {
		t.Fatalf("mount lines: %s", out.String())
	}
	c, err := addHTTP(url, []byte("through fuse\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dirs["ipfs"], c)); err != nil || string(b) != "through fuse\n" {
		t.Fatalf("read through the mount: %q %v", b, err)
	}
	code, body := post(t, url+"/api/v0/mount?ipfs-path="+dirs["ipfs2"]+"&ipns-path="+dirs["ipns2"], nil)
	var got struct{ IPFS, IPNS, MFS string }
	if code != 200 || json.Unmarshal([]byte(body), &got) != nil || got.IPFS != dirs["ipfs2"] || got.IPNS != dirs["ipns2"] {
		t.Fatalf("mount: %d %s", code, body)
	}
	if err := mount.Check("Mounts.IPFS", dirs["ipfs"]); err != nil {
		t.Fatalf("the first mount is still there after remounting: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dirs["ipfs2"], c)); err != nil || string(b) != "through fuse\n" {
		t.Fatalf("read through the new mount: %q %v", b, err)
	}
	// /ipns names resolve through the node's resolver: the node's own name.
	code, body = post(t, url+"/api/v0/name/publish?allow-offline=true&arg=/ipfs/"+c, nil)
	var pub struct{ Name string }
	if code != 200 || json.Unmarshal([]byte(body), &pub) != nil || pub.Name == "" {
		t.Fatalf("name/publish: %d %s", code, body)
	}
	if b, err := os.ReadFile(filepath.Join(dirs["ipns2"], pub.Name)); err != nil || string(b) != "through fuse\n" {
		t.Fatalf("read /ipns/%s: %q %v", pub.Name, b, err)
	}
	code, body = post(t, url+"/api/v0/mount?ipfs-path="+filepath.Join(base, "missing"), nil)
	if code != 500 || !strings.Contains(body, `Mounts.IPFS path (\"`+filepath.Join(base, "missing")+`\") does not exist`) {
		t.Fatalf("mount at a missing dir: %d %s", code, body)
	}
	d.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, d, 10*time.Second); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	for _, k := range []string{"ipfs", "ipns", "ipfs2", "ipns2"} {
		if err := mount.Check("Mounts.IPFS", dirs[k]); err != nil {
			t.Errorf("%s after the daemon stopped: %v", k, err)
		}
	}
}
