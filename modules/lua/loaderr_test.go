package lua_test

import (
	"path/filepath"
	"testing"

	"cairn/internal/slogbridge"
	"cairn/internal/testutil"
	"cairn/node/config"
)

// Ensure the log lines of a module that fails to load, and of a handler
// that raises, carry the error's text naming file and line as Lua and
// Prosody word it, through the daemon's own logger (go-log): a syntax
// error, an error raised at load time, a loop at load time (the run time
// limit), and an error raised in a handler.
func TestLua_LoadErrors_LogFileAndLine(t *testing.T) {
	stop := testutil.CaptureLog(t)
	_, u := startHostLog(t, []string{"broken_syntax", "broken_raise", "broken_loop", "http_limits"}, slogbridge.Logger("modules"), func(c *config.ModulesConfig) {
		c.Lua.MaxRunTime = "1s"
	})
	if r := req(t, "GET", u+"/limits/error", ""); r.code != 500 {
		t.Errorf("GET /limits/error: %d, want 500", r.code)
	}
	lines := stop()
	dir, _ := filepath.Abs("testdata")
	for _, tc := range []struct {
		msg, module string
		want        string // the err field, after the folder
	}{
		{"module failed to load", "broken_syntax", "/mod_broken_syntax.lua:1: '}' expected near '<eof>'"},
		{"module failed to load", "broken_raise", "/mod_broken_raise.lua:3: oops at load"},
		{"module failed to load", "broken_loop", "/mod_broken_loop.lua: lua: run time limit exceeded (1s)"},
		{"lua handler failed", "http_limits", "/mod_http_limits.lua:7: oops from lua"},
	} {
		want := dir + tc.want
		if tc.module == "broken_loop" {
			want = "loading " + want
		}
		var got []string
		for _, l := range lines {
			if l["msg"] == tc.msg && l["module"] == tc.module {
				s, _ := l["err"].(string)
				got = append(got, s)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s (%s): err %q, want one line with err %q", tc.msg, tc.module, got, want)
		}
	}
}
