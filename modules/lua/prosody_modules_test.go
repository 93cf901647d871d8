package lua_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"cairn/node/config"
)

// prosodyModulesEnv names the folder of a prosody-modules tree (Debian's
// package prosody-modules, unpacked by `make prosody-modules`).
const prosodyModulesEnv = "CAIRN_PROSODY_MODULES"

// Ensure every prosody-modules module that provides an HTTP app is loaded
// unchanged by the module host and sent a GET at its app's home: each
// one's outcome (it answers, or the first thing it needs that cairn lacks)
// must be the one docs/modules.md records in prosodyCensus, so that a
// module that starts or stops working shows up.
func TestLua_ProsodyModules_Census(t *testing.T) {
	root := os.Getenv(prosodyModulesEnv)
	if root == "" {
		t.Skip(prosodyModulesEnv + " is not set (make prosody-modules sets it)")
	}
	mods := httpModules(t, root)
	if len(mods) == 0 {
		t.Fatalf("no HTTP app modules under %s", root)
	}
	dir := t.TempDir()
	for name, file := range mods {
		// Prosody's loader finds <dir>/mod_x/mod_x.lua; some modules sit
		// one folder deeper, or share another module's folder.
		if err := os.Symlink(filepath.Dir(file), filepath.Join(dir, "mod_"+name)); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for name := range mods {
		names = append(names, name)
	}
	sort.Strings(names)
	var rows []string
	for _, name := range names {
		got := censusOne(t, dir, name)
		rows = append(rows, fmt.Sprintf("| %s | %s |", name, got))
		if want, ok := prosodyCensus[name]; !ok || !strings.HasPrefix(got, want) {
			t.Errorf("%s: %s, want %q", name, got, want)
		}
	}
	t.Logf("%d HTTP app modules:\n%s", len(names), strings.Join(rows, "\n"))
}

// censusSetup is, per module, the options it is given and the path
// that the census GETs (default: the app's home).
var censusSetup = map[string]struct {
	options map[string]any
	path    string
}{
	"http_libjs":          {options: map[string]any{"libjs_path": "testdata"}, path: "/share/mod_http_conv.lua"},
	"pastebin":            {path: "/pastebin/nosuchpaste"},
	"register_apps":       {path: "/register_apps/assets/logos/conversations.svg"},
	"server_status":       {options: map[string]any{"server_status_show_hosts": []any{"example.com"}}, path: "/server-status/"},
	"stanza_counter_http": {path: "/stanza-counter/"},
	"webpresence":         {path: "/status/alice@example.com/text"},
}

// censusOne loads module name from dir on a fresh host and GETs its app.
func censusOne(t *testing.T, dir, name string) string {
	setup := censusSetup[name]
	if p, ok := setup.options["libjs_path"].(string); ok {
		p, _ = filepath.Abs(p)
		setup.options["libjs_path"] = p
	}
	h, _ := startHost(t, []string{name}, func(c *config.ModulesConfig) {
		c.Dir = dir
		c.Lua.MaxRunTime = "2s"
		c.Options = map[string]map[string]any{name: setup.options}
	})
	if err, ok := h.Failed()[name]; ok {
		msg := err.Error()
		if i := strings.Index(msg, "/mod_"+name+".lua:"); i >= 0 {
			msg = msg[i+1:]
		}
		return "load: " + firstLine(msg)
	}
	urls := h.URLs()
	if len(urls) == 0 {
		return "loads, no app"
	}
	u := urls[0][strings.Index(urls[0], ": ")+2:]
	if setup.path != "" {
		u = h.Listeners()[0].URL() + setup.path
	}
	r := req(t, "GET", u, "")
	return fmt.Sprintf("answers %d %s", r.code, firstLine(r.body))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 100 {
		s = s[:100]
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

// httpModules finds the modules of root that provide an HTTP app (they
// call module:provides("http", ...) or module:depends("http")): name ->
// file.
func httpModules(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := d.Name()
		if !strings.HasPrefix(base, "mod_") || !strings.HasSuffix(base, ".lua") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		src := strings.Join(strings.Fields(string(b)), "")
		src = strings.ReplaceAll(src, "'", `"`)
		if strings.Contains(src, `:provides("http"`) || strings.Contains(src, `:depends("http")`) {
			out[strings.TrimSuffix(strings.TrimPrefix(base, "mod_"), ".lua")] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// prosodyCensus is what each module does in cairn: "answers <status>"
// or the start of its load error. docs/modules.md has the same table.
var prosodyCensus = map[string]string{
	"atom":                 `load: mod_atom.lua:4: depends("pep")`,
	"http_libjs":           "answers 200",
	"http_muc_log":         `load: mod_http_muc_log.lua:1: module "util.multitable" not found`,
	"http_pep_avatar":      `load: mod_http_pep_avatar.lua:4: depends("pep")`,
	"http_upload":          `load: mod_http_upload.lua:12: depends("disco")`,
	"invites_api":          "loads, no app",
	"invites_page":         `load: mod_invites_page.lua:6: module "util.interpolation" not found`,
	"invites_register_web": `load: mod_invites_register_web.lua:3: module "core.usermanager" not found`,
	"muc_log_http":         `load: mod_muc_log_http.lua:9: module "core.configmanager" not found`,
	"pastebin":             "answers 200 Invalid paste id, perhaps it expired?",
	"pubsub_feeds":         `load: mod_pubsub_feeds.lua:16: depends("pubsub")`,
	"register_apps":        `answers 200 <?xml`,
	"register_json":        `load: mod_register_json.lua:14: attempt to index a non-table object(nil) with key 'open'`,
	"register_web":         `load: mod_register_web.lua:3: module "core.usermanager" not found`,
	"server_status":        `answers 200 <?xml version="1.0" encoding="UTF-8" ?>`,
	"stanza_counter_http":  "answers 500",
	"unified_push":         `load: mod_unified_push.lua:8: module "util.jwt" not found`,
	"webpresence":          "answers 200 offline",
}
