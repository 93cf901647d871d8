package commands_test

import (
	"bytes"
	"mime/multipart"
	"net/url"
	"testing"

	"cairn/internal/testutil"
)

// Ensure small answers clients match on are Kubo 0.42's: the commands
// tree's root is named "ipfs", and dag/put with an unknown hash says
// go-multicodec's text.
func TestKuboShapes_CommandsRootAndDagPutHash(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	resp := rpcPost(t, srv, "commands", nil, nil, "")
	if got := lines(t, resp); got[0]["Name"] != "ipfs" {
		t.Fatalf("commands root: %v", got[0]["Name"])
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "")
	w.Write([]byte(`{"a":1}`))
	mw.Close()
	resp = rpcPost(t, srv, "dag/put", url.Values{"hash": {"bogus"}}, &body, mw.FormDataContentType())
	wantErrorJSON(t, resp, 500, `unknown multicodec: "bogus"`)
}
