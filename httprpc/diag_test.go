package httprpc_test

import (
	"encoding/json"
	"net/http"
	"runtime"
	"testing"

	"cairn/internal/testutil"
)

// Ensure diag/sys answers Kubo's shape, with this process's figures.
func TestDiagSys_KuboShape(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	resp, err := http.Post(srv.URL+"/api/v0/diag/sys", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var got struct {
		Diskinfo struct {
			Fstype     string `json:"fstype"`
			TotalSpace uint64 `json:"total_space"`
			FreeSpace  uint64 `json:"free_space"`
		} `json:"diskinfo"`
		Environment map[string]string `json:"environment"`
		IpfsCommit  *string           `json:"ipfs_commit"`
		IpfsVersion string            `json:"ipfs_version"`
		Memory      struct {
			Swap *uint64 `json:"swap"`
			Virt uint64  `json:"virt"`
		} `json:"memory"`
		Net struct {
			InterfaceAddresses []string `json:"interface_addresses"`
			Online             *bool    `json:"online"`
		} `json:"net"`
		Runtime struct {
			Arch          string `json:"arch"`
			Compiler      string `json:"compiler"`
			Gomaxprocs    int    `json:"gomaxprocs"`
			Numcpu        int    `json:"numcpu"`
			Numgoroutines int    `json:"numgoroutines"`
			OS            string `json:"os"`
			Version       string `json:"version"`
		} `json:"runtime"`
	}
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Diskinfo.TotalSpace == 0 || got.Diskinfo.FreeSpace > got.Diskinfo.TotalSpace || got.Diskinfo.Fstype == "" {
		t.Fatalf("diskinfo %+v", got.Diskinfo)
	}
	if _, ok := got.Environment["IPFS_PATH"]; !ok {
		t.Fatalf("environment %v has no IPFS_PATH", got.Environment)
	}
	if got.IpfsCommit == nil || got.IpfsVersion == "" {
		t.Fatal("no version fields")
	}
	if got.Memory.Virt == 0 || got.Memory.Swap == nil {
		t.Fatalf("memory %+v", got.Memory)
	}
	if got.Net.Online == nil || *got.Net.Online || len(got.Net.InterfaceAddresses) == 0 {
		t.Fatalf("net %+v (an offline test node)", got.Net)
	}
	if got.Runtime.OS != runtime.GOOS || got.Runtime.Arch != runtime.GOARCH || got.Runtime.Numcpu != runtime.NumCPU() ||
		got.Runtime.Numgoroutines == 0 || got.Runtime.Version != runtime.Version() {
		t.Fatalf("runtime %+v", got.Runtime)
	}
}
