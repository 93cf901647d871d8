// cgroup.go: a memory cgroup of a board's budget for a daemon under test,
// on cgroup v2 (unified, pure or hybrid) or v1.

package benchutil

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Cgroup is a memory cgroup created under the benchmark's own cgroup, so
// that it stays inside whatever limits the benchmark itself runs under.
type Cgroup struct {
	Dir string
	V2  bool
}

// ownCgroup returns the cgroup path of this process in the hierarchy
// whose /proc/self/cgroup line matches want ("" for v2's "0::" line).
func ownCgroup(want string) (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if want == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2], nil
		}
		if want != "" {
			for _, c := range strings.Split(parts[1], ",") {
				if c == want {
					return parts[2], nil
				}
			}
		}
	}
	return "", fmt.Errorf("no %q line in /proc/self/cgroup", want)
}

func hasMemoryController(root string) bool {
	b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	return err == nil && strings.Contains(" "+string(b)+" ", " memory ")
}

// NewCgroup creates cgroup name with a hard memory limit of limit bytes:
// memory.max on v2, memory.limit_in_bytes on v1. v2 is used when the
// memory controller is on the unified hierarchy (/sys/fs/cgroup or the
// hybrid /sys/fs/cgroup/unified), v1's /sys/fs/cgroup/memory otherwise.
func NewCgroup(name string, limit int64) (*Cgroup, error) {
	for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if !hasMemoryController(root) {
			continue
		}
		own, err := ownCgroup("")
		if err != nil {
			return nil, err
		}
		parent := filepath.Join(root, own)
		// A child can limit memory only when its parent delegates it.
		if !strings.Contains(readString(filepath.Join(parent, "cgroup.subtree_control")), "memory") {
			if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
				return nil, fmt.Errorf("cgroup v2 %s: cannot enable the memory controller for children: %w", parent, err)
			}
		}
		c := &Cgroup{Dir: filepath.Join(parent, name), V2: true}
		if err := os.Mkdir(c.Dir, 0o755); err != nil {
			return nil, err
		}
		if err := c.write("memory.max", limit); err != nil {
			c.Remove()
			return nil, err
		}
		c.write("memory.swap.max", 0)
		return c, nil
	}
	own, err := ownCgroup("memory")
	if err != nil {
		return nil, fmt.Errorf("no memory cgroup controller (v2 or v1): %w", err)
	}
	c := &Cgroup{Dir: filepath.Join("/sys/fs/cgroup/memory", own, name)}
	if err := os.Mkdir(c.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := c.write("memory.limit_in_bytes", limit); err != nil {
		c.Remove()
		return nil, err
	}
	c.write("memory.memsw.limit_in_bytes", limit) // no swap; absent without swap accounting
	return c, nil
}

func readString(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func (c *Cgroup) write(file string, v int64) error {
	return os.WriteFile(filepath.Join(c.Dir, file), []byte(strconv.FormatInt(v, 10)), 0)
}

// ProcsFile is the file a process writes its pid to to join the cgroup.
func (c *Cgroup) ProcsFile() string { return filepath.Join(c.Dir, "cgroup.procs") }

// Stat returns memory.stat as numbers. Page-fault counters are
// pgmajfault (v2 and v1) and total_pgmajfault (v1, with descendants).
func (c *Cgroup) Stat() map[string]int64 {
	m := map[string]int64{}
	for _, l := range strings.Split(readString(filepath.Join(c.Dir, "memory.stat")), "\n") {
		fs := strings.Fields(l)
		if len(fs) == 2 {
			v, _ := strconv.ParseInt(fs[1], 10, 64)
			m[fs[0]] = v
		}
	}
	return m
}

// Peak is the highest memory use of the cgroup so far (page cache
// included), in bytes: memory.peak (v2) or memory.max_usage_in_bytes (v1).
func (c *Cgroup) Peak() int64 {
	f := "memory.max_usage_in_bytes"
	if c.V2 {
		f = "memory.peak"
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(readString(filepath.Join(c.Dir, f))), 10, 64)
	return v
}

// Remove deletes the cgroup; its processes must have exited.
func (c *Cgroup) Remove() error { return os.Remove(c.Dir) }
