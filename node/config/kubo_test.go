package config_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"cairn/node/config"
)

func readDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestDefaultDoc_IsKubosInit compares the default document with what
// Kubo 0.42's `ipfs init` wrote (testdata/README.md).
func TestDefaultDoc_IsKubosInit(t *testing.T) {
	want := readDoc(t, "testdata/init-default.json")
	got := config.KuboDefaultDoc()
	delete(got, "Identity")
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("default doc differs from Kubo's:\n got %s\nwant %s", g, w)
	}
}

// TestNormalize_KeepsKubosDocument: Kubo's own documents survive a
// decode and encode unchanged (beside the keys only cairn has, which the
// encode adds).
func TestNormalize_KeepsKubosDocument(t *testing.T) {
	for _, f := range []string{"testdata/init-default.json", "testdata/init-test.json"} {
		doc := readDoc(t, f)
		doc["Identity"] = map[string]any{"PeerID": ""}
		got, err := config.Normalize(doc)
		if err != nil {
			t.Fatal(f, err)
		}
		if !reflect.DeepEqual(config.WithoutOwnKeys(got), doc) {
			g, _ := json.MarshalIndent(got, "", "  ")
			t.Fatalf("%s changed by Normalize:\n%s", f, g)
		}
	}
}

func TestNormalize_EmptyGivesZeroValues(t *testing.T) {
	got, err := config.Normalize(map[string]any{"Fruit": "banana"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["Fruit"]; ok {
		t.Error("an unknown key survived Normalize")
	}
	ds := got["Datastore"].(map[string]any)
	if ds["StorageMax"] != "" || ds["Spec"] != nil || ds["HashOnRead"] != false {
		t.Errorf("Datastore = %v", ds)
	}
	if got["Bootstrap"] != nil {
		t.Errorf("Bootstrap = %v, want null", got["Bootstrap"])
	}
}

// TestDecode_TypeErrors: the messages are the ones Kubo 0.42 printed for
// `ipfs config --json <key> <value>` (run by hand, see testdata/README.md).
func TestDecode_TypeErrors(t *testing.T) {
	cases := []struct {
		doc  string
		want string
	}{
		{`{"Gateway":{"RootRedirect":5}}`, "failure to decode config: json: cannot unmarshal number into Go struct field Gateway.Gateway.RootRedirect of type string"},
		{`{"Import":{"UnixFSHAMTDirectorySizeThreshold":"abc"}}`, `failure to decode config: strconv.ParseFloat: parsing "": invalid syntax`},
		{`{"Import":{"UnixFSRawLeaves":"yes"}}`, `must be null/undefined, true, or false`},
		{`{"Swarm":{"ResourceMgr":{"Limits":{"System":{}}}}}`, "has been removed in Kubo 0.19"},
		{`{"Peering":{"Peers":[{"ID":"nope"}]}}`, "failure to decode config"},
		{`{"AutoNAT":{"ServiceMode":"sometimes"}}`, "unknown autonat mode: sometimes"},
	}
	for _, c := range cases {
		var doc map[string]any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		_, err := config.Decode(doc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.doc, err, c.want)
		}
	}
	// The two thresholds go in two documents: a config that sets both is
	// refused (DeprecatedShardingThreshold).
	ok := `{"Import":{"UnixFSHAMTDirectorySizeThreshold":1024,"UnixFSRawLeaves":null},"Swarm":{"ResourceMgr":{"Limits":{}}},` +
		`"Experimental":{"GraphsyncEnabled":false},"Datastore":{"Spec":{"any":["thing"]}}}`
	var doc map[string]any
	if err := json.Unmarshal([]byte(ok), &doc); err != nil {
		t.Fatal(err)
	}
	norm, err := config.Normalize(doc)
	if err != nil {
		t.Fatal(err)
	}
	if v := norm["Import"].(map[string]any)["UnixFSHAMTDirectorySizeThreshold"]; v != "1024" {
		t.Errorf("a numeric threshold is written back as %v, want \"1024\"", v)
	}
	norm, err = config.Normalize(map[string]any{"Internal": map[string]any{"UnixFSShardingSizeThreshold": "1B"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := norm["Internal"].(map[string]any)["UnixFSShardingSizeThreshold"]; v != "1B" {
		t.Errorf("Internal.UnixFSShardingSizeThreshold = %v", v)
	}
}

// TestCheckKey mirrors Kubo 0.42's answers to `ipfs config <key> <value>`.
func TestCheckKey(t *testing.T) {
	good := []string{
		"Gateway.RootRedirect", "Datastore.Spec", "Datastore.Spec.mounts", "API.HTTPHeaders.Access-Control-Allow-Origin",
		"Swarm.ConnMgr.LowWater", "Internal.UnixFSShardingSizeThreshold", "Pinning.RemoteServices.x.API.Key",
		"Plugins.Plugins.p.Config.anything.deep", "Mounts.FuseAllowOther", "Provide.DHT.Interval", "DNS.Resolvers.eth",
	}
	for _, k := range good {
		if err := config.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v", k, err)
		}
	}
	bad := map[string]string{
		"Fruit":                      "Fruit not found",
		"Discovery.MDNS.Interval":    "Discovery.MDNS.Interval not found",
		"Peering.Peers.0":            "Peering.Peers key is not a map",
		"Gateway.RootRedirect.x":     "Gateway.RootRedirect key is not a map",
		"Swarm.ConnMgr.LowWater.x":   "Swarm.ConnMgr.LowWater.x not found",
		"Identity.privkey":           "Identity.privkey not found",
		"Pinning.RemoteServices.x.y": "Pinning.RemoteServices.x.y not found",
	}
	for k, want := range bad {
		if err := config.CheckKey(k); err == nil || err.Error() != want {
			t.Errorf("CheckKey(%q) = %v, want %q", k, err, want)
		}
	}
}
