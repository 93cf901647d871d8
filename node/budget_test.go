package node_test

import (
	"encoding/json"
	"strings"
	"testing"

	"cairn/board"
	"cairn/node"
	"cairn/node/config"
)

// The resource manager's memory the network layer runs with is the figure
// board's budget check counts: one formula, for every budget.
func TestConfig_NetLimits_SameNetMemoryAsBoard(t *testing.T) {
	for _, m := range []int{128, 130, 256, 333, 512, 1024, 3072, 4096} {
		b, err := board.Derive(m)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &config.Config{Budget: b}
		l, err := node.NetLimitsOf(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := int(l.LibP2PMemory >> 20); got != b.NetMemoryMiB || l.LibP2PMemory%(1<<20) != 0 {
			t.Errorf("budget %d MiB: network layer %d bytes, board counts %d MiB", m, l.LibP2PMemory, b.NetMemoryMiB)
		}
	}
}

// The Budget section is board's type: it round-trips through the config
// file without the derived NetMemoryMiB, and a config written by an older
// version (with CacheMiB) still loads.
func TestConfig_Budget_JSON(t *testing.T) {
	b, err := board.Derive(256)
	if err != nil {
		t.Fatal(err)
	}
	b.Board = "pi-zero-2w"
	doc, err := (&config.Config{Budget: b}).ToDoc()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(doc["Budget"])
	if s := string(raw); strings.Contains(s, "NetMemoryMiB") || !strings.Contains(s, `"Board":"pi-zero-2w"`) || !strings.Contains(s, `"MemoryMiB":256`) {
		t.Fatalf("Budget section: %s", s)
	}
	doc["Budget"].(map[string]any)["CacheMiB"] = 16
	cfg, err := config.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := b
	want.NetMemoryMiB = 0
	if cfg.Budget != want {
		t.Fatalf("decoded %+v, want %+v", cfg.Budget, want)
	}
}

// The provider records the DHT stores for others are a thousandth of
// Datastore.StorageMax at 256 bytes each (10 GB when unset) and 256 a MiB
// of budget (1024 MiB when unset), within 4,096 and 2^20; a peer gets an
// eighth.
func TestConfig_NetLimits_ProviderRecords(t *testing.T) {
	for _, c := range []struct {
		max         string
		mem         int
		total, peer int
	}{{"", 0, 39062, 4882}, {"10GB", 0, 39062, 4882}, {"100MB", 0, 4096, 512}, {"1TB", 0, 262144, 32768},
		{"42GB", 256, 65536, 8192}, {"1TB", 8192, 1 << 20, 1 << 17}, {"1TB", 8, 4096, 512}} {
		cfg := &config.Config{Datastore: config.Datastore{StorageMax: c.max}}
		cfg.Budget.MemoryMiB = c.mem
		l, err := node.NetLimitsOf(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if l.ProviderRecords != c.total || l.ProviderRecordsPerPeer != c.peer {
			t.Errorf("StorageMax %q, budget %d MiB: %d records, %d a peer; want %d, %d", c.max, c.mem, l.ProviderRecords, l.ProviderRecordsPerPeer, c.total, c.peer)
		}
	}
	if _, err := node.NetLimitsOf(&config.Config{Datastore: config.Datastore{StorageMax: "lots"}}); err == nil {
		t.Error("StorageMax \"lots\": no error")
	}
}
