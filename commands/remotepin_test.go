package commands_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node/pinsvc"
	"cairn/rpc"

	"github.com/ipfs/go-cid"
)

// psaPin is one pin request held by fakePSA.
type psaPin struct {
	ID      string
	CID     string
	Name    string
	Origins []string
	Status  string
	Created time.Time
	polls   int
}

// fakePSA is a Pinning Service API server (the IPFS Pinning Services API
// spec, v1.0.0) kept in memory: a request starts queued and moves to
// pinning, then pinned (or failed when its name is "fail"), one step per
// status check.
type fakePSA struct {
	t     *testing.T
	token string
	mu    sync.Mutex
	pins  []*psaPin
	next  int
	auths []string // Authorization headers seen
}

func newFakePSA(t *testing.T, token string) (*fakePSA, *httptest.Server) {
	f := &fakePSA{t: t, token: token}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakePSA) status(p *psaPin) map[string]any {
	return map[string]any{
		"requestid": p.ID, "status": p.Status, "created": p.Created.Format(time.RFC3339Nano),
		"pin":       map[string]any{"cid": p.CID, "name": p.Name, "origins": p.Origins},
		"delegates": []string{"/ip4/127.0.0.1/tcp/1/p2p/12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo"},
	}
}

func (f *fakePSA) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auths = append(f.auths, r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":{"reason":"UNAUTHORIZED","details":"Access token is missing or invalid"}}`)
		return
	}
	id, one := strings.CutPrefix(r.URL.Path, "/pins/")
	switch {
	case r.URL.Path == "/pins" && r.Method == http.MethodPost:
		var body struct {
			CID     string `json:"cid"`
			Name    string `json:"name"`
			Origins []string
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(400)
			return
		}
		f.next++
		p := &psaPin{ID: "req-" + strconv.Itoa(f.next), CID: body.CID, Name: body.Name, Origins: body.Origins,
			Status: "queued", Created: time.Date(2026, 1, 1, 0, 0, f.next, 0, time.UTC)}
		f.pins = append(f.pins, p)
		w.WriteHeader(202)
		json.NewEncoder(w).Encode(f.status(p))
	case r.URL.Path == "/pins" && r.Method == http.MethodGet:
		f.list(w, r.URL.Query())
	case one && r.Method == http.MethodGet:
		p := f.find(id)
		if p == nil {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":{"reason":"NOT_FOUND"}}`)
			return
		}
		if p.polls++; p.polls >= 1 {
			switch {
			case p.Status == "queued":
				p.Status = "pinning"
			case p.Status == "pinning" && p.Name == "fail":
				p.Status = "failed"
			case p.Status == "pinning":
				p.Status = "pinned"
			}
		}
		json.NewEncoder(w).Encode(f.status(p))
	case one && r.Method == http.MethodDelete:
		for i, p := range f.pins {
			if p.ID == id {
				f.pins = slices.Delete(f.pins, i, i+1)
				w.WriteHeader(202)
				return
			}
		}
		w.WriteHeader(404)
	default:
		w.WriteHeader(404)
	}
}

func (f *fakePSA) find(id string) *psaPin {
	for _, p := range f.pins {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// list answers GET /pins: filters cid, name, status (default pinned, as
// the spec says), before, limit (default 10); newest first; count is the
// number of matches.
func (f *fakePSA) list(w http.ResponseWriter, q url.Values) {
	statuses := []string{"pinned"}
	if s := q.Get("status"); s != "" {
		statuses = strings.Split(s, ",")
	}
	var cids []string
	if s := q.Get("cid"); s != "" {
		cids = strings.Split(s, ",")
	}
	limit := 10
	if s := q.Get("limit"); s != "" {
		limit, _ = strconv.Atoi(s)
	}
	var before time.Time
	if s := q.Get("before"); s != "" {
		before, _ = time.Parse(time.RFC3339Nano, s)
	}
	var match []*psaPin
	for _, p := range f.pins {
		if !slices.Contains(statuses, p.Status) || (cids != nil && !slices.Contains(cids, p.CID)) ||
			(q.Get("name") != "" && q.Get("name") != p.Name) || (!before.IsZero() && !p.Created.Before(before)) {
			continue
		}
		match = append(match, p)
	}
	sort.Slice(match, func(i, j int) bool { return match[i].Created.After(match[j].Created) })
	res := []any{}
	for i, p := range match {
		if i == limit {
			break
		}
		res = append(res, f.status(p))
	}
	json.NewEncoder(w).Encode(map[string]any{"count": len(match), "results": res})
}

// remoteOut decodes the values of pin/remote/add and pin/remote/ls.
func remoteOut(t *testing.T, res *rpc.Result) []commands.RemotePinOutput {
	t.Helper()
	var out []commands.RemotePinOutput
	for _, v := range res.Values {
		out = append(out, *v.(*commands.RemotePinOutput))
	}
	return out
}

// noSecret fails if s holds the key.
func noSecret(t *testing.T, what, s, key string) {
	t.Helper()
	if strings.Contains(s, key) {
		t.Fatalf("%s shows the service key: %s", what, s)
	}
}

// Ensure service add stores the key only in the 0600 config file, never
// in service/ls (with or without --stat), config show or config get;
// refuses a second service of one name, bad endpoints and a key with a
// newline with Kubo's texts; and service rm forgets it.
func TestPinRemoteService_AddLsRm_KeyNeverShown(t *testing.T) {
	n := testutil.MustOpenNode(t)
	const key = "s3cr3t-TOKEN-value"
	f, srv := newFakePSA(t, key)
	mustCall(t, n, "pin/remote/service/add", []string{"mysrv", srv.URL + "//api/", key}, nil, nil)

	fi, err := os.Stat(filepath.Join(n.Repo, "config"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("config mode %v, want 0600", fi.Mode().Perm())
	}
	if got := n.Config().Pinning.RemoteServices["mysrv"]; got.API.Endpoint != srv.URL+"/api" || got.API.Key != key {
		t.Fatalf("stored service %+v", got)
	}
	res := mustCall(t, n, "pin/remote/service/ls", nil, nil, nil)
	b, _ := json.Marshal(res.Values)
	want := `[{"RemoteServices":[{"Service":"mysrv","ApiEndpoint":"` + srv.URL + `/api"}]}]`
	if string(b) != want {
		t.Fatalf("service/ls %s, want %s", b, want)
	}
	mustCall(t, n, "pin/remote/service/rm", []string{"mysrv"}, nil, nil)

	// --stat asks each service for its counts per status; one that
	// refuses its key is "invalid".
	mustCall(t, n, "pin/remote/service/add", []string{"mysrv", srv.URL, key}, nil, nil)
	mustCall(t, n, "pin/remote/service/add", []string{"bad", srv.URL, "wrong-key"}, nil, nil)
	f.pins = append(f.pins, &psaPin{ID: "x", CID: "bafkqaaa", Status: "pinned", Created: time.Now()},
		&psaPin{ID: "y", CID: "bafkqaaa", Status: "queued", Created: time.Now()})
	res = mustCall(t, n, "pin/remote/service/ls", nil, map[string]string{"stat": "true"}, nil)
	b, _ = json.Marshal(res.Values)
	noSecret(t, "service/ls --stat", string(b), key)
	want = `[{"RemoteServices":[{"Service":"bad","ApiEndpoint":"` + srv.URL + `","Stat":{"Status":"invalid"}},` +
		`{"Service":"mysrv","ApiEndpoint":"` + srv.URL + `","Stat":{"Status":"valid","PinCount":{"Queued":1,"Pinning":0,"Pinned":1,"Failed":0}}}]}]`
	if string(b) != want {
		t.Fatalf("service/ls --stat %s\nwant %s", b, want)
	}
	text := renderText(t, "pin/remote/service/ls", map[string]any{"stat": true}, res)
	if text != "bad   "+srv.URL+" invalid\nmysrv "+srv.URL+" 1/0/1/0\n" {
		t.Fatalf("service/ls --stat text %q", text)
	}

	// config show leaves the key out; config refuses to read or set it,
	// or any map above it, as Kubo does.
	res = mustCall(t, n, "config/show", nil, nil, nil)
	b, _ = json.Marshal(res.Values)
	noSecret(t, "config show", string(b), key)
	if !strings.Contains(string(b), srv.URL) {
		t.Fatalf("config show lost the endpoint: %s", b)
	}
	for _, k := range []string{"Pinning", "Pinning.RemoteServices.mysrv.API", "Pinning.RemoteServices.mysrv.API.Key"} {
		wantErr(t, callErr(t, n, "config", []string{k}, nil, nil), "cannot show or change pinning services credentials")
	}
	res = mustCall(t, n, "config/profile/apply", []string{"lowpower"}, map[string]string{"dry-run": "true"}, nil)
	b, _ = json.Marshal(res.Values)
	noSecret(t, "config profile apply", string(b), key)

	wantErr(t, callErr(t, n, "pin/remote/service/add", []string{"mysrv", srv.URL, key}, nil, nil), "service already present")
	wantErr(t, callErr(t, n, "pin/remote/service/add", []string{"x", "ftp://h/", key}, nil, nil), "service endpoint must be a valid HTTP URL")
	wantErr(t, callErr(t, n, "pin/remote/service/add", []string{"x", srv.URL + "?a=b", key}, nil, nil),
		"service endpoint should be provided without any query parameters")
	wantErr(t, callErr(t, n, "pin/remote/service/add", []string{"x", srv.URL + "/pins/", key}, nil, nil),
		"service endpoint should be provided without the /pins suffix")
	err = callErr(t, n, "pin/remote/service/add", []string{"nl", srv.URL, key + "\nline2"}, nil, nil)
	wantErr(t, err, "service key must not be empty or contain control characters such as a newline")
	if _, ok := n.Config().Pinning.RemoteServices["nl"]; ok {
		t.Fatal("a key with a newline was stored")
	}

	mustCall(t, n, "pin/remote/service/rm", []string{"mysrv"}, nil, nil)
	mustCall(t, n, "pin/remote/service/rm", []string{"never-there"}, nil, nil)
	res = mustCall(t, n, "pin/remote/service/ls", nil, nil, nil)
	b, _ = json.Marshal(res.Values)
	if string(b) != `[{"RemoteServices":[{"Service":"bad","ApiEndpoint":"`+srv.URL+`"}]}]` {
		t.Fatalf("service/ls after rm %s", b)
	}
	for _, a := range f.auths {
		if a != "Bearer "+key && a != "Bearer wrong-key" {
			t.Fatalf("the service saw Authorization %q", a)
		}
	}
}

// setFor sets *p to v for the test's duration.
func setFor[T any](t *testing.T, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// renderText renders a result's values as the CLI does, with typed
// options.
func renderText(t *testing.T, path string, opts map[string]any, res *rpc.Result) string {
	t.Helper()
	cmd := commands.DefaultTable.Find(path)
	var out strings.Builder
	env := &rpc.TextEnv{Out: &out, Err: &out, Req: &rpc.Request{Command: cmd, Opts: opts}}
	for _, v := range res.Values {
		if err := cmd.Text(env, v); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

// Ensure pin/remote/add waits until the service reports pinned and
// answers Kubo's {Cid, Name, Status}; --background returns the queued
// request; an online node sends its own addresses as origins and holds
// the DAG from GC until the service has it; ls filters by name, cid and
// status (default pinned) across pages; rm of several matches needs
// --force; a failed pin and a missing --service or unknown service
// answer Kubo's errors.
func TestPinRemote_AddLsRm(t *testing.T) {
	n := testutil.MustOnlineNode(t, "none", nil)
	const key = "k-123"
	f, srv := newFakePSA(t, key)
	mustCall(t, n, "pin/remote/service/add", []string{"svc", srv.URL, key}, nil, nil)
	c := addBytes(t, n, []byte("remote pin me"), map[string]string{"pin": "false"}).String()

	res := mustCall(t, n, "pin/remote/add", []string{"/ipfs/" + c}, map[string]string{"service": "svc", "name": "one"}, nil)
	out := remoteOut(t, res)
	if len(out) != 1 || out[0] != (commands.RemotePinOutput{Status: "pinned", Cid: c, Name: "one"}) {
		t.Fatalf("pin/remote/add: %+v", out)
	}
	f.mu.Lock()
	origins := f.pins[0].Origins
	f.mu.Unlock()
	if len(origins) == 0 || !slices.Contains(origins, testutil.P2PAddr(t, n)) {
		t.Fatalf("origins %v do not name the node (%s)", origins, testutil.P2PAddr(t, n))
	}
	text := renderText(t, "pin/remote/add", map[string]any{}, res)
	if text != "CID:    "+c+"\nName:   one\nStatus: pinned\n" {
		t.Fatalf("pin/remote/add text %q", text)
	}

	// --background: the queued request, held from GC until the service
	// reports it pinned (the node polls it in the background).
	c2 := addBytes(t, n, []byte("in the background"), map[string]string{"pin": "false"}).String()
	res = mustCall(t, n, "pin/remote/add", []string{c2}, map[string]string{"service": "svc", "name": "two", "background": "true"}, nil)
	if out := remoteOut(t, res); len(out) != 1 || out[0] != (commands.RemotePinOutput{Status: "queued", Cid: c2, Name: "two"}) {
		t.Fatalf("pin/remote/add --background: %+v", out)
	}
	if _, err := n.Storage().CollectGarbage(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if has, _ := n.Blocks.Has(context.Background(), mustCid(t, c2)); !has {
		t.Fatal("GC removed a block the service was still fetching")
	}

	// ls: default status pinned (the background one is queued or
	// pinning until polled twice).
	res = mustCall(t, n, "pin/remote/ls", nil, map[string]string{"service": "svc"}, nil)
	for _, o := range remoteOut(t, res) {
		if o.Status != "pinned" {
			t.Fatalf("pin/remote/ls without --status: %+v", o)
		}
	}
	waitFor(t, 10*time.Second, "the background pin to be pinned", func() bool {
		res := mustCall(t, n, "pin/remote/ls", nil, map[string]string{"service": "svc", "name": "two"}, nil)
		return len(res.Values) == 1
	})
	// The service says pinned as it answers the node's poll; the node
	// lets the DAG go once that poll has returned, a moment later.
	waitFor(t, 15*time.Second, "the node to release the DAG the service pinned", func() bool {
		if _, err := n.Storage().CollectGarbage(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		has, _ := n.Blocks.Has(context.Background(), mustCid(t, c2))
		return !has
	})

	// Twelve more requests, listed across pages of 10, filtered by
	// status, cid and name.
	setFor(t, &pinsvc.PageSize, 10)
	for i := range 12 {
		mustCall(t, n, "pin/remote/add", []string{"bafkqaaa"}, map[string]string{"service": "svc", "name": "many" + strconv.Itoa(i%2), "background": "true"}, nil)
	}
	res = mustCall(t, n, "pin/remote/ls", nil, map[string]string{"service": "svc", "status": "queued,pinning,pinned,failed"}, nil)
	if len(res.Values) != 14 {
		t.Fatalf("ls of every status: %d pins, want 14", len(res.Values))
	}
	res = mustCall(t, n, "pin/remote/ls", nil, map[string]string{"service": "svc", "status": "queued", "cid": "bafkqaaa", "name": "many1"}, nil)
	if out := remoteOut(t, res); len(out) != 6 || out[0] != (commands.RemotePinOutput{Status: "queued", Cid: "bafkqaaa", Name: "many1"}) {
		t.Fatalf("ls --status=queued --cid --name: %+v", out)
	}
	text = renderText(t, "pin/remote/ls", map[string]any{}, res)
	if !strings.HasPrefix(text, "bafkqaaa\tqueued\tmany1\n") {
		t.Fatalf("ls text %q", text)
	}
	res = mustCall(t, n, "pin/remote/ls", nil, map[string]string{"service": "svc", "cid": c}, nil)
	if out := remoteOut(t, res); len(out) != 1 || out[0] != (commands.RemotePinOutput{Status: "pinned", Cid: c, Name: "one"}) {
		t.Fatalf("ls --cid: %+v", out)
	}
	wantErr(t, callErr(t, n, "pin/remote/ls", nil, map[string]string{"service": "svc", "status": "done"}, nil), `status "done" is not valid`)
	wantErrPrefix(t, callErr(t, n, "pin/remote/ls", nil, map[string]string{"service": "svc", "cid": "nope"}, nil), `CID "nope" cannot be parsed: `)

	// rm: one match goes; several need --force.
	mustCall(t, n, "pin/remote/rm", nil, map[string]string{"service": "svc", "cid": c}, nil)
	wantErr(t, callErr(t, n, "pin/remote/rm", nil, map[string]string{"service": "svc", "name": "many0", "status": "queued"}, nil),
		"multiple remote pins are matching this query, add --force to confirm the bulk removal")
	mustCall(t, n, "pin/remote/rm", nil, map[string]string{"service": "svc", "name": "many0", "status": "queued", "force": "true"}, nil)
	res = mustCall(t, n, "pin/remote/ls", nil, map[string]string{"service": "svc", "status": "queued,pinning,pinned,failed"}, nil)
	if len(res.Values) != 7 {
		t.Fatalf("after rm: %d pins, want 7 (two, six many1)", len(res.Values))
	}

	// A failed pin, and the service errors.
	wantErr(t, callErr(t, n, "pin/remote/add", []string{c}, map[string]string{"service": "svc", "name": "fail"}, nil),
		`remote service failed to pin requestid="req-15"`)
	wantErr(t, callErr(t, n, "pin/remote/add", []string{c}, nil, nil), "a service name must be passed")
	wantErr(t, callErr(t, n, "pin/remote/ls", nil, map[string]string{"service": "other"}, nil), "service not known")
	wantErr(t, callErr(t, n, "pin/remote/rm", nil, map[string]string{"service": ""}, nil), "remote pinning service name not specified")
	long := strings.Repeat("x", 256)
	wantErr(t, callErr(t, n, "pin/remote/add", []string{c}, map[string]string{"service": "svc", "name": long}, nil), "pin name is 256 bytes (max 255 bytes)")
}

func mustCid(t *testing.T, s string) cid.Cid {
	t.Helper()
	c, err := cid.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Ensure a service that hangs, answers 500, answers garbage JSON or
// refuses the key (401, with and without a JSON body) gives a clear
// error that never holds the key, and leaves the config intact.
func TestPinRemote_BadServices(t *testing.T) {
	n := testutil.MustOpenNode(t)
	const key = "very-secret-key"
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	handlers := map[string]http.HandlerFunc{
		"hangs": func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // so that the server sees the client go
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		},
		"500": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			fmt.Fprint(w, "internal trouble, key was "+r.Header.Get("Authorization"))
		},
		"garbage": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"count": 1, "results": [{"requestid": `)
		},
		"401json": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"reason":"UNAUTHORIZED","details":"bad token `+r.Header.Get("Authorization")+`"}}`)
		},
		"401": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			fmt.Fprint(w, "Unauthorized")
		},
	}
	wants := map[string]string{
		"hangs":   "remote pinning service did not answer within 300ms",
		"500":     "remote pinning service returned http error 500: internal trouble, key was Bearer <key>",
		"garbage": "remote pinning service answered invalid JSON",
		"401json": `reason: "UNAUTHORIZED", details: "bad token Bearer <key>": 401 Unauthorized`,
		"401":     "remote pinning service returned http error 401: the service refused the key (Unauthorized)",
	}
	setFor(t, &pinsvc.Timeout, 300*time.Millisecond)
	for name, h := range handlers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		mustCall(t, n, "pin/remote/service/add", []string{name, srv.URL, key}, nil, nil)
		for _, call := range []struct {
			path string
			args []string
			opts map[string]string
		}{
			{"pin/remote/ls", nil, map[string]string{"service": name}},
			{"pin/remote/add", []string{"bafkqaaa"}, map[string]string{"service": name}},
			{"pin/remote/rm", nil, map[string]string{"service": name, "cid": "bafkqaaa"}},
		} {
			start := time.Now()
			err := callErr(t, n, call.path, call.args, call.opts, nil)
			if time.Since(start) > 5*time.Second {
				t.Fatalf("%s on %s took %v", call.path, name, time.Since(start))
			}
			t.Logf("%s on %s: %v", call.path, name, err)
			noSecret(t, call.path+" on "+name, err.Error(), key)
			if !strings.Contains(err.Error(), wants[name]) {
				t.Fatalf("%s on %s: %q, want it to contain %q", call.path, name, err, wants[name])
			}
		}
		res := mustCall(t, n, "pin/remote/service/ls", nil, map[string]string{"stat": "true"}, nil)
		b, _ := json.Marshal(res.Values)
		noSecret(t, "service ls --stat", string(b), key)
	}
	if got := n.Config().Pinning.RemoteServices["500"].API.Key; got != key {
		t.Fatal("the key changed")
	}
	// A service whose pages never move on (it ignores 'before'): ls stops.
	setFor(t, &pinsvc.PageSize, 10)
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var res []string
		for i := range 10 {
			res = append(res, fmt.Sprintf(`{"requestid":"r%d","status":"pinned","created":"2026-01-01T00:00:00Z","pin":{"cid":"bafkqaaa"},"delegates":[]}`, i))
		}
		fmt.Fprintf(w, `{"count":25,"results":[%s]}`, strings.Join(res, ","))
	}))
	t.Cleanup(loop.Close)
	mustCall(t, n, "pin/remote/service/add", []string{"loop", loop.URL, key}, nil, nil)
	res, err := rpc.Call(context.Background(), n, commands.DefaultTable, "pin/remote/ls", nil, map[string]string{"service": "loop"}, nil)
	wantErr(t, err, "remote pinning service repeats the same pins from page to page (after 10 pins)")
	if res != nil && len(res.Values) != 10 {
		t.Fatalf("ls of a looping service emitted %d pins", len(res.Values))
	}

	// A key with a newline written into the file by hand is refused at
	// use, without quoting it.
	testutil.SetConfig(t, n, map[string]any{"Pinning.RemoteServices.nl": map[string]any{"API": map[string]any{"Endpoint": "http://127.0.0.1:1", "Key": "a\nb"}}})
	err = callErr(t, n, "pin/remote/ls", nil, map[string]string{"service": "nl"}, nil)
	wantErr(t, err, `service "nl": service key must not be empty or contain control characters such as a newline`)
	// Nothing listens on port 1: unreachable.
	testutil.SetConfig(t, n, map[string]any{"Pinning.RemoteServices.down": map[string]any{"API": map[string]any{"Endpoint": "http://127.0.0.1:1", "Key": key}}})
	err = callErr(t, n, "pin/remote/ls", nil, map[string]string{"service": "down"}, nil)
	wantErrPrefix(t, err, "empty response from remote pinning service: ")
	noSecret(t, "unreachable", err.Error(), key)
}

// Ensure the request log of diag/cmds never holds a service key: the
// key argument of pin/remote/service/add is logged as "<secret>".
func TestPinRemoteService_KeyNotInRequestLog(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	const key = "diag-secret-key"
	if code, body := postJSON(t, srv.URL+"/api/v0/diag/cmds/set-time?arg=1h", nil); code != 200 {
		t.Fatalf("set-time: %d %s", code, body)
	}
	readAll(t, rpcPost(t, srv, "pin/remote/service/add", url.Values{"arg": {"s", "http://127.0.0.1:1", key}}, nil, "").Body)
	if _, ok := n.Config().Pinning.RemoteServices["s"]; !ok {
		t.Fatal("service add over HTTP stored nothing")
	}
	resp, body := testutil.PostURL(t, srv.URL+"/api/v0/diag/cmds?verbose=true", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "pin/remote/service/add") {
		t.Fatalf("diag/cmds: %d %s", resp.StatusCode, body)
	}
	noSecret(t, "diag/cmds", string(body), key)
	if !strings.Contains(string(body), `"\u003csecret\u003e"`) {
		t.Fatalf("diag/cmds does not mark the key: %s", body)
	}
}
