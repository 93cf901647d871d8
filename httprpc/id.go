// id.go: the "id" command.

package httprpc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
)

var idCommands = []*Command{{
	Path:     "id",
	Synopsis: "Show IPFS node id info.",
	Help: `Prints out information about the specified peer.
If no peer is specified, prints out information for local peers.

'cairn id' supports the format option for output with the following keys:
<id> : The peers id.
<aver>: Agent version.
<pver>: Protocol version.
<pubkey>: Public key.
<addrs>: Addresses (newline delimited).
<protocols>: Libp2p Protocol registrations (newline delimited).

EXAMPLE:

    cairn id Qmece2RkXhsKe5CRooNisBTh4SK119KrXXGmoK6V3kb8aH -f="<addrs>\n"`,
	Args: []Arg{{Name: "peerid", Kind: ArgString, Help: "Peer.ID of node to look up."}},
	Options: []Option{
		{Names: []string{"format", "f"}, Type: String, Help: "Optional output format."},
		{Names: []string{"peerid-base"}, Type: String, Default: "b58mh",
			Help: "Encoding used for peer IDs: Can either be a multibase encoded CID or a base58btc encoded multihash. Takes {b58mh|base36|k|base32|b...}."},
	},
	Output: OutSingle,
	Run:    runID,
	Type:   func() any { return &IDOutput{} },
	Text:   idText,
}}

// IDOutput is the body of id (Kubo's IdOutput; no omitempty).
type IDOutput struct {
	ID           string
	PublicKey    string
	Addresses    []string
	AgentVersion string
	Protocols    []string
}

// errRemoteID answers id for another peer: there is no network layer to
// ask it yet.
var errRemoteID = errors.New("'cairn id' cannot query information on remote peers: this cairn build has no network layer yet; if you only want to convert --peerid-base, pass --offline option")

// peerIDFormatter renders peer IDs as --peerid-base asks: "b58mh" (or
// "v0") is the plain base58 multihash; any multibase name gives the
// CIDv1 libp2p-key form in that base.
func peerIDFormatter(name string) (func(peer.ID) (string, error), error) {
	switch name {
	case "b58mh", "v0":
		return func(id peer.ID) (string, error) { return id.String(), nil }, nil
	}
	enc, err := mbase.EncoderByName(name)
	if err != nil {
		return nil, err
	}
	return func(id peer.ID) (string, error) {
		return peer.ToCid(id).StringOfBase(enc.Encoding())
	}, nil
}

func runID(r *Request, e Emitter) error {
	format, err := peerIDFormatter(r.String("peerid-base"))
	if err != nil {
		return err
	}
	id := r.Node.PeerID
	if len(r.Args) > 0 {
		if id, err = peer.Decode(r.Args[0]); err != nil {
			return errors.New("invalid peer id")
		}
	}
	out := &IDOutput{}
	if out.ID, err = format(id); err != nil {
		return err
	}
	if id == r.Node.PeerID {
		pk, err := crypto.MarshalPublicKey(r.Node.PrivKey.GetPublic())
		if err != nil {
			return err
		}
		out.PublicKey = base64.StdEncoding.EncodeToString(pk)
		// No libp2p host yet: no addresses, no protocols (Kubo's
		// offline answer).
		out.AgentVersion = AgentVersion()
		return e.Emit(out)
	}
	if !r.Bool("offline") && !r.Bool("local") {
		return errRemoteID
	}
	// --offline: what an empty peerstore knows, as Kubo answers offline:
	// the key if the ID embeds it, and the bare /p2p/ address.
	if pk, err := id.ExtractPublicKey(); err == nil {
		b, err := crypto.MarshalPublicKey(pk)
		if err != nil {
			return err
		}
		out.PublicKey = base64.StdEncoding.EncodeToString(b)
	}
	out.Addresses = []string{"/p2p/" + id.String()}
	return e.Emit(out)
}

func idText(t *TextEnv, v any) error {
	out := v.(*IDOutput)
	if t.Req == nil || !t.Req.IsSet("format") {
		b, err := json.MarshalIndent(out, "", "\t")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(t.Out, "%s\n\n", b)
		return err
	}
	// One replacement after the other, in Kubo's order.
	s := t.Req.String("format")
	for _, kv := range [][2]string{
		{"<id>", out.ID},
		{"<aver>", out.AgentVersion},
		{"<pubkey>", out.PublicKey},
		{"<addrs>", strings.Join(out.Addresses, "\n")},
		{"<protocols>", strings.Join(out.Protocols, "\n")},
		{`\n`, "\n"},
		{`\t`, "\t"},
	} {
		s = strings.ReplaceAll(s, kv[0], kv[1])
	}
	_, err := io.WriteString(t.Out, s)
	return err
}
