package commands_test

import (
	"bytes"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"

	"cairn/internal/testutil"
)

// Ensure the multibase commands answer as Kubo 0.43's: byte streams of
// the encoded or decoded data, Kubo's examples and errors.
func TestMultibase_EncodeDecodeTranscodeList(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	call := func(cmd, b string, data string) (int, string, string) {
		t.Helper()
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		fw, _ := w.CreateFormFile("file", "f")
		fw.Write([]byte(data))
		w.Close()
		q := url.Values{}
		if b != "" {
			q.Set("b", b)
		}
		resp := rpcPost(t, srv, cmd, q, &body, w.FormDataContentType())
		return resp.StatusCode, resp.Header.Get("X-Stream-Output"), string(readAll(t, resp.Body))
	}
	for _, tc := range []struct{ cmd, b, in, want string }{
		{"multibase/encode", "base16", "hello\n", "f68656c6c6f0a"},
		{"multibase/encode", "", "hello", "uaGVsbG8"},
		{"multibase/decode", "", "f68656c6c6f", "hello"},
		{"multibase/decode", "", "uaGVsbG8", "hello"},
		{"multibase/transcode", "base16", "uaGVsbG8", "f68656c6c6f"},
		{"multibase/transcode", "", "f68656c6c6f", "uaGVsbG8"},
		{"multibase/encode", "base58btc", "", "z"},
	} {
		code, stream, got := call(tc.cmd, tc.b, tc.in)
		if code != 200 || stream != "1" || got != tc.want {
			t.Errorf("%s -b %q %q: %d (X-Stream-Output %q) %q, want %q", tc.cmd, tc.b, tc.in, code, stream, got, tc.want)
		}
	}
	for _, tc := range []struct{ cmd, b, in, want string }{
		{"multibase/decode", "", "!nope", "failed to decode multibase: "},
		{"multibase/transcode", "", "", "failed to decode multibase: "},
		{"multibase/encode", "nope", "x", "nope"},
		{"multibase/encode", "", strings.Repeat("x", 32<<20+1), "larger than 33554432 bytes"},
	} {
		if code, _, got := call(tc.cmd, tc.b, tc.in); code != 500 || !strings.Contains(got, tc.want) {
			t.Errorf("%s -b %q %.20q: %d %.200s, want an error with %q", tc.cmd, tc.b, tc.in, code, got, tc.want)
		}
	}
	list := readAll(t, rpcPost(t, srv, "multibase/list", url.Values{"prefix": {"true"}}, nil, "").Body)
	bases := readAll(t, rpcPost(t, srv, "cid/bases", url.Values{"prefix": {"true"}}, nil, "").Body)
	if !bytes.Equal(list, bases) || !bytes.Contains(list, []byte(`"base16"`)) {
		t.Errorf("multibase/list %s, cid/bases %s", list, bases)
	}
}
