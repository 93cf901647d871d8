package slogbridge_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"cairn/internal/slogbridge"
	"cairn/internal/testutil"

	lua "github.com/yuin/gopher-lua"
)

// detailErr is an error whose fields are all unexported: reflected as
// JSON it is "{}".
type detailErr struct {
	file string
	line int
}

func (e *detailErr) Error() string { return fmt.Sprintf("%s:%d: broken", e.file, e.line) }

func luaError(t *testing.T) error {
	L := lua.NewState()
	defer L.Close()
	err := L.DoString("error('oops from lua')")
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		t.Fatalf("gopher-lua gave %T, want *lua.ApiError", err)
	}
	return err
}

// Ensure every error value logged through slog reaches go-log's output
// as its text, whatever its type: a struct of unexported fields, a
// wrapped error, a joined one, gopher-lua's *lua.ApiError, one given to
// With, one inside a group, and a typed nil pointer.
func TestHandler_ErrorValues_Text(t *testing.T) {
	typed := &detailErr{"mod_x.lua", 5}
	wrapped := fmt.Errorf("loading %s: %w", "mod_x.lua", typed)
	joined := errors.Join(errors.New("first"), wrapped)
	lerr := luaError(t)
	var nilErr *detailErr
	stop := testutil.CaptureLog(t)
	log := slogbridge.Logger("slogbridge-test")
	log.Error("typed", "err", typed)
	log.Error("wrapped", "err", wrapped)
	log.Error("joined", "err", joined)
	log.Error("lua", "err", lerr)
	log.With("err", wrapped).Error("with")
	log.Error("group", slog.Group("load", "err", wrapped))
	log.Error("nil", "err", error(nilErr))
	slog.New(slogbridge.Handler()).Error("default", "err", wrapped)
	lines := stop()
	for _, tc := range []struct {
		msg  string
		get  func(map[string]any) any
		want string
	}{
		{"typed", field("err"), "mod_x.lua:5: broken"},
		{"wrapped", field("err"), "loading mod_x.lua: mod_x.lua:5: broken"},
		{"joined", field("err"), "first\nloading mod_x.lua: mod_x.lua:5: broken"},
		{"lua", field("err"), lerr.Error()},
		{"with", field("err"), "loading mod_x.lua: mod_x.lua:5: broken"},
		{"group", func(m map[string]any) any { g, _ := m["load"].(map[string]any); return g["err"] }, "loading mod_x.lua: mod_x.lua:5: broken"},
		{"nil", field("err"), "<nil>"},
		{"default", field("err"), "loading mod_x.lua: mod_x.lua:5: broken"},
	} {
		var line map[string]any
		for _, l := range lines {
			if l["msg"] == tc.msg {
				line = l
			}
		}
		if line == nil {
			t.Errorf("%s: not logged; got %v", tc.msg, lines)
			continue
		}
		if got := tc.get(line); got != tc.want {
			t.Errorf("%s: got %#v, want %q in %v", tc.msg, got, tc.want, line)
		}
	}
	if !strings.Contains(lerr.Error(), "oops from lua") {
		t.Errorf("the Lua error lost its message: %q", lerr.Error())
	}
}

func field(k string) func(map[string]any) any {
	return func(m map[string]any) any { return m[k] }
}
