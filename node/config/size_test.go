package config_test

import (
	"strings"
	"testing"

	"cairn/node/config"
)

// StorageMax is parsed as Kubo parses it (go-humanize), by the one parser
// the cap, the status page and init share.
func TestParseStorageMax_KuboForms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0},
		{"200K", 200_000},
		{"10G", 10_000_000_000},
		{"10gb", 10_000_000_000},
		{"10 GB", 10_000_000_000},
		{"10GB", 10_000_000_000},
		{"10GiB", 10 << 30},
		{"512MiB", 512 << 20},
		{"1234", 1234},
	} {
		got, err := config.ParseStorageMax(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseStorageMax(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"lots", "10XB", "-1GB"} {
		if _, err := config.ParseStorageMax(bad); err == nil {
			t.Errorf("ParseStorageMax(%q): no error", bad)
		}
	}
}

// Every size key reads the one grammar: the same inputs are accepted and
// "ten" is refused by each with the same shape, <key> "ten": <why>.
func TestSizeKeys_OneGrammar(t *testing.T) {
	keys := []struct {
		key string
		set func(c *config.Config, v string)
	}{
		{"Datastore.StorageMax", func(c *config.Config, v string) { c.Datastore.StorageMax = v }},
		{"Modules.HTTP.MaxBodySize", func(c *config.Config, v string) { c.Modules.HTTP.MaxBodySize = v }},
		{"Modules.HTTP.MaxUploadSize", func(c *config.Config, v string) { c.Modules.HTTP.MaxUploadSize = v }},
		{"Modules.Lua.MaxMemory", func(c *config.Config, v string) { c.Modules.Lua.MaxMemory = v }},
	}
	for _, k := range keys {
		for _, good := range []string{"10 gb", "10GB", "10GiB", "1024"} {
			c := config.DefaultConfig(config.Identity{})
			k.set(c, good)
			if err := config.CheckValues(c); err != nil {
				t.Errorf("%s %q: %v", k.key, good, err)
			}
		}
		c := config.DefaultConfig(config.Identity{})
		k.set(c, "ten")
		err := config.CheckValues(c)
		want := k.key + ` "ten": `
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s \"ten\": %v, want %s...", k.key, err, want)
		}
	}
	// Import's threshold and Kubo's other byte sizes are read when the
	// document decodes, by the same grammar (the refusal is Kubo's text).
	for _, key := range []string{"Import.UnixFSHAMTDirectorySizeThreshold", "Gateway.MaxRangeRequestFileSize",
		"Swarm.ResourceMgr.MaxMemory"} {
		for _, good := range []string{"10 gb", "10GB", "10GiB", "1024"} {
			doc := config.DefaultDoc(config.Identity{})
			if err := config.SetKeyExact(doc, key, good); err != nil {
				t.Fatal(err)
			}
			if _, err := config.Decode(doc); err != nil {
				t.Errorf("%s %q: %v", key, good, err)
			}
		}
		doc := config.DefaultDoc(config.Identity{})
		if err := config.SetKeyExact(doc, key, "ten"); err != nil {
			t.Fatal(err)
		}
		if _, err := config.Decode(doc); err == nil || !strings.HasPrefix(err.Error(), "failure to decode config: ") {
			t.Errorf("%s \"ten\": %v", key, err)
		}
	}
}
