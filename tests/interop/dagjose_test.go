//go:build interop

// dagjose_test.go: the dag-jose codec (internal/dagjose) against Kubo
// 0.42's (its dagjose plugin, go-dag-jose): the same blocks and errors
// from dag put, the same dag get output of stored blocks.

package interop

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/url"
	"testing"

	"cairn/internal/daemon"
)

// Ensure dag put --store-codec=dag-jose gives Kubo's CIDs and errors for
// JWS and JWE in both serializations, and dag get shows each block (and
// blocks stored with block put, valid or not) as Kubo does.
func TestInterop_DagJOSE(t *testing.T) {
	c := startCairn(t, daemon.Options{Offline: true})
	k := startKubo(t, daemon.Options{Offline: true})
	const (
		payload = `"AXESICjDGMg3fEBSX7_fpbBUYF4E61TXLysmLJgfGEpFG8Pu"`
		sig     = `"z7a2MvPWLsd7leOeHyfeA1OcAFC9yy5rn1HD8xCeHz3nFrwyn_Su5xXUoaIxAre3fXhGjPkVSNiCE36AKiaMng"`
	)
	docs := []string{
		`{"payload":` + payload + `,"signatures":[{"protected":"eyJhbGciOiJFUzI1NksifQ","signature":` + sig + `}]}`,
		`{"payload":` + payload + `,"signature":` + sig + `,"extra":1,"header":{"kid":"did:key:z6Mk","n":5,"big":1700000000,"f":1.5,"l":[1,"a",{"x":0.000001}]}}`,
		`{"link":{"/":"bafkqaaa"},"payload":` + payload + `,"signature":` + sig + `}`,
		`{"payload":` + payload + `,"signatures":[]}`,
		`{"payload":` + payload + `,"signature":` + sig + `,"header":{"b":true}}`,
		`{"payload":` + payload + `,"signatures":[{"signature":` + sig + `,"other":1}]}`,
		`{"payload":` + payload + `,"signatures":[{"signature":5}]}`,
		`{"payload":` + payload + `}`,
		`{"payload":"not a cid","signature":` + sig + `}`,
		`{"ciphertext":"Y2lwaGVy","iv":"aXY","tag":"dGFn","aad":"YWFk","unprotected":{"u":1},"recipients":[{"header":{"alg":"dir"},"encrypted_key":"a2V5"},{"header":{"kid":"2"}}]}`,
		`{"ciphertext":"Y2lwaGVy","header":{"alg":"dir"},"encrypted_key":"a2V5"}`,
		`{"ciphertext":"Y2lwaGVy","iv":"!!"}`,
		`{"a":1}`,
	}
	stored := 0
	for _, doc := range docs {
		q := url.Values{"store-codec": {"dag-jose"}, "input-codec": {"dag-json"}}
		got, gotErr := dagPut(t, c, q, []byte(doc))
		want, wantErr := dagPut(t, k, q, []byte(doc))
		if got != want || gotErr != wantErr {
			t.Errorf("dag put %s:\ncairn %q %q\nkubo  %q %q", doc, got, gotErr, want, wantErr)
			continue
		}
		if got == "" {
			continue
		}
		stored++
		sameDagGet(t, c, k, got)
	}
	if stored < 5 {
		t.Fatalf("only %d documents stored", stored)
	}
	t.Logf("%d documents stored alike, %d refused alike", stored, len(docs)-stored)
	// Blocks that were not written by a dag-jose encoder: dag-cbor data
	// stored under the dag-jose codec.
	for _, doc := range []string{
		`{"payload":{"/":{"bytes":"AXESICjDGMg3fEBSX7/fpbBUYF4E61TXLysmLJgfGEpFG8Pu"}},"signatures":[{"signature":"AA","header":{"a":[1,1.5,"x"]}}]}`,
		`{"payload":` + payload + `,"link":{"/":"bafkqaaa"}}`,
		`{"payload":` + payload + `,"signatures":[{"signature":"AA","header":{"a":true}}]}`,
		`{"ciphertext":"AA","recipients":[{"x":1}]}`,
		`{"payload":"AAEC"}`,
		`[1]`,
	} {
		cb, _ := dagPut(t, c, url.Values{"store-codec": {"dag-cbor"}, "input-codec": {"dag-json"}}, []byte(doc))
		raw, err := c.Post("block/get", url.Values{"arg": {cb}}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		got := blockPut(t, c, raw)
		if want := blockPut(t, k, raw); got != want {
			t.Fatalf("block put: cairn %s, kubo %s", got, want)
		}
		sameDagGet(t, c, k, got)
	}
}

// dagPut posts data to d's dag/put and returns the CID, or the error
// message.
func dagPut(t *testing.T, d *daemon.Daemon, q url.Values, data []byte) (cid, msg string) {
	t.Helper()
	b, err := postFile(t, d, "dag/put", q, data)
	if err != nil {
		return "", errMessage(t, b, err)
	}
	var out struct {
		Cid struct {
			Slash string `json:"/"`
		}
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s dag put: %v: %s", d.Name, err, b)
	}
	return out.Cid.Slash, ""
}

func blockPut(t *testing.T, d *daemon.Daemon, data []byte) string {
	t.Helper()
	b, err := postFile(t, d, "block/put", url.Values{"cid-codec": {"dag-jose"}}, data)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Key string }
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s block put: %v: %s", d.Name, err, b)
	}
	return out.Key
}

// sameDagGet compares dag get of c (and its payload path) on both.
func sameDagGet(t *testing.T, c, k *daemon.Daemon, cid string) {
	t.Helper()
	for _, p := range []string{cid, cid + "/payload"} {
		got, gotErr := c.Post("dag/get", url.Values{"arg": {p}}, nil, "")
		want, wantErr := k.Post("dag/get", url.Values{"arg": {p}}, nil, "")
		gm, wm := "", ""
		if gotErr != nil {
			gm = errMessage(t, got, gotErr)
		}
		if wantErr != nil {
			wm = errMessage(t, want, wantErr)
		}
		if gm != wm || (gotErr == nil && !bytes.Equal(got, want)) {
			t.Errorf("dag get %s:\ncairn %s %q\nkubo  %s %q", p, got, gm, want, wm)
		}
	}
}

func postFile(t *testing.T, d *daemon.Daemon, cmd string, q url.Values, data []byte) ([]byte, error) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, err := mw.CreateFormFile("file", "data")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	mw.Close()
	return d.Post(cmd, q, &body, mw.FormDataContentType())
}

// errMessage is the Message of an RPC error answer.
func errMessage(t *testing.T, body []byte, err error) string {
	t.Helper()
	var e struct{ Message string }
	if json.Unmarshal(body, &e) != nil || e.Message == "" {
		t.Fatalf("not an RPC error: %v", err)
	}
	return e.Message
}
