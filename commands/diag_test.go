package commands_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node/config"
	"cairn/rpc"
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

// diagCmds returns diag/cmds's answer.
func diagCmds(t *testing.T, url string) []*rpc.ReqLogEntry {
	t.Helper()
	var got []*rpc.ReqLogEntry
	if code, body := postJSON(t, url+"/api/v0/diag/cmds?verbose=true", &got); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	return got
}

// Ensure diag/cmds lists active and recent requests with Kubo's fields,
// and clear and set-time change what it keeps.
func TestDiagCmds_ActiveRecent_ClearSetTime(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	if code, body := postJSON(t, srv.URL+"/api/v0/diag/cmds/set-time?arg=1h", nil); code != 200 || body != "" {
		t.Fatalf("set-time: %d %q", code, body)
	}
	if code, body := postJSON(t, srv.URL+"/api/v0/version?number=true", nil); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	resp, body := testutil.PostURL(t, srv.URL+"/api/v0/diag/cmds", nil)
	var raw []map[string]any
	if err := json.Unmarshal(body, &raw); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
	}
	want := []string{"Active", "Args", "Command", "EndTime", "ID", "Options", "StartTime"}
	for _, e := range raw {
		var keys []string
		for k := range e {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Fatalf("fields %v, want Kubo's %v", keys, want)
		}
	}
	got := diagCmds(t, srv.URL)
	var version, self *rpc.ReqLogEntry
	for _, e := range got {
		switch e.Command {
		case "version":
			version = e
		case "diag/cmds":
			if e.Active {
				self = e
			}
		}
	}
	if version == nil || version.Active || version.EndTime.Before(version.StartTime) || version.Options["number"] != true ||
		version.Options["encoding"] != "json" {
		// Kubo's HTTP layer sets encoding=json on a request without one,
		// and its log shows it.
		t.Fatalf("version entry %+v in %v", version, got)
	}
	if self == nil || self.Options["verbose"] != true || !self.EndTime.IsZero() {
		t.Fatalf("the running diag/cmds is not listed active: %+v", got)
	}
	if code, body := postJSON(t, srv.URL+"/api/v0/diag/cmds/clear", nil); code != 200 || body != "" {
		t.Fatalf("clear: %d %q", code, body)
	}
	for _, e := range diagCmds(t, srv.URL) {
		if !e.Active && e.Command != "diag/cmds/clear" {
			t.Fatalf("inactive entry after clear: %+v", e)
		}
	}
}

// Ensure set-time takes what Kubo takes (Go durations, negative ones too)
// and answers Kubo's error otherwise.
func TestDiagCmdsSetTime_BadInput(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for _, tc := range []struct {
		arg  string
		code int
		body string
	}{
		{"-1s", 200, ""},
		{"abc", 500, `{"Message":"time: invalid duration \"abc\"","Code":0,"Type":"error"}`},
		{"", 500, `{"Message":"time: invalid duration \"\"","Code":0,"Type":"error"}`},
	} {
		code, body := postJSON(t, srv.URL+"/api/v0/diag/cmds/set-time?arg="+tc.arg, nil)
		if code != tc.code || strings.TrimSpace(body) != tc.body {
			t.Errorf("%q: got %d %s, want %d %s", tc.arg, code, body, tc.code, tc.body)
		}
	}
	resp, body := testutil.PostURL(t, srv.URL+"/api/v0/diag/cmds/set-time", nil)
	if resp.StatusCode != 400 || string(body) != "argument \"time\" is required\n" {
		t.Errorf("no argument: %d %q", resp.StatusCode, body)
	}
}

// Ensure diag/profile answers a zip of the profiles asked for, with Kubo's
// file names, and Kubo's errors for bad options.
func TestDiagProfile_Zip(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	resp, body := testutil.PostURL(t, srv.URL+"/api/v0/diag/profile?profile-time=200ms&collectors=goroutines-stack,heap&collectors=cpu,version,mutex", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("%d %v %.200s", resp.StatusCode, resp.Header, body)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.UncompressedSize64 == 0 {
			t.Errorf("%s is empty", f.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"cpu.pprof", "goroutines.stacks", "heap.pprof", "mutex.pprof", "version.json"}; !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	for _, tc := range []struct{ q, want string }{
		{"collectors=nope", `unknown collector 'nope'`},
		{"profile-time=soon", `failed to parse profile duration "soon": time: invalid duration "soon"`},
		{"block-profile-rate=x", `failed to parse block profile rate "x": time: invalid duration "x"`},
	} {
		code, body := postJSON(t, srv.URL+"/api/v0/diag/profile?"+tc.q, nil)
		var e struct{ Message string }
		json.Unmarshal([]byte(body), &e)
		if code != 500 || e.Message != tc.want {
			t.Errorf("%s: got %d %s, want %q", tc.q, code, body, tc.want)
		}
	}
}

// Ensure diag/profile is served only to callers API.Authorizations allows.
func TestDiagProfile_BehindAuthorization(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"API.Authorizations": map[string]*config.RPCAuthScope{
		"ops":  {AuthSecret: "bearer:ops", AllowedPaths: []string{"/api/v0/diag"}},
		"read": {AuthSecret: "bearer:read", AllowedPaths: []string{"/api/v0/cat"}},
	}})
	srv := testutil.StartServer(t, n)
	url := srv.URL + "/api/v0/diag/profile?profile-time=0&collectors=version"
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 403}, {"Bearer read", 403}, {"Bearer ops", 200}} {
		resp, body := testutil.PostURL(t, url, map[string]string{"Authorization": tc.auth})
		if resp.StatusCode != tc.want {
			t.Errorf("%q: got %d, want %d (%.100s)", tc.auth, resp.StatusCode, tc.want, body)
		}
	}
}
