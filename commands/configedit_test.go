package commands_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"
)

// initRepo makes a repo with the test profile and returns its path and
// its config file's bytes.
func initRepo(t *testing.T) (string, []byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if _, err := node.Init(dir, "test"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, config.File))
	if err != nil {
		t.Fatal(err)
	}
	return dir, b
}

// editor writes an $EDITOR script that runs body with the file as $1.
func editor(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ed.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nset -e\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func configEdit(dir string) error {
	_, err := rpc.Call(context.Background(), nil, commands.DefaultTable, "config/edit", nil, map[string]string{"config": dir}, nil)
	return err
}

// Ensure config edit saves a valid edit and refuses an invalid one,
// keeping the old config and the user's edit.
func TestConfigEdit_ValidatesBeforeSaving(t *testing.T) {
	dir, orig := initRepo(t)
	cfgPath := filepath.Join(dir, config.File)

	t.Setenv("EDITOR", "")
	if err := configEdit(dir); err == nil || err.Error() != "ENV variable $EDITOR not set" {
		t.Fatalf("no $EDITOR: got %v", err)
	}

	// An editor with an argument, as people set it ("code --wait").
	t.Setenv("EDITOR", editor(t, `sed -i 's/"StorageMax": *"[^"]*"/"StorageMax": "123MB"/' "$2"`)+" --wait")
	if err := configEdit(dir); err != nil {
		t.Fatal(err)
	}
	doc, err := config.ReadDoc(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := config.GetKeyExact(doc, "Datastore.StorageMax"); got != "123MB" {
		t.Fatalf("StorageMax after edit: got %v, want 123MB", got)
	}
	saved, _ := os.ReadFile(cfgPath)

	for _, tc := range []struct{ name, script, want string }{
		{"not JSON", `echo '{"Datastore":' > "$1"`, "not valid JSON"},
		{"wrong type", `sed -i 's/"StorageGCWatermark": *[0-9]*/"StorageGCWatermark": "high"/' "$1"`, "not valid"},
		{"bad size", `sed -i 's/"StorageMax": *"[^"]*"/"StorageMax": "1x"/' "$1"`, `Datastore.StorageMax "1x": unhandled size name: x`},
		{"bad multiaddr", `sed -i 's#"API": *"/ip4/[^"]*"#"API": "127.0.0.1:5001"#' "$1"`, `Addresses.API "127.0.0.1:5001"`},
		{"foreign PeerID", `sed -i 's/"PeerID": *"[^"]*"/"PeerID": "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"/' "$1"`, "does not match the private key"},
		{"editor fails", `exit 3`, "the editor failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("EDITOR", editor(t, tc.script))
			err := configEdit(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if now, _ := os.ReadFile(cfgPath); string(now) != string(saved) {
				t.Fatal("the config changed after a refused edit")
			}
			if tc.name != "editor fails" && !strings.Contains(err.Error(), "your edit is in "+dir) {
				t.Fatalf("the error does not say where the edit is kept: %v", err)
			}
		})
	}
	if string(saved) == string(orig) {
		t.Fatal("the valid edit was not saved")
	}
}

// Ensure config edit refuses while a daemon holds the repo.
func TestConfigEdit_RefusesWhileDaemonRuns(t *testing.T) {
	dir, orig := initRepo(t)
	lk, err := node.LockRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	t.Setenv("EDITOR", editor(t, `echo '{}' > "$1"`))
	if err := configEdit(dir); err == nil || !strings.Contains(err.Error(), "while a cairn daemon is running") {
		t.Fatalf("got %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, config.File)); string(now) != string(orig) {
		t.Fatal("config changed")
	}
}

// Ensure update explains how to update a board, and that update and
// config edit are CLI only (404 over HTTP), as in Kubo.
func TestUpdate_ExplainsAndIsCLIOnly(t *testing.T) {
	res, err := rpc.Call(context.Background(), nil, commands.DefaultTable, "update", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Values[0])
	if !strings.Contains(string(b), "dpkg -i") || !strings.Contains(string(b), "install.sh") {
		t.Fatalf("update says %s", b)
	}
	if _, err := rpc.Call(context.Background(), nil, commands.DefaultTable, "update", []string{"install", "latest"}, nil, nil); err == nil {
		t.Fatal("update with ipfs-update subcommands: no error")
	}
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for _, p := range []string{"update", "config/edit"} {
		resp, err := http.Post(srv.URL+"/api/v0/"+p, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s over HTTP: %d, want 404", p, resp.StatusCode)
		}
	}
}
