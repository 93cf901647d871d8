// hashcheck.go: the hash check of every block read from a segment file.

package storage

import (
	"crypto/sha256"
	"fmt"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

// sha256Prefix is the multihash header of a 32-byte SHA-256 digest, the
// hash of nearly every stored block.
var sha256Prefix = [2]byte{mh.SHA2_256, 32}

// checkRead fails with ErrBlockDamaged, naming c, when data (c's bytes as
// read from its segment) do not hash to c's multihash. Every block read
// passes here, so that a bit flipped on the card is never served (cat,
// get, CAR export, bitswap, the gateway all read through View or Get).
// SHA-256 takes the standard library's path (hardware instructions where
// the CPU has them) without multihash's allocations.
func checkRead(c cid.Cid, data []byte) error {
	key := c.Hash()
	if len(key) == 34 && key[0] == sha256Prefix[0] && key[1] == sha256Prefix[1] {
		sum := sha256.Sum256(data)
		if string(sum[:]) == string(key[2:]) {
			return nil
		}
	} else if VerifyBlock(key, data) == nil {
		return nil
	}
	return fmt.Errorf("%w: block %s: its bytes on disk no longer match its hash", ErrBlockDamaged, c)
}
