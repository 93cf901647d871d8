package commands_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"

	"github.com/ipfs/boxo/files"
)

// Ensure small answers clients match on are Kubo 0.42's: the commands
// tree's root is named "ipfs", and dag/put with an unknown hash says
// go-multicodec's text (issue 12 item 16).
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

// Ensure the statistics commands answer offline as Kubo: 400, Code 1,
// "unable to run offline: ..." (issue 12 item 11).
func TestStats_Offline_ClientError(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for _, p := range []string{"stats/bw", "stats/bitswap", "bitswap/stat"} {
		resp := rpcPost(t, srv, p, nil, nil, "")
		b := readAll(t, resp.Body)
		if resp.StatusCode != 400 || !bytes.Contains(b, []byte(`"Message":"unable to run offline: this command must be run in online mode`)) ||
			!bytes.Contains(b, []byte(`"Code":1`)) {
			t.Fatalf("%s offline: %d %s", p, resp.StatusCode, b)
		}
	}
}

// Ensure files/rm of paths it cannot remove answers as Kubo: 200, one
// JSON string per path, and the trailer "can't remove some files"
// (issue 12 item 9).
func TestFilesRm_Errors_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	mustCall(t, n, "files/mkdir", []string{"/dir"}, nil, nil)
	resp := rpcPost(t, srv, "files/rm", url.Values{"arg": {"/nope", "/dir", "/"}}, nil, "")
	b := readAll(t, resp.Body)
	want := `"/nope: file does not exist"` + "\n" + `"/dir: path is a directory, use -r to remove directories"` + "\n" + `"/: cannot delete root"` + "\n"
	if resp.StatusCode != 200 || string(b) != want || resp.Trailer.Get("X-Stream-Error") != "can't remove some files" {
		t.Fatalf("files/rm: %d %q trailer %q", resp.StatusCode, b, resp.Trailer.Get("X-Stream-Error"))
	}
}

// Ensure cat of a symlink answers its target text, as Kubo (boxo's
// files.Symlink is a readable File), and that a zero-byte cat (empty
// file, offset at or past the end, length=0) is a byte stream as Kubo's:
// text/plain, X-Stream-Output: 1, X-Content-Length: 0 (issue 12 item 7).
func TestCat_SymlinkAndZeroBytes_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root := addTree(t, n, nil, map[string]files.Node{"d": files.NewMapDirectory(map[string]files.Node{
		"a.txt": files.NewBytesFile([]byte("hello")),
		"empty": files.NewBytesFile(nil),
		"link":  files.NewLinkFile("a.txt", nil),
	})})
	resp := rpcPost(t, srv, "cat", url.Values{"arg": {root + "/link"}}, nil, "")
	if b := readAll(t, resp.Body); resp.StatusCode != 200 || string(b) != "a.txt" || resp.Header.Get("X-Content-Length") != "5" {
		t.Fatalf("cat of a symlink: %d %q X-Content-Length %q", resp.StatusCode, b, resp.Header.Get("X-Content-Length"))
	}
	for _, q := range []url.Values{
		{"arg": {root + "/empty"}},
		{"arg": {root + "/a.txt"}, "offset": {"5"}},
		{"arg": {root + "/a.txt"}, "offset": {"9"}},
		{"arg": {root + "/a.txt"}, "length": {"0"}},
		{"arg": {root + "/a.txt", root + "/empty"}, "offset": {"7"}},
	} {
		resp := rpcPost(t, srv, "cat", q, nil, "")
		b := readAll(t, resp.Body)
		h := resp.Header
		if resp.StatusCode != 200 || len(b) != 0 || h.Get("Content-Type") != "text/plain" || h.Get("X-Stream-Output") != "1" ||
			h.Get("X-Content-Length") != "0" || h.Get("X-Chunked-Output") != "" {
			t.Fatalf("cat %v: %d %q headers %v", q, resp.StatusCode, b, h)
		}
	}
}

// Ensure a node without network reads as Kubo's offline node: a block it
// lacks is "block was not found locally (offline): ipld: could not find
// <cid>" from every read, with the CID as Kubo prints it (a CIDv1 in
// base58 shows in base32) (issue 12 item 16).
func TestOfflineNode_AbsentBlockText_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	v1 := "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	dir := "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"
	for _, tc := range []struct{ cmd, arg, want string }{
		{"block/get", "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB", notFound + "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB"},
		{"block/get", "zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA", notFound + "bafkreidon73zkcrwdb5iafqtijxildoonbwnpv7dyd6ef3qdgads2jc4su"},
		{"block/stat", v1, notFound + v1},
		{"dag/get", v1, notFound + v1},
		{"dag/stat", v1, notFound + v1},
		{"dag/export", v1, notFound + v1},
		{"cat", v1, notFound + v1},
		{"ls", dir, notFound + dir},
		{"files/stat", "/ipfs/" + v1, notFound + v1},
		{"pin/add", v1, "pin: " + notFound + v1},
	} {
		wantErrorJSON(t, rpcPost(t, srv, tc.cmd, url.Values{"arg": {tc.arg}}, nil, ""), 500, tc.want)
	}
	resp := rpcPost(t, srv, "refs", url.Values{"arg": {dir}}, nil, "")
	if b := readAll(t, resp.Body); string(b) != `{"Ref":"","Err":"`+notFound+dir+`"}`+"\n" {
		t.Fatalf("refs: %s", b)
	}
}

// Ensure files/write with count reads the whole upload before it
// answers: a large body cut short by count reset the connection under
// the client (kubo-rpc-client saw ECONNRESET).
func TestFilesWrite_Count_ReadsWholeBody(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, _ := mw.CreateFormFile("file", "")
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for i := 0; i < 32; i++ {
			if _, err := w.Write(chunk); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		mw.Close()
		pw.Close()
	}()
	q := url.Values{"arg": {"/big"}, "create": {"true"}, "count": {"10"}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v0/files/write?"+q.Encode(), pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("files/write of 32 MiB with count=10: %v", err)
	}
	readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	st := mustCall(t, n, "files/stat", []string{"/big"}, nil, nil).Values[0].(*commands.FilesStatOutput)
	if st.Size != 10 {
		t.Fatalf("size %d", st.Size)
	}
}

// Ensure the root of a recursive pin is not "indirect through" itself:
// Kubo answers that it is not pinned indirectly (found side by side).
func TestPinLs_IndirectOfRecursiveRoot_AsKubo(t *testing.T) {
	n := testutil.MustOpenNode(t)
	c := addTree(t, n, map[string]string{"pin": "true"}, map[string]files.Node{"f": files.NewBytesFile([]byte("hello world\n"))})
	wantErr(t, callErr(t, n, "pin/ls", []string{c}, map[string]string{"type": "indirect"}, nil), "path '"+c+"' is not pinned")
}
