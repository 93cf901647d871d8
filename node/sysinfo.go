// sysinfo.go: what diag/sys reports about the machine and the process,
// in Kubo's shape (runtime, environment, diskinfo, memory, net).

package node

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	manet "github.com/multiformats/go-multiaddr/net"
	"golang.org/x/sys/unix"
)

// SysInfo is diag/sys's body without the version fields, which the
// command adds.
func (n *Node) SysInfo() (map[string]any, error) {
	info := map[string]any{
		"runtime": map[string]any{
			"os":            runtime.GOOS,
			"arch":          runtime.GOARCH,
			"compiler":      runtime.Compiler,
			"version":       runtime.Version(),
			"numcpu":        runtime.NumCPU(),
			"gomaxprocs":    runtime.GOMAXPROCS(0),
			"numgoroutines": runtime.NumGoroutine(),
		},
		// Kubo names its repo variable IPFS_PATH; cairn's is CAIRN_PATH.
		"environment": map[string]any{
			"GOPATH":     os.Getenv("GOPATH"),
			"IPFS_PATH":  os.Getenv("IPFS_PATH"),
			"CAIRN_PATH": os.Getenv("CAIRN_PATH"),
		},
	}
	var st unix.Statfs_t
	if err := unix.Statfs(n.Repo, &st); err != nil {
		return nil, fmt.Errorf("diag sys: disk of %s: %w", n.Repo, err)
	}
	info["diskinfo"] = map[string]any{
		"fstype":      strconv.FormatInt(int64(st.Type), 10),
		"total_space": uint64(st.Blocks) * uint64(st.Bsize),
		"free_space":  uint64(st.Bavail) * uint64(st.Bsize),
	}
	virt, swap, err := processMemory()
	if err != nil {
		return nil, fmt.Errorf("diag sys: memory: %w", err)
	}
	info["memory"] = map[string]any{"swap": swap, "virt": virt}
	addrs, err := manet.InterfaceMultiaddrs()
	if err != nil {
		return nil, fmt.Errorf("diag sys: interface addresses: %w", err)
	}
	straddrs := make([]string, len(addrs))
	for i, a := range addrs {
		straddrs[i] = a.String()
	}
	info["net"] = map[string]any{"interface_addresses": straddrs, "online": n.Online()}
	return info, nil
}

// processMemory reads this process's virtual size and swapped-out bytes
// (VmSize and VmSwap of /proc/self/status), as Kubo reports them.
func processMemory() (virt, swap uint64, err error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmSize" && name != "VmSwap") {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/self/status %s: %w", name, err)
		}
		if name == "VmSize" {
			virt = kb * 1024
		} else {
			swap = kb * 1024
		}
	}
	return virt, swap, sc.Err()
}
