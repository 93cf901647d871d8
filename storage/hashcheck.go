// hashcheck.go: the check of every block read from a segment file.

package storage

import (
	"crypto/sha256"
	"fmt"
	"hash/crc32"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

// sha256Prefix is the multihash header of a 32-byte SHA-256 digest, the
// hash of nearly every stored block.
var sha256Prefix = [2]byte{mh.SHA2_256, 32}

// checkRead fails with ErrBlockDamaged, naming c, when data (c's bytes as
// read from l) are not what was stored. Every block read passes here, so
// that a bit flipped on the card is never served (cat, get, CAR export,
// bitswap, the gateway all read through View or Get). An index entry
// written since schema 4 carries the CRC-32C of the bytes, checked at
// memory speed; an older one is checked against the block's hash.
func checkRead(c cid.Cid, l loc, data []byte) error {
	if intact(c.Hash(), l, data) {
		return nil
	}
	return fmt.Errorf("%w: block %s: its bytes on disk no longer match its hash", ErrBlockDamaged, c)
}

// intact reports whether data, read from l, are the bytes of the block
// whose multihash is key.
func intact(key []byte, l loc, data []byte) bool {
	if l.hasSum {
		return crc32.Checksum(data, crcTable) == l.sum
	}
	if len(key) == 34 && key[0] == sha256Prefix[0] && key[1] == sha256Prefix[1] {
		// The standard library's SHA-256 (hardware instructions where
		// the CPU has them) without multihash's allocations.
		sum := sha256.Sum256(data)
		return string(sum[:]) == string(key[2:])
	}
	return VerifyBlock(key, data) == nil
}
