package commands_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"cairn/internal/testutil"
)

// metaCase is one request of tests/testdata/kubo/unixfs-metadata.json
// and Kubo 0.42's answer to it (see the README there).
type metaCase struct {
	Name    string
	Request struct {
		Path   string
		Params [][2]string
		Parts  [][4]string // field name, file name, content type, content (latin-1)
	}
	Answer struct {
		Status int
		Body   []any
	}
}

// TestUnixFSMetadata_AsKubo replays Kubo 0.42's answers about UnixFS mode
// and mtime (add, ls, files stat/ls/cp/chmod/touch) against a fresh node:
// same status, same JSON, same CIDs.
func TestUnixFSMetadata_AsKubo(t *testing.T) {
	raw, err := os.ReadFile("../tests/testdata/kubo/unixfs-metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []metaCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for i, c := range cases {
		q := url.Values{}
		for _, p := range c.Request.Params {
			q.Add(p[0], p[1])
		}
		var body bytes.Buffer
		ctype := ""
		if len(c.Request.Parts) > 0 {
			mw := multipart.NewWriter(&body)
			for _, p := range c.Request.Parts {
				h := textproto.MIMEHeader{}
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, p[0], p[1]))
				h.Set("Content-Type", p[2])
				w, err := mw.CreatePart(h)
				if err != nil {
					t.Fatal(err)
				}
				content := make([]byte, 0, len(p[3]))
				for _, r := range p[3] { // latin-1: one byte a rune
					content = append(content, byte(r))
				}
				w.Write(content)
			}
			mw.Close()
			ctype = mw.FormDataContentType()
		}
		resp := rpcPost(t, srv, c.Request.Path, q, &body, ctype)
		b := readAll(t, resp.Body)
		var got []any
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var v any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				v = line
			}
			got = append(got, v)
		}
		if resp.StatusCode != c.Answer.Status || !reflect.DeepEqual(got, c.Answer.Body) {
			t.Errorf("%d %s (%s %v):\n got %d %s\nwant %d %v", i, c.Name, c.Request.Path, c.Request.Params,
				resp.StatusCode, b, c.Answer.Status, c.Answer.Body)
		}
	}
}
