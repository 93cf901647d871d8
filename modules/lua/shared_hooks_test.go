package lua_test

import (
	"strings"
	"testing"

	"cairn/node/config"
)

// module:shared: one table per path for every module (relative paths
// under /<host>/<module>/ as Prosody's), the same object each time, kept
// across a memory stop of the state; values are strings, numbers,
// booleans and tables, and the store is capped.
func TestLua_Shared_ProsodyPaths(t *testing.T) {
	_, u := startHost(t, []string{"http_share_a", "http_share_b"}, func(c *config.ModulesConfig) {
		c.Lua.MaxMemory = "16MiB"
		c.Lua.MaxRunTime = "3s"
	})
	if r := req(t, "GET", u+"/share_a/identity", ""); r.body != "true true true userdata" {
		t.Errorf("identity: %d %q", r.code, r.body)
	}
	for i, want := range []string{"1", "2"} {
		if r := req(t, "GET", u+"/share_a/inc", ""); r.body != want {
			t.Fatalf("inc %d: %d %q", i, r.code, r.body)
		}
	}
	if r := req(t, "GET", u+"/share_b/acount", ""); r.body != "2" {
		t.Errorf("b reads a's counter by its relative path: %q", r.body)
	}
	if r := req(t, "POST", u+"/share_a/put", "k=colour&v=blue", "Content-Type", "application/x-www-form-urlencoded"); r.body != "ok" {
		t.Fatalf("put: %d %q", r.code, r.body)
	}
	if r := req(t, "GET", u+"/share_b/get/colour", ""); r.body != "blue" {
		t.Errorf("b reads what a stored: %q", r.body)
	}
	if r := req(t, "GET", u+"/share_a/nested", ""); r.body != "1=string,2=string,3=userdata,4=string #4 ipairs 4 next 1 true true" {
		t.Errorf("nested tables: %q", r.body)
	}
	r := req(t, "GET", u+"/share_a/refused", "")
	if !strings.Contains(r.body, "false ") || !strings.Contains(r.body, "cannot store a function") || !strings.Contains(r.body, "cannot be a key") {
		t.Errorf("refused values: %q", r.body)
	}
	r = req(t, "GET", u+"/share_a/full", "")
	if !strings.HasPrefix(r.body, "false ") || !strings.Contains(r.body, "the shared tables are full") {
		t.Errorf("store cap (half of 16 MiB): %d %q", r.code, r.body)
	}
	if r := req(t, "GET", u+"/share_a/hog", ""); r.code != 500 {
		t.Fatalf("hog: %d", r.code)
	}
	if r := req(t, "GET", u+"/share_a/inc", ""); r.body != "3" {
		t.Errorf("after a memory stop the shared table is still there: %q", r.body)
	}
}

// module:hook / fire_event / unhook: priorities, first answer wins, the
// same table within one module, copies across modules, a hook that
// fails passes, re-entry into the firing module, hooks back after a
// memory stop, gone with their module.
func TestLua_Hooks_ProsodyEvents(t *testing.T) {
	h, u := startHost(t, []string{"http_hooks_a", "http_hooks_b"}, func(c *config.ModulesConfig) {
		c.Lua.MaxMemory = "16MiB"
		c.Lua.MaxRunTime = "3s"
	})
	for _, c := range [][2]string{
		{"/hooks_a/fire/x", "a5 hello x"},        // b's 9 and 7 pass, a's 5 answers
		{"/hooks_a/fire/b", "b7 b http_hooks_b"}, // b's 7 first
		{"/hooks_a/fire/boom", "~event greet: a handler of module http_hooks_b failed: ~mod_http_hooks_b.lua:7: boom in a hook"}, // b's 9 raises
		{"/hooks_a/fire/low", "a-1"},                // a's 0 logs, a's -1 answers
		{"/hooks_a/count", "2 2"},                   // one table inside a module
		{"/hooks_b/fire-a", "a5 hello from-b"},      // b fires, a answers
		{"/hooks_a/ping", "pong from http_hooks_a"}, // a -> b -> a again
		{"/hooks_a/log", "a0:low"},
	} {
		r := req(t, "GET", u+c[0], "")
		ok := r.body == c[1]
		if strings.HasPrefix(c[1], "~") { // the parts, in order
			rest := r.body
			for _, part := range strings.Split(c[1][1:], "~") {
				_, after, found := strings.Cut(rest, part)
				ok, rest = found, after
				if !ok {
					break
				}
			}
		}
		if r.code != 200 || !ok {
			t.Errorf("%s: %d %q, want %q", c[0], r.code, r.body, c[1])
		}
	}
	if r := req(t, "GET", u+"/hooks_a/unhook", ""); r.body != "ok" {
		t.Fatal(r.body)
	}
	if r := req(t, "GET", u+"/hooks_a/fire/low", ""); r.body != "nil" {
		t.Errorf("after unhook: %q", r.body)
	}
	// The http-error hook customises 404 pages under /hooks_a/ only.
	r := req(t, "GET", u+"/hooks_a/missing", "")
	if r.code != 404 || r.body != "custom 404 for /hooks_a/missing" || r.h.Get("Content-Type") != "text/plain" || r.h.Get("X-From") != "http_hooks_a" {
		t.Errorf("custom 404: %d %q %v", r.code, r.body, r.h)
	}
	if r := req(t, "GET", u+"/hooks_a/no/route", ""); r.code != 404 || r.body != "custom 404 for /hooks_a/no/route" {
		t.Errorf("custom 404 without a route: %d %q", r.code, r.body)
	}
	if r := req(t, "GET", u+"/elsewhere", ""); r.code != 404 || !strings.Contains(r.body, "<title>404 Not Found</title>") {
		t.Errorf("built-in 404 elsewhere: %d %q", r.code, r.body)
	}
	// A memory stop rebuilds a's state at once: its hooks are back.
	if r := req(t, "GET", u+"/hooks_a/hog", ""); r.code != 500 {
		t.Fatalf("hog: %d", r.code)
	}
	if r := req(t, "GET", u+"/hooks_b/fire-a", ""); r.body != "a5 hello from-b" {
		t.Errorf("a's hooks after its memory stop: %q", r.body)
	}
	if r := req(t, "GET", u+"/hooks_a/missing", ""); r.body != "custom 404 for /hooks_a/missing" {
		t.Errorf("a's http-error hook after its memory stop: %q", r.body)
	}
	if err := h.Unload("http_hooks_a"); err != nil {
		t.Fatal(err)
	}
	if r := req(t, "GET", u+"/hooks_b/fire-a", ""); r.body != "nil" {
		t.Errorf("a's hooks after unloading it: %q", r.body)
	}
}
