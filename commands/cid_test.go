package commands_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/rpc"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
	mh "github.com/multiformats/go-multihash"
)

// cidVector is one cid/* entry of tests/testdata/kubo/kubo-cids.json.
type cidVector struct {
	Kind    string   `json:"kind"`
	Input   string   `json:"input"`
	Options []string `json:"options"`
	Command string   `json:"command"`
	Output  *string  `json:"output"`
	Error   *string  `json:"error"`
}

// cliOptionNames maps the Kubo CLI tokens used in the vectors to option
// names.
var cliOptionNames = map[string]string{"-f": "f", "-v": "v", "-b": "b", "--mc": "mc"}

// runCidText runs path in-process and renders what it emits as the CLI
// does: stdout, stderr, and the final error printed as "Error: ...".
func runCidText(t *testing.T, path string, args []string, opts map[string]string) (stdout, stderr string, err error) {
	t.Helper()
	res, err := rpc.Call(context.Background(), nil, commands.DefaultTable, path, args, opts, nil)
	if err != nil {
		return "", "", err
	}
	cmd := commands.DefaultTable.Find(path)
	var pairs []rpc.KV
	for k, v := range opts {
		pairs = append(pairs, rpc.KV{Key: k, Value: v})
	}
	typed, err := rpc.DecodeOptions(commands.DefaultTable.OptionsFor(path), pairs)
	if err != nil {
		t.Fatalf("decode options: %v", err)
	}
	var out, errOut bytes.Buffer
	tenv := &rpc.TextEnv{Out: &out, Err: &errOut, Req: &rpc.Request{Command: cmd, Opts: typed}}
	for _, v := range res.Values {
		if err := cmd.Text(tenv, v); err != nil {
			return out.String(), errOut.String(), err
		}
	}
	if cmd.TextDone != nil {
		err = cmd.TextDone(tenv)
	}
	return out.String(), errOut.String(), err
}

func loadCidVectors(t *testing.T) []cidVector {
	t.Helper()
	b, err := os.ReadFile(testutil.KuboVectors(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vectors []cidVector `json:"vectors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []cidVector
	for _, v := range doc.Vectors {
		if v.Kind == "cid/format" || v.Kind == "cid/base32" {
			out = append(out, v)
		}
	}
	return out
}

func TestCidFormat_Run_KuboVectors(t *testing.T) {
	vectors := loadCidVectors(t)
	if len(vectors) < 70 {
		t.Fatalf("found %d cid vectors, want at least 70", len(vectors))
	}
	for _, v := range vectors {
		t.Run(v.Command, func(t *testing.T) {
			opts := map[string]string{}
			for i := 0; i < len(v.Options); i += 2 {
				name, ok := cliOptionNames[v.Options[i]]
				if !ok || i+1 >= len(v.Options) {
					t.Fatalf("unexpected option tokens %q", v.Options)
				}
				opts[name] = v.Options[i+1]
			}
			stdout, stderr, err := runCidText(t, v.Kind, []string{v.Input}, opts)
			switch {
			case v.Output != nil:
				if err != nil || stderr != "" {
					t.Fatalf("err %v, stderr %q; want output %q", err, stderr, *v.Output)
				}
				if got, want := strings.TrimSuffix(stdout, "\n"), strings.TrimSuffix(*v.Output, "\n"); got != want {
					t.Fatalf("stdout %q, want %q", got, want)
				}
			case v.Error != nil:
				if err == nil {
					t.Fatalf("no error; stdout %q", stdout)
				}
				if stdout != "" {
					t.Fatalf("stdout %q, want none", stdout)
				}
				got := stderr + "Error: " + err.Error()
				if want := strings.TrimSuffix(*v.Error, "\n"); got != want {
					t.Fatalf("stderr %q, want %q", got, want)
				}
			default:
				t.Fatal("vector has neither output nor error")
			}
		})
	}
}

func TestCidFormat_Run_CommandErrors(t *testing.T) {
	const v0 = "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o"
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"f": "plain"}, `invalid format string: "plain"`},
		{map[string]string{"f": ""}, `invalid format string: ""`},
		{map[string]string{"v": "2"}, `invalid cid version: "2"`},
		{map[string]string{"v": "0", "mc": "raw"}, "cannot convert to CIDv0 with any codec other than dag-pb"},
		{map[string]string{"v": "0", "b": "base32"}, "cannot convert to CIDv0 with any multibase other than the implicit base58btc"},
		{map[string]string{"v": "0", "b": "z"}, "cannot convert to CIDv0 with any multibase other than the implicit base58btc"},
		{map[string]string{"mc": "no-such-codec"}, `unknown multicodec: "no-such-codec"`},
		{map[string]string{"mc": "no-such-codec", "v": "2"}, `unknown multicodec: "no-such-codec"`},
		{map[string]string{"b": "base99"}, "unsupported multibase encoding: base99"},
		{map[string]string{"f": "%x"}, "unrecognized specifier in format string: %x"},
		{map[string]string{"f": "abc%"}, "premature end of format string"},
	} {
		_, err := rpc.Call(context.Background(), nil, commands.DefaultTable, "cid/format", []string{v0}, tc.opts, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("opts %v: err %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestCidFormat_Text_MixedEntries(t *testing.T) {
	args := []string{"QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", "not-a-cid", "bad-cid", "",
		"bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4"}
	stdout, stderr, err := runCidText(t, "cid/format", args, map[string]string{"v": "1", "b": "base58btc"})
	if want := "zdj7WaCPMsy3FP2whSwpFXHjDEaTVmjnddYSn5W2Gdn4aEZFj\nzb2rhi36Gc9GJWijLEL6zW45MBux5FcFv5gJmjXA7VAMozEXY\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	wantErr := "not-a-cid: invalid cid: selected encoding not supported\n" +
		"bad-cid: invalid cid: illegal base32 data at input byte 2\n" +
		": invalid cid: cid too short\n"
	if stderr != wantErr {
		t.Errorf("stderr %q, want %q", stderr, wantErr)
	}
	if err == nil || err.Error() != "errors while displaying some entries" {
		t.Errorf("final error %v", err)
	}
}

func TestCidFormat_Run_Tokens(t *testing.T) {
	const raw = "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4"
	for _, tc := range []struct {
		args []string
		opts map[string]string
		want string
	}{
		{[]string{raw}, map[string]string{"f": "100%% %v"}, "100% cidv1"},
		{[]string{raw}, map[string]string{"f": "%s", "mc": "dag-pb", "v": "0"}, "QmZjTnYw2TFhn9Nn7tjmPSoTBoY7YRkwPzwSrSbabY24Kp"},
		{[]string{raw}, map[string]string{"mc": "0x70"}, "bafybeifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4"},
		{[]string{raw}, map[string]string{"f": "%c", "mc": "0x300001"}, "Code(3145729)"},
		{[]string{"zb2rhi36Gc9GJWijLEL6zW45MBux5FcFv5gJmjXA7VAMozEXY"}, map[string]string{}, "zb2rhi36Gc9GJWijLEL6zW45MBux5FcFv5gJmjXA7VAMozEXY"},
		{[]string{"zb2rhi36Gc9GJWijLEL6zW45MBux5FcFv5gJmjXA7VAMozEXY"}, map[string]string{"mc": "dag-cbor"}, "zdpuAwpFZNHketN4KbEjf5HXFHVxJnjtVN1pSxfAYT71TsHEe"},
	} {
		stdout, stderr, err := runCidText(t, "cid/format", tc.args, tc.opts)
		if err != nil || stderr != "" || stdout != tc.want+"\n" {
			t.Errorf("%v %v: stdout %q stderr %q err %v, want %q", tc.args, tc.opts, stdout, stderr, err, tc.want)
		}
	}
}

func TestCidBase32_Text_Args(t *testing.T) {
	stdout, stderr, err := runCidText(t, "cid/base32",
		[]string{"QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", "zb2rhi36Gc9GJWijLEL6zW45MBux5FcFv5gJmjXA7VAMozEXY"}, nil)
	want := "bafybeicg2rebjoofv4kbyovkw7af3rpiitvnl6i7ckcywaq6xjcxnc2mby\nbafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4\n"
	if err != nil || stderr != "" || stdout != want {
		t.Fatalf("stdout %q stderr %q err %v", stdout, stderr, err)
	}
}

const basesPrefixNumeric = `        0  identity
0      48  base2
b      98  base32
B      66  base32upper
c      99  base32pad
C      67  base32padupper
f     102  base16
F      70  base16upper
k     107  base36
K      75  base36upper
m     109  base64
M      77  base64pad
t     116  base32hexpad
T      84  base32hexpadupper
u     117  base64url
U      85  base64urlpad
v     118  base32hex
V      86  base32hexupper
z     122  base58btc
Z      90  base58flickr
🚀  128640  base256emoji
`

func TestCidBases_Text_Formats(t *testing.T) {
	var names, prefixes, numeric strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(basesPrefixNumeric, "\n"), "\n") {
		r := []rune(l)
		p := string(r[0])
		f := strings.Fields(string(r[1:]))
		fmt.Fprintf(&names, "%s\n", f[1])
		fmt.Fprintf(&prefixes, "%s  %s\n", p, f[1])
		fmt.Fprintf(&numeric, "%7s  %s\n", f[0], f[1])
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"prefix": "true", "numeric": "true"}, basesPrefixNumeric},
		{nil, names.String()},
		{map[string]string{"prefix": "true"}, prefixes.String()},
		{map[string]string{"numeric": "true"}, numeric.String()},
	} {
		stdout, _, err := runCidText(t, "cid/bases", nil, tc.opts)
		if err != nil || stdout != tc.want {
			t.Errorf("opts %v: err %v, stdout\n%s\nwant\n%s", tc.opts, err, stdout, tc.want)
		}
	}
	if !strings.HasPrefix(prefixes.String(), "   identity\n0  base2\n") {
		t.Errorf("derived --prefix listing starts %q", prefixes.String()[:20])
	}
}

const codecsNumeric = `   81  cbor
   85  raw
  112  dag-pb
  113  dag-cbor
  114  libp2p-key
  120  git-raw
  123  torrent-info
  124  torrent-file
  128  blake3-hashseq
  129  leofcoin-block
  130  leofcoin-tx
  131  leofcoin-pr
  133  dag-jose
  134  dag-cose
  144  eth-block
  145  eth-block-list
  146  eth-tx-trie
  147  eth-tx
  148  eth-tx-receipt-trie
  149  eth-tx-receipt
  150  eth-state-trie
  151  eth-account-snapshot
  152  eth-storage-trie
  153  eth-receipt-log-trie
  154  eth-receipt-log
  176  bitcoin-block
  177  bitcoin-tx
  178  bitcoin-witness-commitment
  192  zcash-block
  193  zcash-tx
  208  stellar-block
  209  stellar-tx
  224  decred-block
  225  decred-tx
  240  dash-block
  241  dash-tx
  250  swarm-manifest
  251  swarm-feed
  252  beeson
  297  dag-json
  496  swhid-1-snp
  512  json
46083  rdfc-1
46593  json-jcs
`

const codecsSupported = `   81  cbor
   85  raw
  112  dag-pb
  113  dag-cbor
  114  libp2p-key
  120  git-raw
  133  dag-jose
  297  dag-json
  512  json
`

// namesOf drops the numeric column of a "%5d  %s" listing.
func namesOf(listing string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(listing, "\n"), "\n") {
		b.WriteString(strings.Fields(l)[1] + "\n")
	}
	return b.String()
}

func hashesNumeric() string {
	var b strings.Builder
	for _, h := range []struct {
		code int
		name string
	}{{0, "identity"}, {17, "sha1"}, {18, "sha2-256"}, {19, "sha2-512"}, {20, "sha3-512"},
		{21, "sha3-384"}, {22, "sha3-256"}, {23, "sha3-224"}, {25, "shake-256"}, {26, "keccak-224"},
		{27, "keccak-256"}, {28, "keccak-384"}, {29, "keccak-512"}, {30, "blake3"}, {86, "dbl-sha2-256"}} {
		fmt.Fprintf(&b, "%5d  %s\n", h.code, h.name)
	}
	for bits := 160; bits <= 512; bits += 8 {
		fmt.Fprintf(&b, "%5d  blake2b-%d\n", 0xb200+bits/8, bits)
	}
	for bits := 160; bits <= 256; bits += 8 {
		fmt.Fprintf(&b, "%5d  blake2s-%d\n", 0xb240+bits/8, bits)
	}
	return b.String()
}

func TestCidCodecsHashes_Text_Formats(t *testing.T) {
	hashes := hashesNumeric()
	if !strings.Contains(hashes, "45588  blake2b-160\n") || !strings.HasSuffix(hashes, "45664  blake2s-256\n") {
		t.Fatalf("hash table helper is off:\n%s", hashes)
	}
	for _, tc := range []struct {
		path string
		opts map[string]string
		want string
	}{
		{"cid/codecs", map[string]string{"numeric": "true"}, codecsNumeric},
		{"cid/codecs", map[string]string{"n": "true"}, codecsNumeric},
		{"cid/codecs", nil, namesOf(codecsNumeric)},
		{"cid/codecs", map[string]string{"numeric": "true", "supported": "true"}, codecsSupported},
		{"cid/codecs", map[string]string{"s": "true"}, namesOf(codecsSupported)},
		{"cid/hashes", map[string]string{"numeric": "true"}, hashes},
		{"cid/hashes", map[string]string{"numeric": "true", "supported": "true"}, hashes},
		{"cid/hashes", nil, namesOf(hashes)},
	} {
		stdout, _, err := runCidText(t, tc.path, nil, tc.opts)
		if err != nil || stdout != tc.want {
			t.Errorf("%s %v: err %v, stdout\n%s\nwant\n%s", tc.path, tc.opts, err, stdout, tc.want)
		}
	}
}

func TestCidInspect_Text_Cases(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
	}{
		{"QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", `CID:        QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o
Version:    0
Multibase:  base58btc (implicit)
Multicodec: dag-pb (0x70, implicit)
Multihash:  sha2-256 (0x12, implicit)
  Length:   32 bytes
  Digest:   46d44814b9c5af141c3aaab7c05dc5e844ead5f91f12858b021eba45768b4c0e
CIDv0:      QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o
CIDv1:      bafybeicg2rebjoofv4kbyovkw7af3rpiitvnl6i7ckcywaq6xjcxnc2mby
`},
		{"zb2rhi36Gc9GJWijLEL6zW45MBux5FcFv5gJmjXA7VAMozEXY", `CID:        zb2rhi36Gc9GJWijLEL6zW45MBux5FcFv5gJmjXA7VAMozEXY
Version:    1
Multibase:  base58btc (z)
Multicodec: raw (0x55)
Multihash:  sha2-256 (0x12)
  Length:   32 bytes
  Digest:   a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447
CIDv0:      not possible, requires dag-pb (0x70), got raw (0x55)
CIDv1:      bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4
`},
	} {
		stdout, _, err := runCidText(t, "cid/inspect", []string{tc.arg}, nil)
		if err != nil || stdout != tc.want {
			t.Errorf("%s: err %v, stdout\n%s\nwant\n%s", tc.arg, err, stdout, tc.want)
		}
	}
}

func TestCidInspect_Text_NoCidV0(t *testing.T) {
	data := []byte("hello world\n")
	for _, tc := range []struct {
		code   uint64
		length int
		codec  uint64
		want   string
	}{
		{mh.SHA2_512, -1, cid.DagProtobuf, "CIDv0:      not possible, requires sha2-256 (0x12), got sha2-512 (0x13)\n"},
		{mh.SHA2_256, 20, cid.DagProtobuf, "CIDv0:      not possible, requires 32-byte digest, got 20\n"},
		{mh.SHA2_256, -1, 0x300001, "CIDv0:      not possible, requires dag-pb (0x70), got unknown (0x300001)\n"},
	} {
		sum, err := mh.Sum(data, tc.code, tc.length)
		if err != nil {
			t.Fatal(err)
		}
		c := cid.NewCidV1(tc.codec, sum)
		stdout, _, err := runCidText(t, "cid/inspect", []string{c.String()}, nil)
		if err != nil || !strings.Contains(stdout, "\n"+tc.want) {
			t.Errorf("%s: err %v, stdout\n%s\nwant line %q", c, err, stdout, tc.want)
		}
		if !strings.HasSuffix(stdout, "CIDv1:      "+c.String()+"\n") {
			t.Errorf("%s: stdout\n%s", c, stdout)
		}
	}
}

func TestCidInspect_Text_PeerIDHint(t *testing.T) {
	_, pub, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := peer.IDFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	k, err := peer.ToCid(pid).StringOfBase(mbase.Base36)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rpc.Call(context.Background(), nil, commands.DefaultTable, "cid/inspect", []string{pid.String()}, nil, nil)
	if err != nil || len(res.Values) != 1 {
		t.Fatalf("err %v, %d values", err, len(res.Values))
	}
	want := "invalid CID: invalid cid: selected encoding not supported\n" +
		"Note: the value is a PeerID; inspect its CID representation instead:\n  " + k
	if got := res.Values[0].(*commands.CidInspectRes).ErrorMsg; got != want {
		t.Errorf("ErrorMsg %q, want %q", got, want)
	}
	_, _, err = runCidText(t, "cid/inspect", []string{pid.String()}, nil)
	if err == nil || err.Error() != want {
		t.Errorf("text error %v", err)
	}
	if !strings.HasPrefix(k, "k51") {
		t.Errorf("libp2p-key CID %q", k)
	}
}

// post sends a POST to the server and returns the response and its body.
func post(t *testing.T, url, contentType string, body io.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestCidFormat_HTTP_NDJSON(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	resp, body := post(t, srv.URL+"/api/v0/cid/format?arg=QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o&arg=nope&v=1&b=base32", "", nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Chunked-Output") != "1" {
		t.Fatalf("status %d, X-Chunked-Output %q, body %q", resp.StatusCode, resp.Header.Get("X-Chunked-Output"), body)
	}
	want := `{"CidStr":"QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o","Formatted":"bafybeicg2rebjoofv4kbyovkw7af3rpiitvnl6i7ckcywaq6xjcxnc2mby","ErrorMsg":""}` + "\n" +
		`{"CidStr":"nope","Formatted":"","ErrorMsg":"invalid cid: selected encoding not supported"}` + "\n"
	if body != want {
		t.Errorf("body %q, want %q", body, want)
	}

	resp, body = post(t, srv.URL+"/api/v0/cid/format?arg=QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o&v=7", "", nil)
	if resp.StatusCode != 500 || !strings.Contains(body, `"Message":"invalid cid version: \"7\""`) {
		t.Errorf("bad version: status %d body %q", resp.StatusCode, body)
	}
}

func TestCidBase32_HTTP_BodyArgs(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(fw, "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o\nzb2rhi36Gc9GJWijLEL6zW45MBux5FcFv5gJmjXA7VAMozEXY\n")
	mw.Close()
	resp, body := post(t, srv.URL+"/api/v0/cid/base32", mw.FormDataContentType(), &buf)
	if resp.StatusCode != 200 || resp.Header.Get("X-Chunked-Output") != "1" {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
	var got []string
	dec := json.NewDecoder(strings.NewReader(body))
	for dec.More() {
		var r commands.CidFormatRes
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Formatted)
	}
	want := []string{"bafybeicg2rebjoofv4kbyovkw7af3rpiitvnl6i7ckcywaq6xjcxnc2mby", "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCidCodecs_HTTP_JSON(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	resp, body := post(t, srv.URL+"/api/v0/cid/codecs?supported=true", "", nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Chunked-Output") != "" {
		t.Fatalf("status %d chunked %q body %q", resp.StatusCode, resp.Header.Get("X-Chunked-Output"), body)
	}
	var list []commands.CodeAndName
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("%v: %q", err, body)
	}
	if len(list) != 9 || list[0] != (commands.CodeAndName{Code: 81, Name: "cbor"}) {
		t.Errorf("list %v", list)
	}
	if !strings.HasPrefix(body, `[{"Code":81,"Name":"cbor"},`) {
		t.Errorf("body %q", body)
	}

	resp, body = post(t, srv.URL+"/api/v0/cid/inspect?arg=bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4", "", nil)
	want := `{"cid":"bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4","version":1,` +
		`"multibase":{"prefix":"b","name":"base32"},"multicodec":{"code":85,"name":"raw"},` +
		`"multihash":{"code":18,"name":"sha2-256","length":32,"digest":"a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447"},` +
		`"cidV1":"bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4"}`
	if resp.StatusCode != 200 || strings.TrimSuffix(body, "\n") != want {
		t.Errorf("inspect: status %d body %q", resp.StatusCode, body)
	}
}
