// size.go: byte sizes in the config ("10GB", "256KiB", "200K", "10 gb"),
// parsed by one function, the way Kubo parses them (go-humanize: "GB" is
// 10^9 bytes, "GiB" 2^30, case and a space before the unit do not matter).

package node

import (
	"fmt"

	humanize "github.com/dustin/go-humanize"
)

// parseSize reads the byte size s of the config key key.
func parseSize(key, s string) (uint64, error) {
	v, err := humanize.ParseBytes(s)
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
	return parseSize("Datastore.StorageMax", s)
}
