package config_test

import (
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
