// size.go: byte sizes in the config ("10GB", "256KiB", "200K", "10 gb",
// "1024"), read by one grammar for every size key, the one Kubo uses for
// Datastore.StorageMax (go-humanize: "GB" is 10^9 bytes, "GiB" 2^30, a
// bare number is bytes, case and a space before the unit do not matter).

package config

import (
	"fmt"

	humanize "github.com/dustin/go-humanize"
)

// parseBytes is the size grammar.
func parseBytes(s string) (uint64, error) { return humanize.ParseBytes(s) }

// ParseSize reads the byte size s of the config key key; the error names
// both: <key> "<s>": <why>.
func ParseSize(key, s string) (uint64, error) {
	v, err := parseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", key, s, err)
	}
	return v, nil
}

// ParseStorageMax reads Datastore.StorageMax as Kubo does ("10GB" is 10^10
// bytes; "" means no cap).
func ParseStorageMax(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	return ParseSize("Datastore.StorageMax", s)
}
