package commands_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
)

// sendCutAdd posts an add whose multipart body stops in the middle of a
// 2 MB file (600 KB sent), half-closes the connection and returns the
// answer. chunked sends the body chunked, else with a Content-Length of
// the whole body.
func sendCutAdd(t *testing.T, srv *testutil.Server, query string, chunked bool) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	part := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cut.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
	const whole = 2 << 20
	head := "POST /api/v0/add?" + query + " HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
	if chunked {
		head += "Transfer-Encoding: chunked\r\n\r\n"
	} else {
		head += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(part)+whole+len("\r\n--B--\r\n"))
	}
	w := bufio.NewWriter(c)
	w.WriteString(head)
	send := func(b []byte) {
		if chunked {
			fmt.Fprintf(w, "%x\r\n", len(b))
		}
		w.Write(b)
		if chunked {
			w.WriteString("\r\n")
		}
	}
	send([]byte(part))
	buf := make([]byte, 60<<10)
	for i := 0; i < 10; i++ {
		rand.Read(buf)
		send(buf)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a cut add: %v", err)
	}
	return resp
}

// Ensure an add whose body is cut mid-file answers an error and leaves
// no pin, no MFS entry and (after a GC) no block: with Content-Length and
// chunked bodies, with --pin=false and --to-files.
func TestAdd_CutBodyKeepsNothing(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		chunked     bool
	}{
		{"content-length", "", false},
		{"chunked", "", true},
		{"no-pin", "pin=false", false},
		{"to-files", "to-files=/cut.bin", true},
		{"progress", "progress=true", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := testutil.MustOpenNode(t)
			srv := testutil.StartServer(t, n)
			ctx := context.Background()
			m, err := n.MFS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			base := n.Store.BlockBytes() // the empty MFS root
			resp := sendCutAdd(t, srv, tc.query, tc.chunked)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			msg := string(body) + resp.Trailer.Get("X-Stream-Error")
			if resp.StatusCode == 200 && resp.Trailer.Get("X-Stream-Error") == "" {
				t.Fatalf("cut add answered 200 with no error: %s", body)
			}
			if !strings.Contains(msg, "unexpected EOF") && !strings.Contains(msg, "context canceled") {
				t.Fatalf("cut add: %d %q", resp.StatusCode, msg)
			}
			if strings.Contains(msg, `"Hash"`) {
				t.Fatalf("cut add acknowledged a file: %s", body)
			}
			pins, err := n.Pins().List(ctx, "all")
			if err != nil || len(pins) != 0 {
				t.Fatalf("pins after a cut add: %v %v", pins, err)
			}
			if ents, err := m.List(ctx, "/", false, nil); err != nil || len(ents) != 0 {
				t.Fatalf("MFS after a cut add: %v %v", ents, err)
			}
			if _, err := n.Storage().CollectGarbage(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if b := n.Store.BlockBytes(); b != base {
				t.Fatalf("%d block bytes kept after a cut add and a GC", b)
			}
			if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
				t.Fatal(errs)
			}
		})
	}
}

// part is one multipart part of an add request: a file with content, or
// a directory part (application/x-directory) when dir is set.
type part struct {
	name string
	data string
	dir  bool
}

// postAdd sends parts as one add request, as Kubo's clients do (names
// URL-escaped in filename), and returns the response and its events.
func postAdd(t *testing.T, srv *testutil.Server, q url.Values, parts []part) (*http.Response, []node.AddEvent) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, url.QueryEscape(p.name)))
		if p.dir {
			h.Set("Content-Type", "application/x-directory")
		} else {
			h.Set("Content-Type", "application/octet-stream")
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, p.data)
	}
	mw.Close()
	resp := rpcPost(t, srv, "add", q, &body, mw.FormDataContentType())
	b := readAll(t, resp.Body)
	var evs []node.AddEvent
	if resp.StatusCode == 200 {
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var ev node.AddEvent
			if err := dec.Decode(&ev); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("add events %q: %v", b, err)
			}
			evs = append(evs, ev)
		}
	} else {
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	return resp, evs
}

// wantTreeAdd checks a 200 answer without a stream error and returns its
// events as name -> hash.
func wantTreeAdd(t *testing.T, resp *http.Response, evs []node.AddEvent) map[string]string {
	t.Helper()
	if resp.StatusCode != 200 {
		t.Fatalf("add: status %d", resp.StatusCode)
	}
	if e := resp.Trailer.Get("X-Stream-Error"); e != "" {
		t.Fatalf("add: stream error %q after %+v", e, evs)
	}
	m := map[string]string{}
	for _, ev := range evs {
		if ev.Hash == "" {
			continue
		}
		if _, dup := m[ev.Name]; dup {
			t.Fatalf("add: %q reported twice in %+v", ev.Name, evs)
		}
		m[ev.Name] = ev.Hash
	}
	return m
}

// dirNames lists the directory events' names in answer order.
func dirNames(evs []node.AddEvent, files map[string]bool) []string {
	var out []string
	for _, ev := range evs {
		if ev.Hash != "" && !files[ev.Name] {
			out = append(out, ev.Name)
		}
	}
	return out
}

// Ensure add builds the same tree, with the same CIDs and events, whatever
// the order of the parts and with or without directory parts: a
// directory's files need not be contiguous (kubo-rpc-client's addAll sends
// them so). The oracle is the sorted upload with directory parts, which
// the Kubo CLI sends.
func TestAdd_NonContiguousParts_SameTree(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)

	paths := []string{
		"test-dir/a/pp.txt", "test-dir/a/holmes.txt", "test-dir/b/jungle.txt", "test-dir/a/alice.txt",
		"test-dir/a/x/deep.txt", "test-dir/c.txt", "test-dir/b/y/z/leaf.txt", "test-dir/a/x/deeper.txt",
	}
	fileSet := map[string]bool{}
	for _, p := range paths {
		fileSet[p] = true
	}
	content := func(p string) string { return strings.Repeat(p+"\n", 3) }
	sorted := append([]string(nil), paths...)
	sort.Strings(sorted)
	dirsOf := map[string]bool{}
	for _, p := range paths {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirsOf[d] = true
		}
	}
	var oracleParts []part
	var dirList []string
	for d := range dirsOf {
		dirList = append(dirList, d)
	}
	// A directory part, then its entries: a depth-first walk by name.
	all := append(append([]string(nil), dirList...), sorted...)
	sort.Strings(all)
	for _, p := range all {
		oracleParts = append(oracleParts, part{name: p, data: content(p), dir: dirsOf[p]})
	}
	for _, q := range []url.Values{
		{"cid-version": {"1"}},
		// A tiny HAMT threshold makes every directory a sharded one.
		{"max-directory-links": {"2"}},
		{"wrap-with-directory": {"true"}},
	} {
		resp, oevs := postAdd(t, srv, q, oracleParts)
		want := wantTreeAdd(t, resp, oevs)
		if len(want) != len(paths)+len(dirsOf)+btoi(q.Has("wrap-with-directory")) {
			t.Fatalf("%v oracle: %d events: %+v", q, len(want), oevs)
		}
		wantDirs := dirNames(oevs, fileSet)

		rng := mrand.New(mrand.NewSource(1))
		orders := [][]string{paths}
		for i := 0; i < 6; i++ {
			o := append([]string(nil), paths...)
			rng.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
			orders = append(orders, o)
		}
		for i, o := range orders {
			var parts []part
			for _, p := range o {
				parts = append(parts, part{name: p, data: content(p)})
			}
			if i%2 == 1 {
				// Some directory parts too, some before and some after their files.
				parts = append([]part{{name: "test-dir/a", dir: true}}, parts...)
				parts = append(parts, part{name: "test-dir/b", dir: true})
			}
			resp, evs := postAdd(t, srv, q, parts)
			got := wantTreeAdd(t, resp, evs)
			for name, h := range want {
				if got[name] != h {
					t.Fatalf("%v order %q: %s = %q, want %q (events %+v)", q, o, name, got[name], h, evs)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%v order %q: %d events, want %d: %+v", q, o, len(got), len(want), evs)
			}
			if gd := dirNames(evs, fileSet); strings.Join(gd, ",") != strings.Join(wantDirs, ",") {
				t.Fatalf("%v order %q: directory events %q, want %q", q, o, gd, wantDirs)
			}
			// File events come in upload order, before the directories.
			var gotFiles []string
			for _, ev := range evs[:len(o)] {
				gotFiles = append(gotFiles, ev.Name)
			}
			if strings.Join(gotFiles, ",") != strings.Join(o, ",") {
				t.Fatalf("%v: file events %q, want upload order %q", q, gotFiles, o)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Ensure the same path twice (two files, or a file and a directory) is an
// error before any output, with nothing pinned; top-level entries with
// one name stay separate entries, as Kubo adds them.
func TestAdd_PathTwice_ErrorBeforeOutput(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	before := countPins(t, srv)
	for _, tc := range []struct {
		name  string
		q     url.Values
		parts []part
	}{
		{"file twice", nil, []part{{name: "d/a/x", data: "1"}, {name: "d/b/y", data: "2"}, {name: "d/a/x", data: "3"}}},
		{"dir then file", nil, []part{{name: "d/a/x", data: "1"}, {name: "d/b", data: "2"}, {name: "d/a", data: "3"}}},
		{"dir part then file", nil, []part{{name: "d/a", dir: true}, {name: "d/a/x", data: "2"}, {name: "d/a", data: "3"}}},
		{"wrapped files", url.Values{"wrap-with-directory": {"true"}}, []part{{name: "a", data: "1"}, {name: "a", data: "2"}}},
		{"second top-level entry", nil, []part{{name: "ok.txt", data: "fine"}, {name: "d/a", data: "1"}, {name: "d/a", data: "2"}}},
	} {
		resp, evs := postAdd(t, srv, tc.q, tc.parts)
		if resp.StatusCode == 200 {
			t.Fatalf("%s: 200 %+v, trailer %q", tc.name, evs, resp.Trailer.Get("X-Stream-Error"))
		}
		wantErrorJSON(t, resp, 500, "directory already has entry by that name")
		if got := countPins(t, srv); got != before {
			t.Fatalf("%s: %d pins after the refused add, %d before", tc.name, got, before)
		}
	}
	// Two top-level files (or directories) of one name are two entries.
	resp, evs := postAdd(t, srv, nil, []part{{name: "f", data: "1"}, {name: "f", data: "2"}, {name: "d/x", data: "1"}, {name: "e/y", data: "2"}, {name: "d/z", data: "3"}})
	wantTreeAddAll(t, resp)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Name)
	}
	if want := "f,f,d/x,d,e/y,e,d/z,d"; strings.Join(got, ",") != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if evs[0].Hash == evs[1].Hash || evs[3].Hash == evs[7].Hash {
		t.Fatalf("separate entries share a CID: %+v", evs)
	}
}

// wantTreeAddAll checks a 200 answer without a stream error.
func wantTreeAddAll(t *testing.T, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != 200 || resp.Trailer.Get("X-Stream-Error") != "" {
		t.Fatalf("add: status %d, stream error %q", resp.StatusCode, resp.Trailer.Get("X-Stream-Error"))
	}
}

// countPins counts recursive pins through the RPC.
func countPins(t *testing.T, srv *testutil.Server) int {
	t.Helper()
	resp := rpcPost(t, srv, "pin/ls", url.Values{"type": {"recursive"}}, nil, "")
	var out struct{ Keys map[string]any }
	if err := json.Unmarshal(readAll(t, resp.Body), &out); err != nil {
		t.Fatal(err)
	}
	return len(out.Keys)
}

// Ensure a large add answer, sent at once when a chunked body ends,
// reaches the client whole: the server reads the body's last chunk before
// it closes the connection (unread input made the close a reset, and the
// client lost the end of the answer).
func TestAdd_ChunkedBody_LargeAnswerWhole(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	const nFiles = 12000
	for round := 0; round < 4; round++ {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			for i := 0; i < nFiles; i++ {
				w, _ := mw.CreateFormFile("file", url.QueryEscape(fmt.Sprintf("d/f%05d", i)))
				fmt.Fprintf(w, "%d-%d\n", round, i)
			}
			pw.CloseWithError(mw.Close())
		}()
		req, _ := http.NewRequest("POST", srv.URL+"/api/v0/add?only-hash=true", pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("round %d: reading the answer: %v (after %d bytes)", round, err, len(b))
		}
		if n := bytes.Count(b, []byte("\n")); n != nFiles+1 {
			t.Fatalf("round %d: %d events, want %d", round, n, nFiles+1)
		}
	}
}

// FuzzMultipartAdd feeds arbitrary multipart bodies to the add path
// (only-hash): it must end with events or an error, never a panic, and
// nothing may be stored.
func FuzzMultipartAdd(f *testing.F) {
	for _, s := range multipartSeeds() {
		f.Add(s)
	}
	n := testutil.MustOpenNode(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		mr := multipart.NewReader(bytes.NewReader(body), "B")
		dir, err := files.NewFileFromPartReader(mr, "multipart/form-data")
		if err != nil {
			return
		}
		_, err = rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil,
			map[string]string{"only-hash": "true", "wrap-with-directory": boolStr(len(body)%3 == 0)}, dir)
		if err != nil && strings.Contains(err.Error(), "panic") {
			t.Fatal(err)
		}
		if st, _ := n.Store.Stat(); st.NumBlocks != 0 {
			t.Fatalf("only-hash stored %d blocks", st.NumBlocks)
		}
	})
	if errs := n.Store.Check(storage.CheckOptions{}); len(errs) > 0 {
		f.Fatal(errs)
	}
}

// multipartSeeds are multipart bodies (boundary "B") for the add targets.
func multipartSeeds() [][]byte {
	seed := func(parts ...[3]string) []byte {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.SetBoundary("B")
		for _, p := range parts {
			h := map[string][]string{"Content-Disposition": {`form-data; name="file"; filename="` + p[0] + `"`}}
			if p[1] != "" {
				h["Content-Type"] = []string{p[1]}
			}
			w, _ := mw.CreatePart(h)
			w.Write([]byte(p[2]))
		}
		mw.Close()
		return b.Bytes()
	}
	return [][]byte{
		seed([3]string{"d", "application/x-directory", ""}, [3]string{"d%2Fa", "", "hello"}),
		seed([3]string{"..%2F..%2Fetc", "", "x"}, [3]string{"l", "application/symlink", "target"}),
		seed([3]string{"a%2Fb", "", "1"}, [3]string{"c", "", "2"}, [3]string{"a%2Fd", "", "3"}),
		[]byte("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nunterminated"),
		[]byte("--B--\r\n"),
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// FuzzMultipartAddStored is FuzzMultipartAdd with the blocks stored and
// pinned.
func FuzzMultipartAddStored(f *testing.F) {
	n, check := fuzzNode(f)
	for _, s := range multipartSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		mr := multipart.NewReader(bytes.NewReader(body), "B")
		dir, err := files.NewFileFromPartReader(mr, "multipart/form-data")
		if err != nil {
			return
		}
		before := pinCount(t, n)
		_, err = rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil,
			map[string]string{"wrap-with-directory": boolStr(len(body)%3 == 0)}, dir)
		check(t, err, before)
	})
}

// Ensure add refuses a max-file-links that can never finish (a file node
// of one link), as a 400-class answer before reading the body.
func TestAdd_MaxFileLinksOne(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "f")
	w.Write(bytes.Repeat([]byte("a"), 300<<10))
	mw.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp := rpcPost(t, srv, "add", map[string][]string{"max-file-links": {"1"}}, &body, mw.FormDataContentType())
		b, _ := io.ReadAll(resp.Body)
		msg := string(b) + resp.Trailer.Get("X-Stream-Error")
		if !strings.Contains(msg, "max-file-links must be at least 2, got 1") {
			t.Errorf("add max-file-links=1: %d %q", resp.StatusCode, msg)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("add max-file-links=1 still running after 10s")
	}
}

// Ensure a client that goes away mid-upload leaves the store consistent
// and the server serving.
func TestAdd_ClientDisconnectMidUpload(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	head := "POST /api/v0/add HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nTransfer-Encoding: chunked\r\n\r\n"
	part := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big\"\r\n\r\n"
	c.Write([]byte(head))
	chunk := func(b []byte) {
		c.Write([]byte(strings.ToUpper(strconvHex(len(b))) + "\r\n"))
		c.Write(b)
		c.Write([]byte("\r\n"))
	}
	chunk([]byte(part))
	buf := make([]byte, 64<<10)
	for i := 0; i < 20; i++ {
		rand.Read(buf)
		chunk(buf)
	}
	c.Close()
	time.Sleep(200 * time.Millisecond)
	if errs := n.Store.Check(storage.CheckOptions{VerifyHashes: true}); len(errs) > 0 {
		t.Fatal(errs)
	}
	resp, _ := testutil.PostURL(t, srv.URL+"/api/v0/version", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("server after disconnect: %d", resp.StatusCode)
	}
}

func strconvHex(n int) string {
	const digits = "0123456789abcdef"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 16 {
		b = append([]byte{digits[n%16]}, b...)
	}
	return string(b)
}

// Ensure a multi-file add streams events before the upload ends and
// wrap-with-directory ends with the wrapper.
func TestAdd_WrapTwoFiles(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, name := range []string{"a.txt", "b.txt"} {
		w, _ := mw.CreateFormFile("file", name)
		w.Write([]byte(name))
	}
	mw.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/api/v0/add?wrap-with-directory=true", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var names []string
	for {
		var ev node.AddEvent
		if err := dec.Decode(&ev); err != nil {
			break
		}
		names = append(names, ev.Name)
	}
	if strings.Join(names, ",") != "a.txt,b.txt," {
		t.Fatalf("events %q", names)
	}
}
