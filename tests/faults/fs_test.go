//go:build faults

// fs_test.go: a small ext4 file system on a loop device, made and torn
// down by each test.

package faults

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Geteuid() != 0 {
		os.Stderr.WriteString("tests/faults: needs root (loop devices, mount)\n")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// loopFS is an ext4 file system on a loop device mounted at Dir.
type loopFS struct {
	Dir string
	dev string
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// mountLoop makes an ext4 file system of mib MiB (no reserved blocks) on a
// loop device and mounts it; cleanup unmounts it and frees the device.
func mountLoop(t testing.TB, mib int) *loopFS {
	t.Helper()
	base := t.TempDir()
	img := filepath.Join(base, "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(mib) << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command("losetup", "-f", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	fs := &loopFS{Dir: filepath.Join(base, "mnt"), dev: strings.TrimSpace(string(out))}
	t.Cleanup(func() { exec.Command("losetup", "-d", fs.dev).Run() })
	run(t, "mkfs.ext4", "-q", "-m", "0", "-F", fs.dev)
	if err := os.Mkdir(fs.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	run(t, "mount", "-t", "ext4", "-o", "errors=remount-ro", fs.dev, fs.Dir)
	// Registered after the node's cleanups would be too late: t.Cleanup
	// runs last-in first-out, so the node (opened later) closes first.
	t.Cleanup(func() {
		if err := exec.Command("umount", fs.Dir).Run(); err != nil {
			exec.Command("umount", "-l", fs.Dir).Run()
		}
	})
	return fs
}

// fill writes a file of zeros until the file system is full and returns
// a func that removes it again.
func (fs *loopFS) fill(t testing.TB) (free func()) {
	t.Helper()
	p := filepath.Join(fs.Dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	f.Sync()
	f.Close()
	return func() {
		t.Helper()
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

// avail is the bytes the file system has free.
func (fs *loopFS) avail(t testing.TB) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(fs.Dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// goReadOnly makes the file system read-only as the kernel does when it
// meets an error on a card (ext4's errors=remount-ro): writes fail with
// EROFS from then on, until it is unmounted. A plain "mount -o
// remount,ro" is refused while the store holds its files open for
// writing.
func (fs *loopFS) goReadOnly(t testing.TB) {
	t.Helper()
	p := "/sys/fs/ext4/" + filepath.Base(fs.dev) + "/trigger_fs_error"
	if err := os.WriteFile(p, []byte("tests/faults: read-only\n"), 0); err != nil {
		t.Fatalf("making the file system read-only: %v", err)
	}
}
