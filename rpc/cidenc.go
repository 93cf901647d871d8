// cidenc.go: CID output formatting from the global cid-base and
// upgrade-cidv0-in-output options.

package rpc

import (
	"github.com/ipfs/go-cid"
	mbase "github.com/multiformats/go-multibase"
)

// CidEncoder formats CIDs for output as Kubo's cid-base options ask:
// with no option, CIDv0 stays base58btc and CIDv1 is base32; a base other
// than base58btc upgrades CIDv0 to CIDv1.
type CidEncoder struct {
	base    mbase.Encoding
	hasBase bool
	upgrade bool
}

// CidEncoder returns the request's encoder; an unknown base name is an
// error (Kubo answers 500).
func (r *Request) CidEncoder() (CidEncoder, error) {
	var e CidEncoder
	if name := r.String("cid-base"); name != "" {
		enc, err := mbase.EncoderByName(name)
		if err != nil {
			return e, err
		}
		e.base, e.hasBase = enc.Encoding(), true
		e.upgrade = e.base != mbase.Base58BTC
	}
	if r.IsSet("upgrade-cidv0-in-output") {
		e.upgrade = r.Bool("upgrade-cidv0-in-output")
	}
	return e, nil
}

// Encode renders c.
func (e CidEncoder) Encode(c cid.Cid) string {
	if c.Version() == 0 {
		if !e.upgrade {
			return c.String()
		}
		c = cid.NewCidV1(c.Type(), c.Hash())
	}
	if !e.hasBase {
		return c.String()
	}
	s, err := c.StringOfBase(e.base)
	if err != nil {
		return c.String()
	}
	return s
}

// BaseCidEncoder renders every CID as CIDv1 in base (dag resolve keeps
// the base of its input path).
func BaseCidEncoder(base mbase.Encoding) CidEncoder {
	return CidEncoder{base: base, hasBase: true, upgrade: true}
}

// WithUpgrade returns e with CIDv0 upgrading set to upgrade.
func (e CidEncoder) WithUpgrade(upgrade bool) CidEncoder {
	e.upgrade = upgrade
	return e
}
