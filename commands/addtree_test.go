package commands_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"sort"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node"
)

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

		rng := rand.New(rand.NewSource(1))
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
