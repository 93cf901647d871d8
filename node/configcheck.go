// configcheck.go: checking a whole config document before it is saved by
// hand (config edit): it must decode, and its identity must hold together.

package node

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Keys decodes the identity's private key and checks that PeerID (when
// set) is the ID of that key.
func (id Identity) Keys() (peer.ID, crypto.PrivKey, error) {
	if id.PrivKey == "" {
		return "", nil, errors.New("config has no Identity.PrivKey")
	}
	raw, err := base64.StdEncoding.DecodeString(id.PrivKey)
	if err != nil {
		return "", nil, fmt.Errorf("config Identity.PrivKey: %w", err)
	}
	sk, err := crypto.UnmarshalPrivateKey(raw)
	if err != nil {
		return "", nil, fmt.Errorf("config Identity.PrivKey: %w", err)
	}
	pid, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return "", nil, err
	}
	if id.PeerID != "" && id.PeerID != pid.String() {
		return "", nil, fmt.Errorf("config Identity.PeerID %s does not match the private key (%s)", id.PeerID, pid)
	}
	return pid, sk, nil
}

// CheckConfigDoc reports why doc cannot be a node's config: it does not
// decode into Config (a value of the wrong type), or its identity is
// missing or inconsistent. It returns the decoded config otherwise.
func CheckConfigDoc(doc map[string]any) (*Config, error) {
	if doc == nil {
		return nil, errors.New("config: not a JSON object")
	}
	cfg, err := DecodeConfig(doc)
	if err != nil {
		return nil, err
	}
	if _, _, err := cfg.Identity.Keys(); err != nil {
		return nil, err
	}
	return cfg, nil
}
