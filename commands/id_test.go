package commands_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
)

func idOut(t *testing.T, res *rpc.Result) *commands.IDOutput {
	t.Helper()
	if len(res.Values) != 1 {
		t.Fatalf("%d values", len(res.Values))
	}
	return res.Values[0].(*commands.IDOutput)
}

func TestID_Self_Fields(t *testing.T) {
	n := testutil.MustOpenNode(t)
	out := idOut(t, mustCall(t, n, "id", nil, nil, nil))
	if out.ID != n.PeerID.String() {
		t.Fatalf("ID %s, want %s", out.ID, n.PeerID)
	}
	raw, err := base64.StdEncoding.DecodeString(out.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := crypto.UnmarshalPublicKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	if pid, _ := peer.IDFromPublicKey(pk); pid != n.PeerID {
		t.Fatalf("public key is for %s", pid)
	}
	if out.AgentVersion != node.AgentVersion() || out.Addresses != nil || out.Protocols != nil {
		t.Fatalf("%+v", out)
	}
	// Our own ID as the argument, in either form, is "self".
	for _, arg := range []string{n.PeerID.String(), peer.ToCid(n.PeerID).String()} {
		if got := idOut(t, mustCall(t, n, "id", []string{arg}, nil, nil)); got.PublicKey != out.PublicKey || got.AgentVersion == "" {
			t.Fatalf("id %s: %+v", arg, got)
		}
	}
}

func TestID_PeeridBase_Encodings(t *testing.T) {
	n := testutil.MustOpenNode(t)
	for _, tc := range []struct {
		base   string
		prefix string
	}{{"b58mh", "12D3KooW"}, {"v0", "12D3KooW"}, {"base36", "k"}, {"k", "k"}, {"base32", "b"}} {
		out := idOut(t, mustCall(t, n, "id", nil, map[string]string{"peerid-base": tc.base}, nil))
		if !strings.HasPrefix(out.ID, tc.prefix) {
			t.Fatalf("%s: %s", tc.base, out.ID)
		}
		if pid, err := peer.Decode(out.ID); err != nil || pid != n.PeerID {
			t.Fatalf("%s: %s decodes to %s (%v)", tc.base, out.ID, pid, err)
		}
	}
	k, _ := peer.ToCid(n.PeerID).StringOfBase(mbase.Base36)
	if out := idOut(t, mustCall(t, n, "id", nil, map[string]string{"peerid-base": "base36"}, nil)); out.ID != k {
		t.Fatalf("base36 %s, want %s", out.ID, k)
	}
	err := callErr(t, n, "id", nil, map[string]string{"peerid-base": "nope"}, nil)
	wantErr(t, err, "unsupported multibase encoding: nope")
}

func TestID_OtherPeer_Errors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	wantErr(t, callErr(t, n, "id", []string{"garbage"}, nil, nil), "invalid peer id")
	other, err := node.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	err = callErr(t, n, "id", []string{other.PeerID}, nil, nil)
	if !strings.Contains(err.Error(), "cannot query information on remote peers") {
		t.Fatalf("error %v", err)
	}
	// --offline answers from what the ID itself holds.
	out := idOut(t, mustCall(t, n, "id", []string{other.PeerID}, map[string]string{"offline": "true", "peerid-base": "base36"}, nil))
	pid, _ := peer.Decode(other.PeerID)
	if want, _ := peer.ToCid(pid).StringOfBase(mbase.Base36); out.ID != want {
		t.Fatalf("ID %s, want %s", out.ID, want)
	}
	if out.PublicKey == "" || out.AgentVersion != "" || out.Protocols != nil ||
		len(out.Addresses) != 1 || out.Addresses[0] != "/p2p/"+other.PeerID {
		t.Fatalf("%+v", out)
	}
}

func TestID_HTTP_JSONShape(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	resp := rpcPost(t, srv, "id", url.Values{}, nil, "")
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 5 || string(m["Addresses"]) != "null" || string(m["Protocols"]) != "null" ||
		string(m["ID"]) != `"`+n.PeerID.String()+`"` || string(m["AgentVersion"]) != `"`+node.AgentVersion()+`"` {
		t.Fatalf("body %s", body)
	}
	if !bytes.HasPrefix(body, []byte(`{"ID":`)) {
		t.Fatalf("field order: %s", body)
	}

	resp = rpcPost(t, srv, "id", url.Values{"arg": {"garbage"}}, nil, "")
	wantErrorJSON(t, resp, 500, "invalid peer id")
}

func TestID_Text_Formats(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	out := idOut(t, mustCall(t, n, "id", nil, nil, nil))

	resp := rpcPost(t, srv, "id", url.Values{"encoding": {"text"}}, nil, "")
	body := readAll(t, resp.Body)
	want, _ := json.MarshalIndent(out, "", "\t")
	if string(body) != string(want)+"\n\n" {
		t.Fatalf("text %q, want %q", body, string(want)+"\n\n")
	}

	resp = rpcPost(t, srv, "id", url.Values{"encoding": {"text"}, "format": {`<id>\t<aver>\n<addrs>|<pver>`}}, nil, "")
	body = readAll(t, resp.Body)
	if want := n.PeerID.String() + "\t" + node.AgentVersion() + "\n|<pver>"; string(body) != want {
		t.Fatalf("format %q, want %q", body, want)
	}

	// The CLI renderer on a decoded value.
	var buf bytes.Buffer
	cmd := commands.DefaultTable.Find("id")
	req := &rpc.Request{Opts: map[string]any{"format": "<pubkey>"}}
	if err := cmd.Text(&rpc.TextEnv{Out: &buf, Req: req}, out); err != nil {
		t.Fatal(err)
	}
	if buf.String() != out.PublicKey {
		t.Fatalf("pubkey %q", buf.String())
	}
}
