package commands_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/libp2p/go-libp2p/core/peer"
)

func configValue(t *testing.T, res *rpc.Result) any {
	t.Helper()
	if len(res.Values) != 1 {
		t.Fatalf("%d values", len(res.Values))
	}
	return res.Values[0].(*commands.ConfigField).Value
}

func diskDoc(t *testing.T, n *node.Node) map[string]any {
	t.Helper()
	doc, err := config.ReadDoc(n.Repo)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func diskPrivKey(t *testing.T, n *node.Node) string {
	t.Helper()
	v, err := config.GetKeyExact(diskDoc(t, n), "Identity.PrivKey")
	if err != nil {
		t.Fatal(err)
	}
	return v.(string)
}

func TestConfig_Get_Values(t *testing.T) {
	n := testutil.MustOpenNode(t)
	if v := configValue(t, mustCall(t, n, "config", []string{"Addresses.API"}, nil, nil)); v != "/ip4/127.0.0.1/tcp/0" {
		t.Fatalf("Addresses.API %v", v)
	}
	if v := configValue(t, mustCall(t, n, "config", []string{"Identity.PeerID"}, nil, nil)); v != n.PeerID.String() {
		t.Fatalf("Identity.PeerID %v", v)
	}
	if v := configValue(t, mustCall(t, n, "config", []string{"Discovery.MDNS.Enabled"}, nil, nil)); v != false {
		t.Fatalf("MDNS %v", v)
	}
	for key, msg := range map[string]string{
		"Foo":                      `failed to get config value: "Foo not found"`,
		"Datastore.Nope":           `failed to get config value: "Datastore.Nope not found"`,
		"datastore.StorageMax":     `failed to get config value: "datastore not found"`,
		"Datastore.StorageMax.x":   `failed to get config value: "Datastore.StorageMax key is not a map"`,
		"Pinning.Foo":              `failed to get config value: "Pinning.Foo not found"`,
		"Fruit.Kind":               `failed to get config value: "Fruit not found"`,
		"Identity.PeerID.whatever": `failed to get config value: "Identity.PeerID key is not a map"`,
	} {
		wantErr(t, callErr(t, n, "config", []string{key}, nil, nil), msg)
	}
}

func TestConfig_Set_StringBoolJSON(t *testing.T) {
	n := testutil.MustOpenNode(t)
	res := mustCall(t, n, "config", []string{"Datastore.StorageMax", "20GB"}, nil, nil)
	if v := configValue(t, res); v != "20GB" {
		t.Fatalf("set returned %v", v)
	}
	if n.Config().Datastore.StorageMax != "20GB" || diskDoc(t, n)["Datastore"].(map[string]any)["StorageMax"] != "20GB" {
		t.Fatal("StorageMax not updated")
	}
	if v := configValue(t, mustCall(t, n, "config", []string{"Discovery.MDNS.Enabled", "true"}, map[string]string{"bool": "true"}, nil)); v != true {
		t.Fatalf("bool set returned %v", v)
	}
	if !n.Config().Discovery.MDNS.Enabled {
		t.Fatal("MDNS not enabled")
	}
	boot := `["/ip4/127.0.0.2/tcp/4001/p2p/12D3KooWLrTfcHb2TTS8z1NCYjRfoLX7hxRHBY2ALAJBwMVKbuHN"]`
	v := configValue(t, mustCall(t, n, "config", []string{"Bootstrap", boot}, map[string]string{"json": "true"}, nil))
	if !reflect.DeepEqual(v, []any{"/ip4/127.0.0.2/tcp/4001/p2p/12D3KooWLrTfcHb2TTS8z1NCYjRfoLX7hxRHBY2ALAJBwMVKbuHN"}) {
		t.Fatalf("json set returned %#v", v)
	}
	if len(n.Config().Bootstrap) != 1 {
		t.Fatalf("Bootstrap %v", n.Config().Bootstrap)
	}
	// Map sections take any key.
	mustCall(t, n, "config", []string{"API.HTTPHeaders.X-Test", `["yes"]`}, map[string]string{"json": "true"}, nil)
	if got := n.Config().API.HTTPHeaders["X-Test"]; len(got) != 1 || got[0] != "yes" {
		t.Fatalf("HTTPHeaders %v", n.Config().API.HTTPHeaders)
	}
	// The private key is untouched by all of this.
	if diskPrivKey(t, n) != n.Config().Identity.PrivKey || n.Config().Identity.PrivKey == "" {
		t.Fatal("private key changed")
	}
}

func TestConfig_Set_Errors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	before, err := os.ReadFile(filepath.Join(n.Repo, config.File))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		opts map[string]string
		msg  string
	}{
		{[]string{"Foo.Bar", "x"}, nil, "failed to set config value: Foo not found (maybe use --json?)"},
		{[]string{"Datastore.Nope", "x"}, nil, "failed to set config value: Datastore.Nope not found (maybe use --json?)"},
		{[]string{"Bootstrap.x", "x"}, nil, "failed to set config value: Bootstrap key is not a map (maybe use --json?)"},
		{[]string{"Bootstrap", "[1"}, map[string]string{"json": "true"}, "failed to unmarshal json. unexpected end of JSON input"},
		{[]string{"Datastore.StorageMax", "x"}, map[string]string{"expand-auto": "true"}, "--expand-auto can only be used for reading config values, not for setting them"},
	} {
		wantErr(t, callErr(t, n, "config", tc.args, tc.opts, nil), tc.msg)
	}
	// A value of the wrong type fails validation.
	err = callErr(t, n, "config", []string{"Discovery.MDNS.Enabled", "yes"}, nil, nil)
	if !strings.HasPrefix(err.Error(), "failed to set config value: failure to decode config: ") || !strings.HasSuffix(err.Error(), "(maybe use --json?)") {
		t.Fatalf("error %v", err)
	}
	// The node's own ID cannot be changed away from its key (Kubo 0.43's
	// text, not wrapped), in any form.
	other, _ := node.NewIdentity()
	for _, v := range []string{other.PeerID, "not-a-peer-id", ""} {
		err = callErr(t, n, "config", []string{"Identity.PeerID", v}, nil, nil)
		if err.Error() != "cannot set Identity.PeerID to a value that does not match the node's private key; use 'ipfs key rotate' to change the node identity" {
			t.Fatalf("set Identity.PeerID %q: %v", v, err)
		}
	}
	after, err := os.ReadFile(filepath.Join(n.Repo, config.File))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) || n.Config().Discovery.MDNS.Enabled {
		t.Fatal("a failed set changed the config")
	}
}

func TestConfig_PrivateKey_Protected(t *testing.T) {
	n := testutil.MustOpenNode(t)
	priv := diskPrivKey(t, n)
	for _, key := range []string{"Identity", "identity", "Identity.PrivKey", "IDENTITY.privkey", "identity.PrivKey"} {
		wantErr(t, callErr(t, n, "config", []string{key}, nil, nil), "cannot show or change private key through API")
		wantErr(t, callErr(t, n, "config", []string{key, "x"}, nil, nil), "cannot show or change private key through API")
		wantErr(t, callErr(t, n, "config", []string{key, `{"PrivKey":"x"}`}, map[string]string{"json": "true"}, nil),
			"cannot show or change private key through API")
	}
	for _, key := range []string{"Pinning", "pinning.remoteservices", "Pinning.RemoteServices.svc.API.Key", "Pinning.RemoteServices.svc"} {
		wantErr(t, callErr(t, n, "config", []string{key}, nil, nil), "cannot show or change pinning services credentials")
	}
	if diskPrivKey(t, n) != priv {
		t.Fatal("private key changed")
	}
}

func TestConfig_Show_Redacted(t *testing.T) {
	n := testutil.MustOpenNode(t)
	// Started before API.Authorizations is set: the server reads it once.
	srv := testutil.StartServer(t, n)
	priv := diskPrivKey(t, n)
	// Secrets a show must hide.
	mustCall(t, n, "config", []string{"API.Authorizations", `{"cli":{"AuthSecret":"bearer:s3cret","AllowedPaths":["/api/v0"]}}`},
		map[string]string{"json": "true"}, nil)
	err := n.ConfigFile().Update(func(doc map[string]any) error {
		return config.SetKeyExact(doc, "Pinning.RemoteServices.svc.API", map[string]any{"Endpoint": "https://pin.example", "Key": "pinkey"})
	})
	if err != nil {
		t.Fatal(err)
	}
	res := mustCall(t, n, "config/show", nil, nil, nil)
	doc := *res.Values[0].(*map[string]any)
	b, _ := json.Marshal(doc)
	for _, secret := range []string{priv, "s3cret", "pinkey"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("show leaks %q: %s", secret, b)
		}
	}
	if id := doc["Identity"].(map[string]any); id["PeerID"] != n.PeerID.String() || len(id) != 1 {
		t.Fatalf("Identity %v", id)
	}
	if a := doc["API"].(map[string]any)["Authorizations"]; !reflect.DeepEqual(a, map[string]any{}) {
		t.Fatalf("Authorizations %v", a)
	}
	if ep, _ := config.GetKeyExact(doc, "Pinning.RemoteServices.svc.API.Endpoint"); ep != "https://pin.example" {
		t.Fatalf("endpoint %v", ep)
	}

	// Text: 2-space indented JSON and a newline.
	resp := rpcPost(t, srv, "config/show", url.Values{"encoding": {"text"}}, nil, "")
	body := readAll(t, resp.Body)
	want, _ := json.MarshalIndent(doc, "", "  ")
	if string(body) != string(want)+"\n" {
		t.Fatalf("text:\n%s\nwant:\n%s", body, want)
	}
	resp = rpcPost(t, srv, "config/show", url.Values{}, nil, "")
	body = readAll(t, resp.Body)
	if bytes.Contains(body, []byte(priv)) || resp.StatusCode != 200 {
		t.Fatalf("status %d, leaks private key", resp.StatusCode)
	}
}

// replaceDir is a file argument holding b.
func replaceDir(b []byte) files.Directory {
	return files.NewMapDirectory(map[string]files.Node{"config": files.NewBytesFile(b)})
}

func TestConfig_Replace_KeepsPrivateKey(t *testing.T) {
	n := testutil.MustOpenNode(t)
	priv := diskPrivKey(t, n)
	mustCall(t, n, "config", []string{"API.Authorizations", `{"cli":{"AuthSecret":"bearer:s3cret","AllowedPaths":["/api/v0"]}}`},
		map[string]string{"json": "true"}, nil)
	// Round trip: show, edit, replace.
	doc := *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	doc["Datastore"].(map[string]any)["StorageMax"] = "33GB"
	doc["Unknown"] = map[string]any{"Kept": true}
	b, _ := json.Marshal(doc)
	res := mustCall(t, n, "config/replace", nil, nil, replaceDir(b))
	if len(res.Values) != 0 || len(res.Bytes) != 0 {
		t.Fatalf("replace output %+v", res)
	}
	if diskPrivKey(t, n) != priv || n.Config().Identity.PrivKey != priv {
		t.Fatal("private key lost")
	}
	if n.Config().Datastore.StorageMax != "33GB" {
		t.Fatalf("StorageMax %q", n.Config().Datastore.StorageMax)
	}
	if a := n.Config().API.Authorizations["cli"]; a == nil || a.AuthSecret != "bearer:s3cret" {
		t.Fatal("API.Authorizations lost by show + replace")
	}
	if v, err := config.GetKeyExact(diskDoc(t, n), "Unknown.Kept"); err != nil || v != true {
		t.Fatalf("unknown key: %v %v", v, err)
	}

	// Errors.
	wantErr(t, callErr(t, n, "config/replace", nil, nil, replaceDir([]byte("not json"))), "failed to decode file as config")
	wantErr(t, callErr(t, n, "config/replace", nil, nil, replaceDir([]byte(`{"Bootstrap":"x"}`))), "failed to decode file as config")
	wantErr(t, callErr(t, n, "config/replace", nil, nil, replaceDir([]byte(`{"Identity":{"PrivKey":"CAESQ..."}}`))),
		"setting private key with API is not supported")
	wantErr(t, callErr(t, n, "config/replace", nil, nil, replaceDir([]byte(`{"identity":{"privkey":"x"}}`))),
		"setting private key with API is not supported")
	if diskPrivKey(t, n) != priv {
		t.Fatal("private key changed")
	}
}

// The node's own ID may be set in another form (CIDv1): it is stored in
// base58. A replaced config that carries another node's PeerID keeps
// this node's (one config rolled out over a fleet, Kubo 0.43).
func TestConfig_PeerID_FollowsTheKey(t *testing.T) {
	n := testutil.MustOpenNode(t)
	self := n.PeerID.String()
	for _, tc := range []struct {
		v    string
		opts map[string]string
	}{{peer.ToCid(n.PeerID).String(), nil}, {`"` + self + `"`, map[string]string{"json": "true"}}} {
		res := mustCall(t, n, "config", []string{"Identity.PeerID", tc.v}, tc.opts, nil)
		if v := configValue(t, res); v != self {
			t.Errorf("set Identity.PeerID %s: answered %v", tc.v, v)
		}
		if id, _ := config.GetKeyExact(diskDoc(t, n), "Identity.PeerID"); id != self {
			t.Errorf("set Identity.PeerID %s: stored %v, want %s", tc.v, id, self)
		}
	}
	other, _ := node.NewIdentity()
	doc := *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	doc["Identity"] = map[string]any{"PeerID": other.PeerID}
	b, _ := json.Marshal(doc)
	mustCall(t, n, "config/replace", nil, nil, replaceDir(b))
	if id, _ := config.GetKeyExact(diskDoc(t, n), "Identity.PeerID"); id != self || n.Config().Identity.PeerID != self {
		t.Errorf("after replace with another PeerID: stored %v, in effect %s; want %s", id, n.Config().Identity.PeerID, self)
	}
}

func TestConfig_Replace_PinningServices(t *testing.T) {
	n := testutil.MustOpenNode(t)
	err := n.ConfigFile().Update(func(doc map[string]any) error {
		return config.SetKeyExact(doc, "Pinning.RemoteServices.svc.API", map[string]any{"Endpoint": "https://pin.example", "Key": "pinkey"})
	})
	if err != nil {
		t.Fatal(err)
	}
	doc := *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	set := func(key string, v any) []byte {
		d := map[string]any{}
		b, _ := json.Marshal(doc)
		json.Unmarshal(b, &d)
		if err := config.SetKeyExact(d, key, v); err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(d)
		return b
	}
	wantErr(t, callErr(t, n, "config/replace", nil, nil, replaceDir(set("Pinning.RemoteServices.other", map[string]any{}))),
		"cannot add or remove remote pinning services with 'config replace'")
	wantErr(t, callErr(t, n, "config/replace", nil, nil, replaceDir(set("Pinning.RemoteServices", map[string]any{"x": map[string]any{}}))),
		"cannot add or remove remote pinning services with 'config replace'")
	wantErr(t, callErr(t, n, "config/replace", nil, nil, replaceDir(set("Pinning.RemoteServices.svc.API.Key", "new"))),
		"cannot change remote pinning services api info with `config replace`")
	wantErr(t, callErr(t, n, "config/replace", nil, nil, replaceDir(set("Pinning.RemoteServices.svc.API.Endpoint", "https://evil.example"))),
		"cannot change remote pinning services api info with `config replace`")
	// The shown config (key scrubbed) replaces fine and keeps the key.
	mustCall(t, n, "config/replace", nil, nil, replaceDir(set("Datastore.GCPeriod", "2h")))
	if k, _ := config.GetKeyExact(diskDoc(t, n), "Pinning.RemoteServices.svc.API.Key"); k != "pinkey" {
		t.Fatalf("pinning key %v", k)
	}
	if n.Config().Datastore.GCPeriod != "2h" {
		t.Fatal("GCPeriod not replaced")
	}
}

func TestConfig_HTTP_SetGetReplace(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	resp := rpcPost(t, srv, "config", url.Values{"arg": {"Datastore.StorageMax", "42GB"}}, nil, "")
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 || string(body) != `{"Key":"Datastore.StorageMax","Value":"42GB"}`+"\n" {
		t.Fatalf("status %d body %s", resp.StatusCode, body)
	}
	// Text: set prints nothing; get prints the bare string, or indented JSON.
	resp = rpcPost(t, srv, "config", url.Values{"arg": {"Datastore.GCPeriod", "3h"}, "encoding": {"text"}}, nil, "")
	if body := readAll(t, resp.Body); len(body) != 0 {
		t.Fatalf("set text %q", body)
	}
	resp = rpcPost(t, srv, "config", url.Values{"arg": {"Datastore.GCPeriod"}, "encoding": {"text"}}, nil, "")
	if body := readAll(t, resp.Body); string(body) != "3h\n" {
		t.Fatalf("get text %q", body)
	}
	resp = rpcPost(t, srv, "config", url.Values{"arg": {"Addresses.Swarm"}, "encoding": {"text"}}, nil, "")
	if body := readAll(t, resp.Body); string(body) != "[\n  \"/ip4/127.0.0.1/tcp/0\"\n]\n" {
		t.Fatalf("get text %q", body)
	}
	resp = rpcPost(t, srv, "config", url.Values{"arg": {"Identity.PrivKey"}}, nil, "")
	wantErrorJSON(t, resp, 500, "cannot show or change private key through API")
	resp = rpcPost(t, srv, "config", url.Values{"arg": {"Nope"}}, nil, "")
	wantErrorJSON(t, resp, 500, `failed to get config value: "Nope not found"`)

	// replace over multipart, through the client the CLI uses.
	c, err := rpc.NewClient("/ip4/127.0.0.1/tcp/"+srv.Addr[strings.LastIndex(srv.Addr, ":")+1:], "", "cairn/"+node.Version)
	if err != nil {
		t.Fatal(err)
	}
	doc := *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	doc["Datastore"].(map[string]any)["StorageMax"] = "7GB"
	b, _ := json.Marshal(doc)
	r, err := c.Send(context.Background(), commands.DefaultTable.Find("config/replace"), nil, nil, replaceDir(b))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if n.Config().Datastore.StorageMax != "7GB" || diskPrivKey(t, n) != n.Config().Identity.PrivKey {
		t.Fatalf("after replace: %q", n.Config().Datastore.StorageMax)
	}
	_, err = c.Send(context.Background(), commands.DefaultTable.Find("config/replace"), nil, nil, replaceDir([]byte(`{"Identity":{"PrivKey":"x"}}`)))
	wantErr(t, err, "setting private key with API is not supported")
}

func TestConfig_ProfileApply_DryRunAndApply(t *testing.T) {
	n := testutil.MustOpenNode(t)
	priv := diskPrivKey(t, n)
	before, _ := os.ReadFile(filepath.Join(n.Repo, config.File))

	res := mustCall(t, n, "config/profile/apply", []string{"lowpower"}, map[string]string{"dry-run": "true"}, nil)
	out := res.Values[0].(*commands.ConfigUpdateOutput)
	if v, _ := config.GetKeyExact(out.NewCfg, "Swarm.ConnMgr.HighWater"); v != float64(40) {
		t.Fatalf("NewCfg HighWater %v", v)
	}
	if _, err := config.GetKeyExact(out.OldCfg, "Swarm.ConnMgr.HighWater"); err == nil {
		t.Fatal("OldCfg has HighWater")
	}
	for _, m := range []map[string]any{out.OldCfg, out.NewCfg} {
		if _, err := config.GetKeyExact(m, "Identity.PrivKey"); err == nil {
			t.Fatal("output carries the private key")
		}
	}
	after, _ := os.ReadFile(filepath.Join(n.Repo, config.File))
	if !bytes.Equal(before, after) || n.Config().Swarm.ConnMgr.HighWater.WithDefault(0) != 0 {
		t.Fatal("dry run changed the config")
	}
	backups, _ := filepath.Glob(filepath.Join(n.Repo, "config-pre-*"))
	if len(backups) != 0 {
		t.Fatalf("dry run made backups %v", backups)
	}

	// Text rendering marks the additions.
	var buf bytes.Buffer
	if err := commands.DefaultTable.Find("config/profile/apply").Text(&rpc.TextEnv{Out: &buf}, out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<< "HighWater": 40`) || !strings.HasPrefix(buf.String(), "{\n") {
		t.Fatalf("diff text:\n%s", buf.String())
	}

	mustCall(t, n, "config/profile/apply", []string{"lowpower"}, nil, nil)
	if n.Config().Swarm.ConnMgr.HighWater.WithDefault(0) != 40 || diskPrivKey(t, n) != priv {
		t.Fatal("profile not applied, or private key lost")
	}
	backups, _ = filepath.Glob(filepath.Join(n.Repo, "config-pre-lowpower-*"))
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	if b, _ := os.ReadFile(backups[0]); !bytes.Equal(b, before) {
		t.Fatal("backup is not the old config")
	}
	wantErr(t, callErr(t, n, "config/profile/apply", []string{"nope"}, nil, nil), "nope is not a profile")
	wantErr(t, callErr(t, n, "config/profile/apply", []string{"test,lowpower"}, nil, nil), "test,lowpower is not a profile")
}

// Kubo 0.42's keys can be read and set; their values
// are checked with Kubo's types and messages; names Kubo does not know
// are refused as Kubo refuses them.
func TestConfig_Set_KuboKeys(t *testing.T) {
	n := testutil.MustOpenNode(t)
	if v := configValue(t, mustCall(t, n, "config", []string{"Gateway.RootRedirect", "/x"}, nil, nil)); v != "/x" {
		t.Fatalf("set Gateway.RootRedirect: %v", v)
	}
	if v := configValue(t, mustCall(t, n, "config", []string{"Gateway.RootRedirect"}, nil, nil)); v != "/x" {
		t.Fatalf("get Gateway.RootRedirect: %v", v)
	}
	mustCall(t, n, "config", []string{"Datastore.Spec.mounts", `[]`}, map[string]string{"json": "true"}, nil)
	mustCall(t, n, "config", []string{"Internal.Bitswap.TaskWorkerCount", "8"}, map[string]string{"json": "true"}, nil)
	if v, _ := config.GetKeyExact(diskDoc(t, n), "Internal.Bitswap.TaskWorkerCount"); v != float64(8) {
		t.Fatalf("Internal.Bitswap.TaskWorkerCount on disk: %v", v)
	}
	wantErr(t, callErr(t, n, "config", []string{"Gateway.RootRedirect", "5"}, map[string]string{"json": "true"}, nil),
		"failed to set config value: failure to decode config: json: cannot unmarshal number into Go struct field Gateway.Gateway.RootRedirect of type string (maybe use --json?)")
	wantErr(t, callErr(t, n, "config", []string{"Fruit", "banana"}, nil, nil), "failed to set config value: Fruit not found (maybe use --json?)")
	wantErr(t, callErr(t, n, "config", []string{"Peering.Peers.0", "x"}, nil, nil), "failed to set config value: Peering.Peers key is not a map (maybe use --json?)")
}

// Keys neither Kubo nor cairn knows, put in the file by hand, survive
// show, set and a replace with the shown document.
func TestConfig_UnknownKeys_RoundTrip(t *testing.T) {
	n := testutil.MustOpenNode(t)
	if err := n.ConfigFile().Update(func(doc map[string]any) error {
		doc["Fruit"] = map[string]any{"Kind": "banana", "Count": float64(3)}
		return config.SetKeyExact(doc, "Gateway.Extra", []any{"kept"})
	}); err != nil {
		t.Fatal(err)
	}
	mustCall(t, n, "config", []string{"Gateway.RootRedirect", "/x"}, nil, nil)
	shown := *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	if v, _ := config.GetKeyExact(shown, "Fruit.Kind"); v != "banana" {
		t.Fatalf("show lost Fruit: %v", v)
	}
	b, _ := json.Marshal(shown)
	mustCall(t, n, "config/replace", nil, nil, replaceDir(b))
	again := *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	if !reflect.DeepEqual(again, shown) {
		a, _ := json.MarshalIndent(again, "", " ")
		t.Fatalf("show, replace, show changed the document:\n%s\nwas\n%s", a, b)
	}
	if v, _ := config.GetKeyExact(diskDoc(t, n), "Gateway.Extra"); !reflect.DeepEqual(v, []any{"kept"}) {
		t.Fatalf("Gateway.Extra %v", v)
	}
}

// config/replace stores Kubo's keys as Kubo does: what the file gives,
// else the zero value; Kubo's Datastore fields (Spec, HashOnRead, ...)
// are kept as given.
func TestConfig_Replace_KuboDocument(t *testing.T) {
	n := testutil.MustOpenNode(t)
	var kubo map[string]any
	b, err := os.ReadFile("../node/config/testdata/init-test.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &kubo); err != nil {
		t.Fatal(err)
	}
	kubo["Datastore"].(map[string]any)["HashOnRead"] = true
	kubo["Datastore"].(map[string]any)["BloomFilterSize"] = float64(1048576)
	b, _ = json.Marshal(kubo)
	mustCall(t, n, "config/replace", nil, nil, replaceDir(b))
	shown := *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	for k, want := range kubo {
		if k == "Identity" {
			continue
		}
		if !containsDoc(shown[k], want) {
			t.Errorf("%s = %v, want %v", k, shown[k], want)
		}
	}
	if n.Config().Addresses.API[0] != "/ip4/127.0.0.1/tcp/0" {
		t.Fatalf("node config after replace: %v", n.Config().Addresses)
	}

	// An empty document: every Kubo key with its zero value, as Kubo 0.42
	// writes it (measured: `ipfs config replace` of {}).
	mustCall(t, n, "config/replace", nil, nil, replaceDir([]byte(`{}`)))
	shown = *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	wantDS := map[string]any{"StorageMax": "", "StorageGCWatermark": float64(0), "GCPeriod": "", "Spec": nil,
		"HashOnRead": false, "BloomFilterSize": float64(0), "BlockKeyCacheSize": nil}
	if !reflect.DeepEqual(shown["Datastore"], wantDS) {
		t.Errorf("Datastore after replace {}: %v", shown["Datastore"])
	}
	for _, key := range []string{"Gateway.RootRedirect", "Mounts.IPFS", "Ipns.RecordLifetime", "Pubsub.Router"} {
		if v, err := config.GetKeyExact(shown, key); err != nil || v != "" {
			t.Errorf("%s after replace {}: %v %v", key, v, err)
		}
	}
	if v, err := config.GetKeyExact(shown, "Bootstrap"); err != nil || v != nil {
		t.Errorf("Bootstrap after replace {}: %v %v", v, err)
	}
}

// server and randomports exist (Kubo's), and a dry run changes nothing.
func TestConfig_ProfileApply_ServerRandomports(t *testing.T) {
	n := testutil.MustOpenNode(t)
	before, _ := os.ReadFile(filepath.Join(n.Repo, config.File))
	mustCall(t, n, "config/profile/apply", []string{"server"}, map[string]string{"dry-run": "true"}, nil)
	if after, _ := os.ReadFile(filepath.Join(n.Repo, config.File)); !bytes.Equal(before, after) {
		t.Fatal("dry run changed the config")
	}
	mustCall(t, n, "config/profile/apply", []string{"server"}, nil, nil)
	c := n.Config()
	if len(c.Swarm.AddrFilters) != 19 || c.Discovery.MDNS.Enabled || !c.Swarm.DisableNatPortMap {
		t.Fatalf("server: %+v", c.Swarm)
	}
	if v, _ := config.GetKeyExact(diskDoc(t, n), "Addresses.NoAnnounce"); len(v.([]any)) != 19 {
		t.Fatalf("server NoAnnounce %v", v)
	}
	mustCall(t, n, "config/profile/apply", []string{"local-discovery"}, nil, nil)
	if c := n.Config(); len(c.Swarm.AddrFilters) != 0 || !c.Discovery.MDNS.Enabled {
		t.Fatalf("local-discovery after server: %+v", c.Swarm)
	}
	mustCall(t, n, "config/profile/apply", []string{"randomports"}, nil, nil)
	sw := n.Config().Addresses.Swarm
	// The profile writes Kubo's wildcard listen addresses into the
	// config (nothing here listens on them): built from net's constants.
	any4 := "/ip4/" + net.IPv4zero.String() + "/tcp/"
	any6 := "/ip6/" + net.IPv6unspecified.String() + "/tcp/"
	if len(sw) != 2 || !strings.HasPrefix(sw[0], any4) || strings.TrimPrefix(sw[0], any4) != strings.TrimPrefix(sw[1], any6) {
		t.Fatalf("randomports: %v", sw)
	}
}

// containsDoc reports whether got holds want: equal values, or maps
// where every key of want is in got with a value that holds want's
// (got may have more keys: cairn's own).
func containsDoc(got, want any) bool {
	wm, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(got, want)
	}
	gm, ok := got.(map[string]any)
	if !ok || (len(wm) == 0) != (len(gm) == 0) {
		return false
	}
	for k, wv := range wm {
		if gv, ok := gm[k]; !ok || !containsDoc(gv, wv) {
			return false
		}
	}
	return true
}

// Import.UnixFSDAGLayout "trickle" makes add build a trickle DAG unless
// --trickle says otherwise, as Kubo 0.42's add wires it; another value
// is refused with Kubo's message.
func TestConfig_ImportDAGLayout(t *testing.T) {
	n := testutil.MustOpenNode(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB: several chunks
	balanced := addBytes(t, n, data, map[string]string{"trickle": "false"})
	trickle := addBytes(t, n, data, map[string]string{"trickle": "true"})
	if balanced == trickle {
		t.Fatal("layouts give one CID")
	}
	mustCall(t, n, "config", []string{"Import.UnixFSDAGLayout", "trickle"}, nil, nil)
	if got := addBytes(t, n, data, nil); got != trickle {
		t.Fatalf("layout trickle from config: %s, want %s", got, trickle)
	}
	if got := addBytes(t, n, data, map[string]string{"trickle": "false"}); got != balanced {
		t.Fatalf("--trickle=false over the config: %s, want %s", got, balanced)
	}
	mustCall(t, n, "config", []string{"Import.UnixFSDAGLayout", "zigzag"}, nil, nil)
	dir := files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile(data)})
	_, err := rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil, nil, dir)
	wantErr(t, err, `Import.UnixFSDAGLayout must be "balanced" or "trickle", got "zigzag"`)
}

// illTypedValues are values of keys cairn reads that it could not use,
// each with what the refusal names. config/replace, config (set) and
// config edit refuse them all (node.CheckConfigValues). kubo marks keys
// whose type Kubo's config has: its config/replace then answers only
// "failed to decode file as config", as Kubo's.
var illTypedValues = []struct {
	key  string
	val  any
	want string
	kubo bool
}{
	{"Datastore.StorageMax", "1x", `Datastore.StorageMax "1x": unhandled size name: x`, false},
	{"Datastore.StorageMax", "-5GB", `Datastore.StorageMax "-5GB"`, false},
	{"Datastore.GCPeriod", "soon", `Datastore.GCPeriod: time: invalid duration "soon"`, false},
	{"Datastore.GCPeriod", "-1h", `Datastore.GCPeriod: -1h is not positive`, false},
	{"Swarm.Bandwidth.LANIn", "fast", `Swarm.Bandwidth.LANIn "fast"`, false},
	{"Swarm.ConnMgr.HighWater", 1, `HighWater 1 below LowWater`, false},
	{"Swarm.AddrFilters", []any{"/ip4/127.0.0.1"}, `Swarm.AddrFilters`, false},
	{"Addresses.Swarm", []any{"/ip4/127.0.0/tcp/1"}, `Addresses.Swarm "/ip4/127.0.0/tcp/1"`, false},
	{"Addresses.API", "127.0.0.1:5001", `Addresses.API "127.0.0.1:5001"`, false},
	{"Addresses.Announce", []any{"x"}, `Addresses.Announce "x"`, false},
	{"Bootstrap", []any{"/ip4/127.0.0.1/tcp/4001"}, `Bootstrap: "/ip4/127.0.0.1/tcp/4001": invalid p2p multiaddr`, false},
	{"Ipns.RepublishPeriod", "weekly", `Ipns.RepublishPeriod: time: invalid duration "weekly"`, false},
	{"Ipns.RecordLifetime", "0s", `Ipns.RecordLifetime: 0s is not positive`, false},
	{"Pubsub.SeenMessagesTTL", "x", `time: invalid duration "x"`, true},
	{"Swarm.ConnMgr.GracePeriod", "1 min", `time: unknown unit " min" in duration "1 min"`, true},
	{"Pubsub.SeenMessagesStrategy", "random", `Pubsub.SeenMessagesStrategy "random"`, false},
	{"Pubsub.Router", "meshsub", `unknown pubsub router meshsub`, false},
	{"Import.UnixFSHAMTDirectorySizeThreshold", "big", `strconv.ParseFloat: parsing "": invalid syntax`, true},
	{"Modules.HTTP.MaxBodySize", "lots", `Modules.HTTP.MaxBodySize "lots"`, false},
	{"Modules.Lua.MaxRunTime", "1 sec", `Modules.Lua.MaxRunTime "1 sec"`, false},
	{"Discovery.MDNS.Enabled", "yes", `cannot unmarshal string`, true},
	{"Swarm.ConnMgr.LowWater", "many", `cannot unmarshal string`, true},
}

// Ensure config/replace and config (set) refuse a value cairn could not
// use, with Kubo's "failure to decode config: ..." and the key, and leave
// the stored config as it was.
func TestConfig_IllTypedValues_Refused(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfgPath := filepath.Join(n.Repo, config.File)
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	shown := *mustCall(t, n, "config/show", nil, nil, nil).Values[0].(*map[string]any)
	for _, tc := range illTypedValues {
		t.Run(tc.key+"="+fmt.Sprint(tc.val), func(t *testing.T) {
			doc := map[string]any{}
			b, _ := json.Marshal(shown)
			json.Unmarshal(b, &doc)
			if err := config.SetKeyExact(doc, tc.key, tc.val); err != nil {
				t.Fatal(err)
			}
			b, _ = json.Marshal(doc)
			err := callErr(t, n, "config/replace", nil, nil, replaceDir(b))
			if tc.kubo {
				if err.Error() != "failed to decode file as config" {
					t.Errorf("config/replace: %v, want Kubo's \"failed to decode file as config\"", err)
				}
			} else if !strings.HasPrefix(err.Error(), "failure to decode config: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("config/replace: %v, want \"failure to decode config: ...%s...\"", err, tc.want)
			}
			v, _ := json.Marshal(tc.val)
			err = callErr(t, n, "config", []string{tc.key, string(v)}, map[string]string{"json": "true"}, nil)
			if !strings.HasPrefix(err.Error(), "failed to set config value: failure to decode config: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("config set: %v, want \"failed to set config value: failure to decode config: ...%s...\"", err, tc.want)
			}
			if after, _ := os.ReadFile(cfgPath); !bytes.Equal(before, after) {
				t.Fatal("a refused value changed the stored config")
			}
		})
	}
	// Good values of the same keys still go in.
	for key, val := range map[string]string{"Datastore.StorageMax": "5GiB", "Datastore.GCPeriod": "30m", "Addresses.API": "/ip4/127.0.0.1/tcp/5001"} {
		mustCall(t, n, "config", []string{key, val}, nil, nil)
	}
	if n.Storage().Max() != 5<<30 {
		t.Fatalf("StorageMax %d after setting 5GiB", n.Storage().Max())
	}
}

// config Ipns.DelegatedPublishers --expand-auto shows the publishers as
// name/publish uses them: "auto" stands for Kubo's public publisher on a
// node that runs no DHT (Routing.Type none), for nothing otherwise.
func TestConfig_ExpandAuto_DelegatedPublishers(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Ipns.DelegatedPublishers": []any{"auto", "http://127.0.0.1:1/"},
		"AutoConf.Enabled": true, "Routing.Type": "none"})
	get := func(opts map[string]string) string {
		b, err := json.Marshal(mustCall(t, n, "config", []string{"Ipns.DelegatedPublishers"}, opts, nil).Values[0].(*commands.ConfigField).Value)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := get(nil); got != `["auto","http://127.0.0.1:1/"]` {
		t.Errorf("as stored: %s", got)
	}
	if got := get(map[string]string{"expand-auto": "true"}); got != `["https://delegated-ipfs.dev/routing/v1/ipns","http://127.0.0.1:1"]` {
		t.Errorf("expanded (Routing.Type none): %s", got)
	}
	testutil.SetConfig(t, n, map[string]any{"Routing.Type": "auto"})
	if got := get(map[string]string{"expand-auto": "true"}); got != `["http://127.0.0.1:1"]` {
		t.Errorf("expanded (Routing.Type auto): %s", got)
	}
	testutil.SetConfig(t, n, map[string]any{"Ipns.DelegatedPublishers": []any{"auto"}})
	if got := get(map[string]string{"expand-auto": "true"}); got != `[]` {
		t.Errorf("expanded to nothing: %s", got)
	}
}

// FuzzConfigReplace feeds arbitrary documents to config/replace: a
// refused one leaves the config as it was.
func FuzzConfigReplace(f *testing.F) {
	n, check := fuzzNode(f)
	doc, err := n.ConfigFile().Doc()
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(doc)
	f.Add(good)
	f.Add([]byte(`{"Datastore":{"StorageMax":"1x"}}`))
	f.Add([]byte(`{"API":{"Authorizations":{"a":{"AuthSecret":"basic:","AllowedPaths":["/"]}}}}`))
	f.Add([]byte(`{"Identity":{"PeerID":"x"},"Modules":{"Enabled":["../x"]}}`))
	f.Add([]byte(`[1,2]`))
	// Values config/replace must refuse (TestConfig_IllTypedValues_Refused),
	// each in the node's whole config and alone.
	for _, tc := range illTypedValues {
		whole, alone := map[string]any{}, map[string]any{}
		json.Unmarshal(good, &whole)
		for _, d := range []map[string]any{whole, alone} {
			if err := config.SetKeyExact(d, tc.key, tc.val); err != nil {
				f.Fatal(err)
			}
			b, _ := json.Marshal(d)
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before, err := n.ConfigFile().Doc()
		if err != nil {
			t.Fatal(err)
		}
		pins := pinCount(t, n)
		_, err = rpc.Call(context.Background(), n, commands.DefaultTable, "config/replace", nil, nil, oneFile("config", data))
		check(t, err, pins)
		after, derr := n.ConfigFile().Doc()
		if derr != nil {
			t.Fatalf("config unreadable after replace (%v): %v", err, derr)
		}
		if err != nil && !reflect.DeepEqual(before, after) {
			t.Fatalf("a refused replace (%v) changed the config", err)
		}
		if err == nil {
			// Back to the original, for the next input (without the
			// private key, which config/replace keeps, as Kubo).
			b, _ := json.Marshal(before)
			var back map[string]any
			json.Unmarshal(b, &back)
			if id, ok := back["Identity"].(map[string]any); ok {
				delete(id, "PrivKey")
			}
			b, _ = json.Marshal(back)
			if _, err := rpc.Call(context.Background(), n, commands.DefaultTable, "config/replace", nil, nil, oneFile("config", b)); err != nil {
				t.Fatalf("restoring the config: %v", err)
			}
		}
	})
}

// Ensure config over HTTP with three arguments reads the key, as Kubo's
// does (its parser keeps the surplus value, so the command sees three
// arguments and gets): no set happens.
func TestConfig_ThreeArgsOverHTTP_Get(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	resp := pinPost(t, srv, "config?arg=Foo&arg=bar&arg=baz")
	wantErrorJSON(t, resp, http.StatusInternalServerError, `failed to get config value: "Foo not found"`)
	resp = pinPost(t, srv, "config?arg=Pubsub.Router&arg=floodsub&arg=x")
	b := readAll(t, resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"Key":"Pubsub.Router"`) || strings.Contains(string(b), "floodsub") {
		t.Fatalf("three arguments on an existing key: %d %s", resp.StatusCode, b)
	}
	if got := n.Config().Pubsub.Router; got == "floodsub" {
		t.Fatal("three arguments set the key")
	}
}
