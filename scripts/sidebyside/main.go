// Command sidebyside sends the same RPC requests to cairn and to Kubo
// 0.43.1 and reports where the answers differ (docs/conformance.md, "Side
// by side with Kubo"). It is run by hand, not in CI, and never builds Kubo:
// it uses the binary scripts/bench-kubo.sh put in ~/.cache/cairn-bench.
//
//	make build && go run ./scripts/sidebyside            # every case
//	go run ./scripts/sidebyside -run dag -v              # cases whose request contains "dag", with both answers
//
// Both daemons run offline (daemon --offline, test profile: empty
// bootstrap, no mDNS, RPC on 127.0.0.1) inside a network namespace with
// only loopback up (internal/daemon.EnterNetNS). The requests are in
// cases.txt; see docs/conformance.md for its format.
package main

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"cairn/internal/daemon"

	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
)

//go:embed cases.txt
var casesTxt string

// compared are the response headers whose values must agree.
var compared = []string{"Content-Type", "X-Stream-Output", "X-Chunked-Output", "X-Content-Length"}

type answer struct {
	status  int
	headers map[string]string
	trailer string
	body    string
}

func (a answer) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", a.status)
	for _, h := range compared {
		if v := a.headers[h]; v != "" {
			fmt.Fprintf(&b, " %s: %s;", h, v)
		}
	}
	if a.trailer != "" {
		fmt.Fprintf(&b, " X-Stream-Error: %s;", a.trailer)
	}
	body := a.body
	if len(body) > 600 {
		body = body[:600] + "..."
	}
	fmt.Fprintf(&b, "\n      %s", strings.ReplaceAll(strings.TrimRight(body, "\n"), "\n", "\n      "))
	return b.String()
}

// side is one daemon with the values saved from its answers.
type side struct {
	d    *daemon.Daemon
	vars map[string]string
	self []string // its peer ID (and as a libp2p-key CID), replaced by <self> before comparing
}

type kase struct {
	line   int
	save   string // variable to save, from the first JSON line's field
	field  string
	req    string // cmd?query, with $VARs
	upload string // multipart file content, "" for none
	hasUp  bool
	known  string // why the answers differ, when that is known ("#! differs:")
}

func parseCases(s string) ([]kase, error) {
	var out []kase
	sc := bufio.NewScanner(strings.NewReader(s))
	n := 0
	known := ""
	for sc.Scan() {
		n++
		l := strings.TrimSpace(sc.Text())
		if r, ok := strings.CutPrefix(l, "#! differs:"); ok {
			if known = strings.TrimSpace(r); known == "" {
				return nil, fmt.Errorf("cases.txt:%d: #! differs: needs its reason", n)
			}
			continue
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k := kase{line: n, known: known}
		known = ""
		if strings.HasPrefix(l, "@") {
			f := strings.SplitN(l, " ", 3)
			if len(f) != 3 {
				return nil, fmt.Errorf("cases.txt:%d: @VAR Field request", n)
			}
			k.save, k.field, l = f[0][1:], f[1], f[2]
		}
		if req, up, ok := strings.Cut(l, " < "); ok {
			l = req
			k.hasUp = true
			k.upload = strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(up)
		}
		k.req = strings.TrimSpace(l)
		out = append(out, k)
	}
	return out, sc.Err()
}

var varRe = regexp.MustCompile(`\$[A-Z][A-Z0-9_]*`)

func (s *side) expand(t string) string {
	return varRe.ReplaceAllStringFunc(t, func(v string) string {
		if x, ok := s.vars[v[1:]]; ok {
			return x
		}
		return v
	})
}

func (s *side) do(k kase) (answer, error) {
	req := s.expand(k.req)
	var body io.Reader
	ct := ""
	if k.hasUp {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		w, _ := mw.CreateFormFile("file", "file")
		w.Write([]byte(s.expand(k.upload)))
		mw.Close()
		body, ct = &buf, mw.FormDataContentType()
	}
	hr, err := http.NewRequest(http.MethodPost, s.d.URL+"/api/v0/"+req, body)
	if err != nil {
		return answer{}, err
	}
	if ct != "" {
		hr.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, headers: map[string]string{}, trailer: resp.Trailer.Get("X-Stream-Error"), body: string(b)}
	for _, h := range compared {
		a.headers[h] = resp.Header.Get(h)
	}
	if k.save != "" {
		var m map[string]any
		line, _, _ := strings.Cut(a.body, "\n")
		if json.Unmarshal([]byte(line), &m) == nil {
			if v, ok := m[k.field].(string); ok {
				s.vars[k.save] = v
			} else if v, ok := m[k.field].(map[string]any); ok {
				s.vars[k.save], _ = v["/"].(string)
			}
		}
	}
	for _, id := range s.self {
		a.body = strings.ReplaceAll(a.body, id, "<self>")
		a.trailer = strings.ReplaceAll(a.trailer, id, "<self>")
	}
	// Go's protobuf errors put a non-breaking space after "proto:" in
	// some builds and a space in others, on purpose, so that nobody
	// matches them (internal/detrand).
	a.body = strings.ReplaceAll(a.body, "proto:\u00a0", "proto: ")
	if cmd, _, _ := strings.Cut(k.req, "?"); unordered[cmd] {
		lines := strings.Split(strings.TrimRight(a.body, "\n"), "\n")
		sort.Strings(lines)
		a.body = strings.Join(lines, "\n") + "\n"
	}
	return a, nil
}

// unordered are the commands whose NDJSON lines come in the store's
// order, which differs between the two stores: compared as sets.
var unordered = map[string]bool{"refs/local": true, "repo/ls": true}

// same compares two answers: headers, trailer, and the body (as JSON
// values line by line when both parse, else as bytes).
func same(a, b answer) bool {
	if a.status != b.status || a.trailer != b.trailer {
		return false
	}
	for _, h := range compared {
		if a.headers[h] != b.headers[h] {
			return false
		}
	}
	if a.body == b.body {
		return true
	}
	al, bl := strings.Split(strings.TrimRight(a.body, "\n"), "\n"), strings.Split(strings.TrimRight(b.body, "\n"), "\n")
	if len(al) != len(bl) {
		return false
	}
	for i := range al {
		var x, y any
		if json.Unmarshal([]byte(al[i]), &x) != nil || json.Unmarshal([]byte(bl[i]), &y) != nil {
			return false
		}
		xj, yj := canonical(x), canonical(y)
		if !bytes.Equal(xj, yj) {
			return false
		}
	}
	return true
}

// canonical is v as JSON with a top-level array sorted: Kubo lists some
// (cid/bases, cid/hashes) in Go's random map order.
func canonical(v any) []byte {
	if arr, ok := v.([]any); ok {
		els := make([]string, len(arr))
		for i, e := range arr {
			b, _ := json.Marshal(e)
			els[i] = string(b)
		}
		sort.Strings(els)
		return []byte(strings.Join(els, ","))
	}
	b, _ := json.Marshal(v)
	return b
}

func main() {
	cairnBin := flag.String("cairn", "bin/cairn", "cairn binary (make build)")
	kuboBin := flag.String("kubo", filepath.Join(daemon.KuboDir(), "ipfs"), "Kubo "+daemon.KuboVersion+" binary (scripts/bench-kubo.sh)")
	run := flag.String("run", "", "only the cases whose request contains this text")
	verbose := flag.Bool("v", false, "print both answers of every case, not only of those that differ")
	flag.Parse()
	for _, b := range []string{*cairnBin, *kuboBin} {
		if _, err := os.Stat(b); err != nil {
			fmt.Fprintf(os.Stderr, "sidebyside: %v (cairn: make build; Kubo: scripts/bench-kubo.sh)\n", err)
			os.Exit(2)
		}
	}
	cases, err := parseCases(casesTxt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(2)
	}
	cb, _ := filepath.Abs(*cairnBin)
	daemon.EnterNetNS()
	tmp, err := os.MkdirTemp("", "sidebyside")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer os.RemoveAll(tmp)
	o := daemon.Options{Offline: true}
	c, err := daemon.StartCairn(cb, filepath.Join(tmp, "cairn"), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(2)
	}
	defer c.Stop()
	k, err := daemon.StartKubo(*kuboBin, filepath.Join(tmp, "kubo"), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(2)
	}
	defer k.Stop()
	sides := [2]*side{{d: c, vars: map[string]string{}}, {d: k, vars: map[string]string{}}}
	for _, s := range sides {
		var id struct{ ID string }
		if err := s.d.JSON("id", nil, &id); err == nil {
			s.self = []string{id.ID}
			if pid, err := peer.Decode(id.ID); err == nil {
				if k, err := peer.ToCid(pid).StringOfBase(mbase.Base36); err == nil {
					s.self = append(s.self, k)
				}
			}
		}
	}
	ran, differ, unexplained := 0, 0, 0
	for _, kc := range cases {
		if *run != "" && !strings.Contains(kc.req, *run) && kc.save == "" {
			continue
		}
		var ans [2]answer
		for i, s := range sides {
			if ans[i], err = s.do(kc); err != nil {
				ans[i] = answer{status: -1, body: err.Error()}
			}
		}
		if kc.save != "" && (*run != "" && !strings.Contains(kc.req, *run)) {
			continue // a setup step of a filtered run
		}
		ran++
		ok := same(ans[0], ans[1])
		mark := "same"
		switch {
		case !ok && kc.known != "":
			differ++
			mark = "KNOWN (" + kc.known + ")"
		case !ok:
			differ++
			unexplained++
			mark = "DIFF"
		case kc.known != "":
			mark = "AGREES NOW (remove its #! differs line)"
		}
		if mark != "same" || *verbose {
			fmt.Printf("%s cases.txt:%d %s\n  cairn %s\n  kubo  %s\n", mark, kc.line, kc.req, ans[0], ans[1])
		}
	}
	fmt.Printf("side-by-side: %d requests, %d differ, %d of them unexplained\n", ran, differ, unexplained)
	if unexplained > 0 {
		os.Exit(1)
	}
}
