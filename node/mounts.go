// mounts.go: Kubo's Mounts section, which the FUSE mounts read.

package node

import "cairn/node/config"

// Mounts is where /ipfs and /ipns are mounted (Mounts.IPFS,
// Mounts.IPNS) and whether other users may read them
// (Mounts.FuseAllowOther).
type MountsConfig struct {
	IPFS, IPNS string
	AllowOther bool
}

// Mounts reads the Mounts section of the config.
func (c *ConfigFile) Mounts() (MountsConfig, error) {
	doc, err := c.Doc()
	if err != nil {
		return MountsConfig{}, err
	}
	k, err := config.Decode(doc)
	if err != nil {
		return MountsConfig{}, err
	}
	return MountsConfig{IPFS: k.Mounts.IPFS, IPNS: k.Mounts.IPNS, AllowOther: k.Mounts.FuseAllowOther == config.True}, nil
}
