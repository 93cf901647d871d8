//go:build linux

package mount

import (
	"strings"
	"testing"
)

// Ensure a machine without /dev/fuse gets an error that says so and how
// to get it.
func TestCheck_NoDevFuse(t *testing.T) {
	defer func(d string) { devFuse = d }(devFuse)
	devFuse = "/nonexistent/fuse"
	err := Check("Mounts.IPFS", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/fuse is missing, FUSE is not available here (load the module: sudo modprobe fuse") {
		t.Fatalf("%v", err)
	}
}

// Ensure a user without fusermount gets an error naming it; root mounts
// with mount(2) and needs none.
func TestCheck_NoFusermount(t *testing.T) {
	defer func(d string, u func() int) { devFuse, geteuid = d, u }(devFuse, geteuid)
	devFuse = t.TempDir() // exists, whatever this machine has
	t.Setenv("PATH", t.TempDir())
	geteuid = func() int { return 1000 }
	err := Check("Mounts.IPFS", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "fusermount3 or fusermount not found in PATH, which FUSE needs to mount as a user (install it: sudo apt-get install fuse3)") {
		t.Fatalf("user: %v", err)
	}
	geteuid = func() int { return 0 }
	if err := Check("Mounts.IPFS", t.TempDir()); err != nil {
		t.Fatalf("root: %v", err)
	}
}
