package commands_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/path"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/crypto"
)

func recordFile(b []byte) files.Directory {
	return files.NewMapDirectory(map[string]files.Node{"record": files.NewBytesFile(b)})
}

func signedRecord(t *testing.T, sk crypto.PrivKey, target string, seq uint64) []byte {
	t.Helper()
	rec, err := ipns.NewRecord(sk, path.FromCid(cid.MustParse(target)), seq, time.Now().Add(time.Hour), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ipns.MarshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Ensure name put checks a record as Kubo 0.43 does, keeps it offline only
// with --allow-offline, and that name inspect reads back every field.
func TestNamePut_OfflineChecksAndInspect(t *testing.T) {
	n := testutil.MustOpenNode(t)
	own := ipnsNameOf(n.PeerID)
	const target = "bafkqaaa"
	raw := signedRecord(t, n.PrivKey, target, 5)

	wantErr(t, callErr(t, n, "name/put", []string{own}, nil, recordFile(raw)), node.ErrPutOffline.Error())
	wantErr(t, callErr(t, n, "name/put", []string{own}, map[string]string{"allow-offline": "true", "allow-delegated": "true"}, recordFile(raw)),
		"cannot use both --allow-offline and --allow-delegated flags")
	wantErr(t, callErr(t, n, "name/get", []string{own}, nil, nil), node.ErrOfflineAction.Error())

	allow := map[string]string{"allow-offline": "true"}
	if err := callErr(t, n, "name/put", []string{"k51-not-a-name"}, allow, recordFile(raw)); !strings.HasPrefix(err.Error(), "invalid IPNS name: ") {
		t.Errorf("bad name: %v", err)
	}
	wantErr(t, callErr(t, n, "name/put", []string{own}, allow, recordFile(nil)), "record is empty")
	wantErr(t, callErr(t, n, "name/put", []string{own}, allow, recordFile(bytes.Repeat([]byte{1}, 11<<10))),
		"record exceeds maximum size of 10240 bytes, use --force to skip size check")
	if err := callErr(t, n, "name/put", []string{own}, allow, recordFile([]byte("not a record"))); !strings.HasPrefix(err.Error(), "invalid IPNS record: ") {
		t.Errorf("junk record: %v", err)
	}
	// Signed by another key: refused by the check, and with --force by the
	// record store's validator.
	other := testutil.MustOpenNode(t)
	foreign := signedRecord(t, other.PrivKey, target, 9)
	if err := callErr(t, n, "name/put", []string{own}, allow, recordFile(foreign)); !strings.HasPrefix(err.Error(), "record validation failed: ") {
		t.Errorf("foreign record: %v", err)
	}
	callErr(t, n, "name/put", []string{own}, map[string]string{"allow-offline": "true", "force": "true"}, recordFile(foreign))

	res := mustCall(t, n, "name/put", []string{"/ipns/" + own}, allow, recordFile(raw))
	if ie := res.Values[0].(*commands.IpnsEntry); ie.Name != own || ie.Value != "/ipfs/"+target {
		t.Fatalf("name/put: %+v", ie)
	}
	if got := renderText(t, "name/put", nil, res); got != own+"\n" {
		t.Errorf("name/put text: %q", got)
	}
	if got := renderText(t, "name/put", map[string]any{"quiet": true}, res); got != "" {
		t.Errorf("name/put --quiet text: %q", got)
	}
	if got := nameResolve(t, n, own, map[string]string{"nocache": "true"}); got != "/ipfs/"+target {
		t.Errorf("resolve after name/put: %s", got)
	}
	// Offline the store refuses an older record (Kubo's offline router).
	if err := callErr(t, n, "name/put", []string{own}, allow, recordFile(signedRecord(t, n.PrivKey, target, 2))); err == nil {
		t.Error("an older record replaced a newer one")
	}

	in := mustCall(t, n, "name/inspect", nil, map[string]string{"verify": own}, recordFile(raw)).Values[0].(*commands.IpnsInspectResult)
	e := in.Entry
	if e.Value != "/ipfs/"+target || e.Sequence == nil || *e.Sequence != 5 || e.TTL == nil || *e.TTL != 5*time.Minute ||
		e.ValidityType == nil || *e.ValidityType != ipns.ValidityEOL || e.Validity == nil || time.Until(*e.Validity) < 50*time.Minute {
		t.Fatalf("name/inspect entry: %+v", e)
	}
	if in.SignatureType != "V1+V2" || in.PbSize != len(raw) || !strings.Contains(in.HexDump, "00000000") ||
		in.Validation == nil || !in.Validation.Valid || in.Validation.Name != own {
		t.Fatalf("name/inspect: %+v", in)
	}
	text := renderText(t, "name/inspect", nil, &rpc.Result{Values: []any{in}})
	for _, want := range []string{"Value:          \"/ipfs/" + target + "\"\n", "Sequence:       5\n", "TTL:            5m0s\n",
		"Signature Type: V1+V2\n", "\nValidation results:\n", "\n Valid: true\n", "\nHex Dump:\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("name/inspect text lacks %q:\n%s", want, text)
		}
	}
	bad := mustCall(t, n, "name/inspect", nil, map[string]string{"verify": ipnsNameOf(other.PeerID), "dump": "false"}, recordFile(raw)).Values[0].(*commands.IpnsInspectResult)
	if bad.Validation == nil || bad.Validation.Valid || bad.Validation.Reason == "" || bad.HexDump != "" {
		t.Fatalf("name/inspect --verify with another name: %+v", bad)
	}
	if err := callErr(t, n, "name/inspect", nil, nil, recordFile([]byte("junk"))); err == nil {
		t.Fatal("name/inspect of junk succeeded")
	}
}

// Ensure name get on an online node answers the record's bytes, and that
// name put refuses a sequence not above the one the routing system has.
func TestNameGetPut_Online(t *testing.T) {
	n := testutil.MustOnlineNode(t, "none", nil)
	own := ipnsNameOf(n.PeerID)
	const target = "bafkqaaa"
	raw := signedRecord(t, n.PrivKey, target, 7)
	mustCall(t, n, "name/put", []string{own}, nil, recordFile(raw))
	got := mustCall(t, n, "name/get", []string{"/ipns/" + own}, nil, nil).Bytes
	if !bytes.Equal(got, raw) {
		t.Fatalf("name/get: %d bytes, want the %d put", len(got), len(raw))
	}
	// The same record again republishes it.
	mustCall(t, n, "name/put", []string{own}, nil, recordFile(raw))
	wantErr(t, callErr(t, n, "name/put", []string{own}, nil, recordFile(signedRecord(t, n.PrivKey, target, 7))),
		"existing IPNS record has sequence 7 >= new record sequence 7, use 'ipfs name put --force' to skip this check")
	newer := signedRecord(t, n.PrivKey, target, 8)
	mustCall(t, n, "name/put", []string{own}, nil, recordFile(newer))
	if got := mustCall(t, n, "name/get", []string{own}, nil, nil).Bytes; !bytes.Equal(got, newer) {
		t.Fatal("name/get after a newer put answers the old record")
	}
	if err := callErr(t, n, "name/get", []string{ipnsNameOf(testutil.MustOpenNode(t).PeerID)}, nil, nil); err == nil {
		t.Fatal("name/get of a name without a record succeeded")
	}
}
