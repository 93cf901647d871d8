package node_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// leaves flattens a document into dotted keys; an empty map is a leaf.
func leaves(doc map[string]any, prefix string, out map[string]any) map[string]any {
	for k, v := range doc {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			leaves(m, prefix+k+".", out)
			continue
		}
		out[prefix+k] = v
	}
	return out
}

// compareWithKubo checks that every key of Kubo's document is in cairn's
// with the same value, except the keys (or key prefixes ending in ".")
// in differ, which cairn sets on purpose.
func compareWithKubo(t *testing.T, cairn, kubo map[string]any, differ ...string) {
	t.Helper()
	got := leaves(testutil.JSONRoundTrip(t, cairn), "", map[string]any{})
	for k, want := range leaves(kubo, "", map[string]any{}) {
		if slicesHasPrefix(differ, k) {
			if _, ok := got[k]; !ok && !strings.HasPrefix(k, "Datastore.Spec.") {
				t.Errorf("%s: missing", k)
			}
			continue
		}
		if g, ok := got[k]; !ok || !reflect.DeepEqual(g, want) {
			t.Errorf("%s = %v (present %v), Kubo's %v", k, g, ok, want)
		}
	}
}

func slicesHasPrefix(list []string, k string) bool {
	for _, p := range list {
		if k == p || (strings.HasSuffix(p, ".") && strings.HasPrefix(k, p)) {
			return true
		}
	}
	return false
}

const kuboTestdata = "config/testdata"

// TestDefaultConfigDoc_KubosKeys: init writes every key Kubo 0.42's init
// writes, with Kubo's value except where cairn's default differs.
func TestDefaultConfigDoc_KubosKeys(t *testing.T) {
	var kubo map[string]any
	readJSON(t, filepath.Join(kuboTestdata, "init-default.json"), &kubo)
	id, err := node.NewIdentityOf("ed25519", 0)
	if err != nil {
		t.Fatal(err)
	}
	doc := config.DefaultDoc(id)
	compareWithKubo(t, doc, kubo, "Addresses.Swarm", "Discovery.MDNS.Enabled", "Bootstrap", "Datastore.Spec.")
	if _, err := node.CheckConfigDoc(doc); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(testutil.JSONRoundTrip(t, doc)["Datastore"].(map[string]any)["Spec"], testutil.JSONRoundTrip(t, config.DatastoreSpec())) {
		t.Error("Datastore.Spec is not cairn's")
	}
	for _, k := range []string{"Budget", "Modules"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("cairn's section %s missing", k)
		}
	}
}

// TestInit_TestProfile_IsKubos: a test-profile repo's config has Kubo's
// test-profile document in it, Datastore.Spec aside.
func TestInit_TestProfile_IsKubos(t *testing.T) {
	var kubo map[string]any
	readJSON(t, filepath.Join(kuboTestdata, "init-test.json"), &kubo)
	doc, err := config.ReadDoc(testutil.MustInitRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	compareWithKubo(t, doc, kubo, "Datastore.Spec.")
}

// TestProfiles_SetKubosKeys: each profile changes the keys Kubo's profile
// of that name changes, to the same values (config/testdata/README.md).
func TestProfiles_SetKubosKeys(t *testing.T) {
	var kubo map[string]map[string]any
	readJSON(t, filepath.Join(kuboTestdata, "profiles.json"), &kubo)
	// cairn's own differences: default-networking restores cairn's
	// defaults (its addresses, the bootstrap list written out, mDNS off)
	// and its module listeners.
	differ := map[string][]string{
		"default-networking": {"Addresses.Swarm", "Bootstrap", "Discovery.MDNS.Enabled", "Modules."},
		"randomports":        {"Addresses.Swarm"},
	}
	for name, want := range kubo {
		t.Run(name, func(t *testing.T) {
			id, err := node.NewIdentityOf("ed25519", 0)
			if err != nil {
				t.Fatal(err)
			}
			before := config.DefaultDoc(id)
			if err := config.ApplyProfiles(before, "test"); err != nil {
				t.Fatal(err)
			}
			before = testutil.JSONRoundTrip(t, before)
			after := testutil.JSONRoundTrip(t, before)
			if err := config.ApplyProfiles(after, name); err != nil {
				t.Fatal(err)
			}
			after = testutil.JSONRoundTrip(t, after)
			if _, err := node.CheckConfigDoc(after); err != nil {
				t.Fatal(err)
			}
			b, a := leaves(before, "", map[string]any{}), leaves(after, "", map[string]any{})
			changed := map[string]any{}
			for k, v := range a {
				if bv, ok := b[k]; !ok || !reflect.DeepEqual(bv, v) {
					changed[k] = v
				}
			}
			for k, v := range want {
				if slicesHasPrefix(differ[name], k) {
					continue
				}
				if !reflect.DeepEqual(changed[k], v) {
					t.Errorf("%s = %v, Kubo sets %v", k, changed[k], v)
				}
			}
			for k := range changed {
				if _, ok := want[k]; !ok && !slicesHasPrefix(differ[name], k) {
					t.Errorf("%s changed (to %v); Kubo's profile leaves it", k, changed[k])
				}
			}
			if name == "default-networking" && fmtJSON(a["Addresses.Swarm"]) != fmtJSON(config.DefaultConfig(id).Addresses.Swarm) {
				t.Errorf("default-networking Addresses.Swarm = %v", a["Addresses.Swarm"])
			}
			if name == "randomports" {
				sw := fmtJSON(changed["Addresses.Swarm"])
				if !regexp.MustCompile(`^\["/ip4/0\.0\.0\.0/tcp/(\d+)","/ip6/::/tcp/(\d+)"\]$`).MatchString(sw) {
					t.Errorf("randomports Addresses.Swarm = %s", sw)
				}
			}
		})
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestConfig_OldRepo_ReadsKuboDefaults: a config file written before
// cairn wrote Kubo's keys (cairn's sections only) reads with Kubo's
// defaults filled in, while the file stays as it is until the next write.
func TestConfig_OldRepo_ReadsKuboDefaults(t *testing.T) {
	dir := testutil.MustInitRepo(t)
	id, err := node.NewIdentityOf("ed25519", 0)
	if err != nil {
		t.Fatal(err)
	}
	old, err := config.DefaultConfig(id).ToDoc()
	if err != nil {
		t.Fatal(err)
	}
	old["Addresses"].(map[string]any)["API"] = "/ip4/127.0.0.1/tcp/0"
	old["Bootstrap"] = []any{}
	old["DNS"] = map[string]any{"Resolvers": map[string]any{}}
	raw, _ := json.MarshalIndent(old, "", "  ")
	path := filepath.Join(dir, config.File)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := node.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	doc, err := n.ConfigFile().Doc()
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"Gateway.RootRedirect":   "",
		"Mounts.IPFS":            "/ipfs",
		"Ipns.ResolveCacheSize":  float64(128),
		"Datastore.HashOnRead":   false,
		"DNS.Resolvers":          map[string]any{}, // the file's, not refilled
		"Pinning.RemoteServices": map[string]any{},
		"Addresses.API":          "/ip4/127.0.0.1/tcp/0",
	} {
		got, err := config.GetKeyExact(testutil.JSONRoundTrip(t, doc), key)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v (%v), want %v", key, got, err, want)
		}
	}
	if onDisk, _ := os.ReadFile(path); string(onDisk) != string(raw) {
		t.Error("reading the config rewrote the file")
	}
	if err := n.ConfigFile().Update(func(doc map[string]any) error {
		return config.SetKeyExact(doc, "Gateway.RootRedirect", "/x")
	}); err != nil {
		t.Fatal(err)
	}
	var disk map[string]any
	readJSON(t, path, &disk)
	if v, _ := config.GetKeyExact(disk, "Mounts.MFS"); v != "/mfs" {
		t.Errorf("after a write the file lacks Kubo's keys: Mounts.MFS = %v", v)
	}
}

// TestConfig_DeprecatedShardingThreshold: Kubo 0.42 reads
// Internal.UnixFSShardingSizeThreshold as Import.UnixFSHAMTDirectorySizeThreshold
// when that is unset, and refuses both.
func TestConfig_DeprecatedShardingThreshold(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Internal.UnixFSShardingSizeThreshold": "1B"})
	if got := n.Config().ImportSettings().UnixFSHAMTDirectorySizeThreshold; got.IsDefault() || got.WithDefault("") != "1B" {
		t.Fatalf("threshold %v, want 1B", got)
	}
	err := n.ConfigFile().Update(func(doc map[string]any) error {
		return config.SetKeyExact(doc, "Import.UnixFSHAMTDirectorySizeThreshold", "2KiB")
	})
	if err == nil || !strings.Contains(err.Error(), "was renamed to `Import.UnixFSHAMTDirectorySizeThreshold`") {
		t.Fatalf("both set: %v", err)
	}
	if v, _ := config.GetKeyExact(diskDocOf(t, n), "Import.UnixFSHAMTDirectorySizeThreshold"); v != nil {
		t.Fatalf("refused change stored: %v", v)
	}
}

func diskDocOf(t *testing.T, n *node.Node) map[string]any {
	t.Helper()
	var doc map[string]any
	readJSON(t, filepath.Join(n.Repo, config.File), &doc)
	return doc
}
