//go:build faults

// readonly_test.go: the file system under the repo goes read-only.

package faults

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/node/config"
)

// get answers the body of a GET of url.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// startModules starts the module host with the status app and the
// http_ipfs app (the node's gateway) over d's node and returns its URL.
func startModules(t *testing.T, d *daemon) string {
	t.Helper()
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_status", "http_ipfs"}
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	h, err := modules.Start(context.Background(), modules.ViewOf(d.Node), cfg,
		modules.Options{Repo: d.Node.Repo, Log: slog.New(slog.DiscardHandler), Gateway: testutil.Gateway(t, d.Node)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h.Listeners()[0].URL()
}

// Ensure that once the file system goes read-only writes answer
// "read-only file system", reads go on, and the metrics and the status
// page show the fault. ext4 keeps a file system it turned read-only
// after an error so until it is unmounted (emergency_ro: statfs still
// says writable, and a remount writable is taken but writes still fail),
// so the fault stays shown through a remount. TestDiskFull_Add sees the
// fault clear.
func TestReadOnly_WritesFailReadsGoOn(t *testing.T) {
	fs, d, c, kept := withFile(t, 2<<20)
	status := startModules(t, d)
	d.wantFault(false)
	fs.goReadOnly(t)
	for _, w := range []struct {
		path string
		args []string
		body []byte
	}{
		{"add", nil, random(300 << 10)},
		{"files/mkdir", []string{"/ro"}, nil},
		{"block/put", nil, random(4096)},
	} {
		e := d.call(w.path, w.args, nil, w.body).errText()
		if !strings.Contains(e, "read-only file system") {
			t.Fatalf("%s on a read-only file system: error %q, want one saying \"read-only file system\"", w.path, e)
		}
		d.wantUp()
	}
	d.wantCat(c, kept)
	d.wantRepoVerify()
	d.wantFault(true)
	if p := get(t, status+"/status/"); !strings.Contains(p, `id="store-fault"`) || !strings.Contains(p, "read-only file system") {
		t.Fatal("the status page does not show the read-only file system")
	}
	if err := unix.Mount("", fs.Dir, "", unix.MS_REMOUNT, "errors=remount-ro"); err != nil {
		t.Logf("remount writable: %v", err)
	}
	if e := d.call("block/put", nil, nil, random(4096)).errText(); !strings.Contains(e, "read-only file system") {
		t.Fatalf("block/put after a remount writable: error %q, want \"read-only file system\" (ext4 stays read-only until unmounted)", e)
	}
	d.wantFault(true)
}
