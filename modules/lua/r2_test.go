package lua_test

import (
	"bytes"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"cairn/node/config"
)

// Ensure two provides("http") in one module are both served.
func TestLua_TwoProvides_BothServed(t *testing.T) {
	_, u := startHost(t, []string{"http_two"}, nil)
	for p, want := range map[string]string{"/appone": "app one", "/apptwo": "app two", "/apptwo/x": "two x"} {
		if r := req(t, "GET", u+p, ""); r.code != 200 || r.body != want {
			t.Errorf("%s: got %d %q, want %q", p, r.code, r.body, want)
		}
	}
}

// Ensure headers set before serve(...)(event) stay;
// an exact route's file is typed by its name; mime_map is honoured.
func TestLua_Serve_DelegateKeepsHeadersAndType(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.txt"), []byte("static"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, u := startHost(t, []string{"http_delegate"}, func(c *config.ModulesConfig) {
		c.Options = map[string]map[string]any{"http_delegate": {"dir": dir}}
	})
	r := req(t, "GET", u+"/delegate/one", "")
	if r.code != 200 || r.body != "static" || r.h.Get("Cache-Control") != "no-store" ||
		r.h.Get("Content-Disposition") != `attachment; filename="s.txt"` || r.h.Get("Content-Type") != "text/plain" {
		t.Errorf("delegating to serve(file): %d %q %v", r.code, r.body, r.h)
	}
	r = req(t, "GET", u+"/delegate/tree/s.txt", "")
	if r.code != 200 || r.h.Get("Access-Control-Allow-Origin") != "*" || r.h.Get("Content-Type") != "text/x-custom" {
		t.Errorf("delegating to serve{mime_map}: %d %q %v", r.code, r.body, r.h)
	}
	if r := req(t, "GET", u+"/delegate/exact", ""); r.code != 200 || r.h.Get("Content-Type") != "text/plain" {
		t.Errorf("serve(file) as an exact route: %d %v", r.code, r.h)
	}
}

// Ensure os.date and os.time answer as Lua 5.1 on glibc (C locale).
func TestLua_OSDateTime_Lua51(t *testing.T) {
	_, u := startHost(t, []string{"http_lib"}, nil)
	date := func(f string, tm string) string {
		q := url.Values{"f": {f}}
		if tm != "" {
			q.Set("t", tm)
		}
		r := req(t, "GET", u+"/lib/date?"+q.Encode(), "")
		if r.code != 200 {
			t.Fatalf("os.date(%q): %d %s", f, r.code, r.body)
		}
		return r.body
	}
	for f, want := range map[string]string{ // `LC_ALL=C date -u -d @1000000000 +...`, %Z as gmtime's "GMT"
		"!%Y-%m-%d":             "2001-09-09",
		"!%c":                   "Sun Sep  9 01:46:40 2001",
		"!%x %X %p":             "09/09/01 01:46:40 AM",
		"!%j %U %W %V %G %g":    "252 36 36 36 2001 01",
		"!%a %A %b %B %y %C %e": "Sun Sunday Sep September 01 20  9",
		"!%D %F %T %R %r":       "09/09/01 2001-09-09 01:46:40 01:46 01:46:40 AM",
		"!%u %w %s %% %Z":       "7 0 1000000000 % GMT",
		"!plain %":              "plain %",
	} {
		if got := date(f, "1000000000"); got != want {
			t.Errorf("os.date(%q, 1e9) = %q, want %q", f, got, want)
		}
	}
	if got := date("!%Y-%m-%d", "0"); got != "1970-01-01" {
		t.Errorf("os.date(\"!%%Y-%%m-%%d\", 0) = %q", got)
	}
	if got, want := date("%Y-%m-%d %H", "1000000000"), time.Unix(1e9, 0).Format("2006-01-02 15"); got != want {
		t.Errorf("local os.date = %q, want %q", got, want)
	}
	if r := req(t, "GET", u+"/lib/datet", ""); r.body != "1971 1 1 1 1 1 6 1 false table boolean" {
		t.Errorf("os.date(\"!*t\"): %q", r.body)
	}
	if r := req(t, "GET", u+"/lib/time", ""); r.body != "2020|3|1|0|12|false|field 'day' missing in date table" &&
		!strings.HasPrefix(r.body, "2020|3|1|0|12|false|") {
		t.Errorf("os.time{...}: %q", r.body)
	} else if !strings.Contains(r.body, "field 'day' missing in date table") {
		t.Errorf("os.time without day: %q", r.body)
	}
}

// Ensure module:get_option_set is a util.set; the other
// getters convert as Prosody's.
func TestLua_OptionGetters_Prosody(t *testing.T) {
	_, u := startHost(t, []string{"http_lib"}, func(c *config.ModulesConfig) {
		c.Options = map[string]map[string]any{"http_lib": {
			"names": []any{"a", "b", "c", "b"}, "num": 42.0, "numstr": "7", "float": 2.5, "yes": "true",
			"no_str": "false", "list": []any{"first", "second"}, "one": "solo", "period": "2 days",
		}}
	})
	if r := req(t, "GET", u+"/lib/set", ""); r.body != "true nil a,b,c 3 true true false" {
		t.Errorf("get_option_set: %q", r.body)
	}
	if r := req(t, "GET", u+"/lib/options", ""); r.body != "42 string 7 10 2 true false nil first 1 172800 dflt" {
		t.Errorf("get_option_*: %q", r.body)
	}
}

// Ensure that after a memory stop the state is rebuilt from the
// code read at load (an edit on disk does not go live), and the stopped
// state's memory is returned.
func TestLua_MemoryStop_RebuildsFromLoadedCode(t *testing.T) {
	dir := t.TempDir()
	src := `module:depends("http")
local hoard = {}
module:provides("http", { route = {
	["GET /alloc"] = function() local i = 0 while true do i = i + 1; hoard[i] = string.rep("x", 1048576) .. i end end,
	["GET /v"] = function() return "v1 " .. #hoard end,
} })
`
	p := filepath.Join(dir, "mod_http_grow.lua")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, u := startHost(t, []string{"http_grow"}, func(c *config.ModulesConfig) {
		c.Dir = dir
		c.Lua.MaxMemory = "32MiB"
		c.Lua.MaxRunTime = "3s"
	})
	if r := req(t, "GET", u+"/grow/v", ""); r.body != "v1 0" {
		t.Fatalf("before: %q", r.body)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(src, `"v1 "`, `"v2 "`)), 0o644); err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	for i := 0; i < 3; i++ {
		if r := req(t, "GET", u+"/grow/alloc", ""); r.code != 500 {
			t.Fatalf("alloc: %d", r.code)
		}
	}
	runtime.ReadMemStats(&ms)
	t.Logf("after 3 capped runs: heap in use %d MiB, released %d MiB", ms.HeapInuse>>20, ms.HeapReleased>>20)
	if ms.HeapInuse > 100<<20 {
		t.Errorf("the stopped states' memory is still in use: %d MiB", ms.HeapInuse>>20)
	}
	if r := req(t, "GET", u+"/grow/v", ""); r.code != 200 || r.body != "v1 0" {
		t.Errorf("after the stop: got %d %q, want \"v1 0\" (the loaded code, a fresh state)", r.code, r.body)
	}
}

// logBuffer collects the host's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Ensure the user's mod_http_status.lua wins over the
// built-in, and the log says which file was loaded.
func TestHost_UserModuleFileWins(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mod_http_status.lua")
	if err := os.WriteFile(p, []byte(`module:depends("http")
module:provides("http", { route = { ["GET /"] = function() return "my status" end } })`), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	_, u := startHostLog(t, []string{"http_status"}, slog.New(slog.NewTextHandler(&logs, nil)), func(c *config.ModulesConfig) { c.Dir = dir })
	if r := req(t, "GET", u+"/status/", ""); r.code != 200 || r.body != "my status" {
		t.Errorf("got %d %.60q, want the user's module", r.code, r.body)
	}
	if !strings.Contains(logs.String(), "from="+p) {
		t.Errorf("the log does not name the file loaded:\n%s", logs.String())
	}
}

// Ensure a module in a folder of its own (<Dir>/mod_x/mod_x.lua, how
// prosody-modules is laid out) is found before <Dir>/mod_x.lua, as
// Prosody's loader looks, and reads its resources from that folder.
func TestHost_ModuleFolderFirst(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "mod_x")
	for p, body := range map[string]string{
		filepath.Join(dir, "mod_x.lua"): `module:provides("http", { route = { GET = "flat file" } })`,
		filepath.Join(sub, "mod_x.lua"): `module:provides("http", { route = { GET = function()
			return module:load_resource("page.txt"):read("*a") end } })`,
		filepath.Join(sub, "page.txt"): "from the folder",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, u := startHost(t, []string{"x"}, func(c *config.ModulesConfig) { c.Dir = dir })
	if r := req(t, "GET", u+"/x", ""); r.code != 200 || r.body != "from the folder" {
		t.Errorf("got %d %.60q, want the folder's module", r.code, r.body)
	}
}

// Ensure an unclosed "{" is reported with line numbers.
func TestLua_SyntaxError_NamesLine(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mod_open.lua"), []byte("module:depends(\"http\")\nlocal t = {\n\ta = 1,\n\nmodule:provides(\"http\", { route = { GET = \"x\" } })\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := startHost(t, []string{"open"}, func(c *config.ModulesConfig) { c.Dir = dir })
	err := h.Failed()["open"]
	if err == nil || !strings.Contains(err.Error(), "mod_open.lua:5: '}' expected (to close '{' at line 2) near '<eof>'") {
		t.Errorf("unclosed {: %v", err)
	}
}

// Module API: util.json, util.encodings, util.hashes.
func TestLua_UtilLibs(t *testing.T) {
	_, u := startHost(t, []string{"http_lib"}, nil)
	if r := req(t, "GET", u+"/lib/json", ""); r.body != `{"c":"dé","empty":{},"isnull":true,"list":[1,2,{"b":null}],"n":1.5}` {
		t.Errorf("util.json: %d %q", r.code, r.body)
	}
	want := "aGVsbG8= hello a%20b%2fc a b ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad " +
		"2d93cbc1be167bcb1637a4a23cbff01a7878f0c50ee833954ea5221bb1b8c628 32"
	if r := req(t, "GET", u+"/lib/enc", ""); r.body != want {
		t.Errorf("util.encodings/hashes:\n got %q\nwant %q", r.body, want)
	}
}

// The ported community module of docs/modules.md answers at its
// default_path with the decoded icon.
func TestLua_PortedFavicon(t *testing.T) {
	h, u := startHost(t, []string{"http_favicon"}, nil)
	r := req(t, "GET", u+"/favicon.ico", "")
	want := "\x00\x00\x01\x00\x01\x00\x10\x10\x00\x00\x01\x00 \x00h\x04\x00\x00\x16\x00\x00\x00(\x00\x00\x00\x10\x00\x00\x00 "
	if r.code != 200 || r.h.Get("Content-Type") != "image/x-icon" || !strings.HasPrefix(r.body, want) || len(r.body) != 74 {
		t.Errorf("favicon: %d %v %d bytes %q", r.code, r.h, len(r.body), r.body)
	}
	if urls := h.URLs(); len(urls) != 1 || !strings.HasSuffix(urls[0], "/favicon.ico") {
		t.Errorf("printed URL: %v", urls)
	}
}

// module:load_resource reads files beside the module, nothing else.
func TestLua_LoadResource(t *testing.T) {
	_, u := startHost(t, []string{"http_resource"}, nil)
	if r := req(t, "GET", u+"/resource/all", ""); r.body != "line one\nline two\n" {
		t.Errorf("read *a: %d %q", r.code, r.body)
	}
	if r := req(t, "GET", u+"/resource/lines", ""); r.body != "[line one][line two]" {
		t.Errorf("lines: %d %q", r.code, r.body)
	}
	r := req(t, "GET", u+"/resource/refused", "")
	for _, want := range []string{"../lua_test.go: outside the modules folder", "/etc/passwd: outside the modules folder", "only reading is allowed"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("refusals: %q lacks %q", r.body, want)
		}
	}
}

// module:add_timer runs in the module's state, reschedules on a number,
// and a stopped timer never fires.
func TestLua_AddTimer(t *testing.T) {
	_, u := startHost(t, []string{"http_timer"}, nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := req(t, "GET", u+"/timer", "")
		if r.body == "3 0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timers: %q, want \"3 0\"", r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond)
	if r := req(t, "GET", u+"/timer", ""); r.body != "3 0" {
		t.Errorf("the timer went on after returning nothing: %q", r.body)
	}
}

// The Prosody environment published prosody-modules use: util.jid,
// util.stanza, util.uuid, util.id, util.datetime, stringprep, lfs,
// the prosody and hosts globals, module.load, module._log and
// request.log, and table.insert/remove on module:shared lists.
func TestLua_ProsodyEnvironment(t *testing.T) {
	buf := &logBuffer{}
	_, u := startHostLog(t, []string{"http_prosody"}, slog.New(slog.NewTextHandler(buf, nil)), nil)
	for _, tc := range []struct{ path, want string }{
		{"/jid", "Alice Example.COM phone a@b alice example.com nil a@b/c nil nil nil true false"},
		{"/stanza", "<result x='1&lt;'><jid>a&amp;b</jid><empty/><show>online</show></result> a&b online true"},
		{"/ids", "36 true 4 8 16 32 true"},
		{"/datetime", "1971-01-01 2023-11-14T22:13:20Z 01:01:01 1700000000 1700000000.5 nil"},
		{"/env", "prosody table nil * global true true alice nil directory nil"},
		{"/list", "1 b c a"},
	} {
		if r := req(t, "GET", u+"/prosody"+tc.path, ""); r.code != 200 || r.body != tc.want {
			t.Errorf("%s: %d %q, want %q", tc.path, r.code, r.body, tc.want)
		}
	}
	for _, want := range []string{`msg="request log line" module=http_prosody request=`, `level=WARN msg="module log 7" module=http_prosody`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log has no %q:\n%s", want, buf.String())
		}
	}
}
