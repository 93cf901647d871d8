// keypem.go: private keys as PEM PKCS #8 (key export and key import with
// --format=pem-pkcs8-cleartext). Go's crypto/x509 reads and writes RSA
// and Ed25519 keys; it does not know the secp256k1 curve, so those keys
// are written here as RFC 5208's PrivateKeyInfo around an RFC 5915
// ECPrivateKey, the shape OpenSSL writes and reads.

package commands

import (
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/libp2p/go-libp2p/core/crypto"
)

var (
	oidECPublicKey = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1} // RFC 5480
	oidSecp256k1   = asn1.ObjectIdentifier{1, 3, 132, 0, 10}       // SEC 2
)

// privateKeyInfo is PKCS #8's PrivateKeyInfo (its optional attributes
// are neither written nor read).
type privateKeyInfo struct {
	Version    int
	Algorithm  pkix.AlgorithmIdentifier
	PrivateKey []byte
}

// ecPrivateKey is RFC 5915's ECPrivateKey. Inside PKCS #8 the curve is
// named by the outer AlgorithmIdentifier, so Curve is left out.
type ecPrivateKey struct {
	Version    int
	PrivateKey []byte
	Curve      asn1.ObjectIdentifier `asn1:"optional,explicit,tag:0"`
	PublicKey  asn1.BitString        `asn1:"optional,explicit,tag:1"`
}

// marshalPKCS8 is the DER of sk's PKCS #8 form.
func marshalPKCS8(sk crypto.PrivKey) ([]byte, error) {
	if k, ok := sk.(*crypto.Secp256k1PrivateKey); ok {
		return marshalSecp256k1(k)
	}
	std, err := crypto.PrivKeyToStdKey(sk)
	if err != nil {
		return nil, fmt.Errorf("converting libp2p private key to std Go key: %w", err)
	}
	if k, ok := std.(*ed25519.PrivateKey); ok {
		std = *k // x509 takes the value
	}
	der, err := x509.MarshalPKCS8PrivateKey(std)
	if err != nil {
		return nil, fmt.Errorf("marshalling key to PKCS8 format: %w", err)
	}
	return der, nil
}

func marshalSecp256k1(sk *crypto.Secp256k1PrivateKey) ([]byte, error) {
	raw, err := sk.Raw()
	if err != nil {
		return nil, err
	}
	pub := secp256k1.PrivKeyFromBytes(raw).PubKey().SerializeUncompressed()
	inner, err := asn1.Marshal(ecPrivateKey{Version: 1, PrivateKey: raw,
		PublicKey: asn1.BitString{Bytes: pub, BitLength: 8 * len(pub)}})
	if err != nil {
		return nil, err
	}
	curve, err := asn1.Marshal(oidSecp256k1)
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(privateKeyInfo{
		Algorithm:  pkix.AlgorithmIdentifier{Algorithm: oidECPublicKey, Parameters: asn1.RawValue{FullBytes: curve}},
		PrivateKey: inner,
	})
}

// parsePKCS8 reads the DER of a PKCS #8 private key, with Kubo's errors.
func parsePKCS8(der []byte) (crypto.PrivKey, error) {
	var info privateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err == nil && info.Algorithm.Algorithm.Equal(oidECPublicKey) {
		var curve asn1.ObjectIdentifier
		if _, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &curve); err == nil && curve.Equal(oidSecp256k1) {
			sk, err := parseSecp256k1(info.PrivateKey)
			if err != nil {
				return nil, fmt.Errorf("parsing PKCS8 format: %w", err)
			}
			return sk, nil
		}
	}
	std, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parsing PKCS8 format: %w", err)
	}
	if k, ok := std.(ed25519.PrivateKey); ok {
		std = &k // libp2p converts from the pointer
	}
	sk, _, err := crypto.KeyPairFromStdKey(std)
	if err != nil {
		return nil, fmt.Errorf("converting std Go key to libp2p key: %w", err)
	}
	return sk, nil
}

// parseSecp256k1 reads an ECPrivateKey of the secp256k1 curve: a scalar
// of at most 32 bytes in [1, n-1]; a public key, if given, must be the
// scalar's.
func parseSecp256k1(der []byte) (crypto.PrivKey, error) {
	var ec ecPrivateKey
	if rest, err := asn1.Unmarshal(der, &ec); err != nil || len(rest) != 0 {
		return nil, errors.New("invalid EC private key")
	}
	if ec.Version != 1 {
		return nil, fmt.Errorf("unsupported EC private key version %d", ec.Version)
	}
	if len(ec.PrivateKey) == 0 || len(ec.PrivateKey) > 32 {
		return nil, fmt.Errorf("invalid EC private key length %d", len(ec.PrivateKey))
	}
	var s secp256k1.ModNScalar
	if overflow := s.SetByteSlice(ec.PrivateKey); overflow || s.IsZero() {
		return nil, errors.New("EC private key not in the valid range for secp256k1")
	}
	k := secp256k1.NewPrivateKey(&s)
	if pub := ec.PublicKey.RightAlign(); len(pub) != 0 {
		if want, err := secp256k1.ParsePubKey(pub); err != nil || !want.IsEqual(k.PubKey()) {
			return nil, errors.New("EC public key does not match the private key")
		}
	}
	return (*crypto.Secp256k1PrivateKey)(k), nil
}
