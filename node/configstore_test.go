package node_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
)

func TestNode_ReplaceConfig_KeepsPrivKey(t *testing.T) {
	n := testutil.MustOpenNode(t)
	priv := n.Config().Identity.PrivKey
	doc, err := n.ConfigFile().Doc()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := node.NewIdentity()
	doc["Identity"] = map[string]any{"PrivKey": other.PrivKey, "privkey": other.PrivKey}
	doc["Datastore"].(map[string]any)["StorageMax"] = "1GB"
	if err := n.ConfigFile().Replace(doc); err != nil {
		t.Fatal(err)
	}
	disk, _ := config.ReadDoc(n.Repo)
	id := disk["Identity"].(map[string]any)
	if id["PrivKey"] != priv || id["PeerID"] != n.PeerID.String() || len(id) != 2 {
		t.Fatalf("Identity on disk: %v", id)
	}
	if c := n.Config(); c.Identity.PrivKey != priv || c.Datastore.StorageMax != "1GB" {
		t.Fatalf("config in memory: %+v", c)
	}
}

func TestNode_ReplaceConfig_Rejects(t *testing.T) {
	n := testutil.MustOpenNode(t)
	other, _ := node.NewIdentity()
	for _, tc := range []struct {
		doc map[string]any
		msg string
	}{
		{map[string]any{"Identity": map[string]any{"PeerID": other.PeerID}}, "does not match the node's private key"},
		{map[string]any{"identity": map[string]any{}}, `key "identity" must be spelled "Identity"`},
		{map[string]any{"Identity": "x"}, "Identity is not a map"},
		{map[string]any{"Bootstrap": 3}, "failure to decode config: "},
	} {
		err := n.ConfigFile().Replace(tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Fatalf("%v: error %v, want %q", tc.doc, err, tc.msg)
		}
	}
	if n.Config().Datastore.StorageMax != "10GB" {
		t.Fatal("config changed by a rejected replace")
	}
}

func TestNode_UpdateConfig_Concurrent(t *testing.T) {
	n := testutil.MustOpenNode(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := n.ConfigFile().Update(func(doc map[string]any) error {
				return config.SetKeyExact(doc, fmt.Sprintf("API.HTTPHeaders.X-%d", i), []any{"v"})
			})
			if err != nil {
				t.Error(err)
			}
			_ = n.Config().API
		}()
	}
	wg.Wait()
	if got := len(n.Config().API.HTTPHeaders); got != 16 {
		t.Fatalf("%d headers, want 16 (lost updates)", got)
	}
}

func TestNode_CheckConfigKey_Cases(t *testing.T) {
	for key, want := range map[string]string{
		"Datastore.StorageMax":            "",
		"API.HTTPHeaders.Anything":        "",
		"API.Authorizations.x.AuthSecret": "",
		"Routing.Type":                    "",
		"Discovery.MDNS.Enabled":          "",
		"Gateway.RootRedirect":            "",
		"Budget.MemoryMiB":                "",
		"Modules.HTTP.Ports":              "",
		"Fruit":                           "Fruit not found",
		"Discovery.MDNS.Interval":         "Discovery.MDNS.Interval not found",
		"Datastore.storagemax":            "Datastore.storagemax not found",
		"Bootstrap.x":                     "Bootstrap key is not a map",
		"Datastore.StorageMax.x":          "Datastore.StorageMax key is not a map",
		"API.Authorizations.x.Nope":       "API.Authorizations.x.Nope not found",
	} {
		err := config.CheckKey(key)
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("%s: %v, want %q", key, err, want)
		}
	}
}

func TestNode_MergeConfigDocs_Deep(t *testing.T) {
	left := map[string]any{"A": map[string]any{"x": 1, "y": 2}, "B": 1}
	right := map[string]any{"A": map[string]any{"y": 3}, "C": []any{1}}
	got := config.MergeDocs(left, right)
	a := got["A"].(map[string]any)
	if a["x"] != 1 || a["y"] != 3 || got["B"] != 1 || got["C"] == nil {
		t.Fatalf("%v", got)
	}
	if left["A"].(map[string]any)["y"] != 2 {
		t.Fatal("left was modified")
	}
}

// Ensure request paths read the config through the accessor while config
// commands replace it: run with -race (make test does), this fails on any
// read of the config that bypasses the lock.
func TestNode_Config_ReadWhileReplaced(t *testing.T) {
	n := testutil.MustOpenNode(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			testutil.SetConfig(t, n, map[string]any{
				"Datastore.StorageMax":         fmt.Sprintf("%dGB", 10+i%5),
				"Import.CidVersion":            i % 2,
				"Experimental.UrlstoreEnabled": i%2 == 0,
			})
		}
	}()
	for i := range 20 {
		if _, err := addOne(t, n, node.AddOptions{Pin: true}, fmt.Sprintf("data %d", i)); err != nil {
			t.Fatal(err)
		}
		if n.Storage().Max() < 10e9 {
			t.Fatalf("StorageMax %d", n.Storage().Max())
		}
		if _, err := n.UnixFS().CidBuilder(); err != nil {
			t.Fatal(err)
		}
		_ = n.Storage().FileManager()
	}
	close(stop)
	wg.Wait()
}

// Swarm.Bandwidth's caps are sizes of the one grammar too (the node
// checks them, with the network settings).
func TestSizeKeys_Bandwidth(t *testing.T) {
	for _, key := range []string{"LANIn", "LANOut", "WANIn", "WANOut"} {
		set := func(c *config.Config, v string) {
			*map[string]*string{"LANIn": &c.Swarm.Bandwidth.LANIn, "LANOut": &c.Swarm.Bandwidth.LANOut,
				"WANIn": &c.Swarm.Bandwidth.WANIn, "WANOut": &c.Swarm.Bandwidth.WANOut}[key] = v
		}
		for _, good := range []string{"10 gb", "10GB", "10GiB", "1024"} {
			c := config.DefaultConfig(config.Identity{})
			set(c, good)
			if err := node.CheckConfigValues(c); err != nil {
				t.Errorf("Swarm.Bandwidth.%s %q: %v", key, good, err)
			}
		}
		c := config.DefaultConfig(config.Identity{})
		set(c, "ten")
		want := "Swarm.Bandwidth." + key + ` "ten": `
		if err := node.CheckConfigValues(c); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Swarm.Bandwidth.%s \"ten\": %v, want %s...", key, err, want)
		}
	}
}

// A config set and an identity rotation at the same time both reach the
// file: each reads, changes and writes it under the one lock.
func TestConfig_SetAndRotateIdentity_Concurrent(t *testing.T) {
	n := testutil.MustOpenNode(t)
	for i := range 10 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(2)
		go func() {
			defer wg.Done()
			errs[0] = n.ConfigFile().Update(func(doc map[string]any) error {
				return config.SetKeyExact(doc, "Datastore.StorageGCWatermark", 50+i)
			})
		}()
		go func() {
			defer wg.Done()
			errs[1] = n.Keys().RotateIdentity(fmt.Sprintf("old-%d", i), "ed25519", 0)
		}()
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: set %v, rotate %v", i, errs[0], errs[1])
		}
		doc, err := config.ReadDoc(n.Repo)
		if err != nil {
			t.Fatal(err)
		}
		disk, err := config.Decode(doc)
		if err != nil {
			t.Fatal(err)
		}
		pid, _, err := disk.Identity.Keys()
		if err != nil {
			t.Fatal(err)
		}
		if disk.Datastore.StorageGCWatermark != int64(50+i) || pid != n.PeerID {
			t.Fatalf("round %d: file has watermark %d and peer %s, want %d and %s", i, disk.Datastore.StorageGCWatermark, pid, 50+i, n.PeerID)
		}
		if got := n.Config(); got.Datastore.StorageGCWatermark != int64(50+i) || got.Identity.PeerID != n.PeerID.String() {
			t.Fatalf("round %d: config in effect has watermark %d and peer %s", i, got.Datastore.StorageGCWatermark, got.Identity.PeerID)
		}
	}
}
