// id.go: the "id" command.

package commands

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"cairn/node"
	"cairn/node/p2p"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
)

var idCommands = []*rpc.Command{{
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
	Args: []rpc.Arg{{Name: "peerid", Kind: rpc.ArgString, Help: "Peer.ID of node to look up."}},
	Options: []rpc.Option{
		{Names: []string{"format", "f"}, Type: rpc.String, Help: "Optional output format."},
		{Names: []string{"peerid-base"}, Type: rpc.String, Default: "b58mh",
			Help: "Encoding used for peer IDs: Can either be a multibase encoded CID or a base58btc encoded multihash. Takes {b58mh|base36|k|base32|b...}."},
	},
	Output: rpc.OutSingle,
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

// errRemoteID answers id for another peer on an offline node.
var errRemoteID = errors.New("'ipfs id' cannot query information on remote peers without a running daemon; if you only want to convert --peerid-base, pass --offline option")

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

func runID(r *rpc.Request, e rpc.Emitter) error {
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
	nt := r.Node.Net
	if id == r.Node.PeerID {
		pk, err := crypto.MarshalPublicKey(r.Node.PrivKey.GetPublic())
		if err != nil {
			return err
		}
		out.PublicKey = base64.StdEncoding.EncodeToString(pk)
		out.AgentVersion = node.AgentVersion()
		if nt != nil {
			// Online: the announced addresses and the protocols served.
			out.Addresses = sortedAddrs(nt.Host.Addrs(), "/p2p/"+id.String())
			for _, p := range nt.Host.Mux().Protocols() {
				out.Protocols = append(out.Protocols, string(p))
			}
			sort.Strings(out.Protocols)
		}
		// Offline: no addresses, no protocols (Kubo's answer).
		return e.Emit(out)
	}
	if nt != nil && !r.Bool("offline") && !r.Bool("local") {
		if len(nt.Host.Peerstore().Addrs(id)) == 0 {
			if _, err := nt.FindPeer(r.Ctx, id); err != nil {
				return err
			}
		}
		info := peerInfo(nt, id, format)
		return e.Emit(&info)
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

// peerInfo is what the peerstore knows of p (id <peer>, swarm/peers
// --identify).
func peerInfo(nt *p2p.Net, p peer.ID, format func(peer.ID) (string, error)) IDOutput {
	ps := nt.Host.Peerstore()
	var out IDOutput
	out.ID, _ = format(p)
	pk := ps.PubKey(p)
	if pk == nil {
		pk, _ = p.ExtractPublicKey()
	}
	if pk != nil {
		if b, err := crypto.MarshalPublicKey(pk); err == nil {
			out.PublicKey = base64.StdEncoding.EncodeToString(b)
		}
	}
	out.Addresses = sortedAddrs(ps.Addrs(p), "/p2p/"+p.String())
	if len(out.Addresses) == 0 {
		out.Addresses = nil
	}
	if protos, err := ps.GetProtocols(p); err == nil && len(protos) > 0 {
		for _, x := range protos {
			out.Protocols = append(out.Protocols, string(x))
		}
		sort.Strings(out.Protocols)
	}
	if v, err := ps.Get(p, "AgentVersion"); err == nil {
		if s, ok := v.(string); ok {
			out.AgentVersion = strings.Map(func(r rune) rune {
				if r < 0x20 || r == 0x7f {
					return -1
				}
				return r
			}, s)
		}
	}
	return out
}

func idText(t *rpc.TextEnv, v any) error {
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
