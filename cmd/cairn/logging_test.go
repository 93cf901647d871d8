package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Ensure GOLOG_LOG_LEVEL and GOLOG_LOG_FMT are honoured at start, as in
// Kubo: the levels show in log/level, the output is JSON, and libp2p's
// (slog) and cairn's own (go-log) loggers write under their subsystems.
func TestDaemon_GologEnv_OneLoggingSetup(t *testing.T) {
	repo := initRepo(t)
	_, url, out := startDaemon(t, repo, "GOLOG_LOG_LEVEL=error,core=info,basichost=debug", "GOLOG_LOG_FMT=json")
	for _, tc := range []struct{ arg, want string }{
		{"", `{"Levels":{"":"error"}}`},
		{"?arg=core", `{"Levels":{"core":"info"}}`},
		{"?arg=basichost", `{"Levels":{"basichost":"debug"}}`},
	} {
		if code, body := post(t, url+"/api/v0/log/level"+tc.arg, nil); code != 200 || strings.TrimSpace(body) != tc.want {
			t.Errorf("log/level%s: %d %s, want %s", tc.arg, code, body, tc.want)
		}
	}
	if code, body := post(t, url+"/api/v0/repo/gc", nil); code != 200 {
		t.Fatalf("repo/gc: %d %s", code, body)
	}
	loggers := map[string]bool{}
	deadline := time.Now().Add(5 * time.Second)
	for !(loggers["core"] && loggers["basichost"]) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		for _, line := range strings.Split(out.String(), "\n") {
			if !strings.HasPrefix(line, "{") {
				continue
			}
			var ev struct{ Level, Logger, Msg string }
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("GOLOG_LOG_FMT=json: %q: %v", line, err)
			}
			if ev.Logger == "core" && strings.HasPrefix(ev.Msg, "gc: removed") && ev.Level == "info" {
				loggers["core"] = true
			}
			if ev.Logger == "basichost" && ev.Level == "debug" {
				loggers["basichost"] = true
			}
		}
	}
	if !loggers["core"] || !loggers["basichost"] {
		t.Fatalf("JSON lines of core (gc) and basichost (libp2p): %v in\n%s", loggers, out.String())
	}
	var ls struct{ Strings []string }
	if code, body := post(t, url+"/api/v0/log/ls", nil); code != 200 || json.Unmarshal([]byte(body), &ls) != nil {
		t.Fatalf("log/ls: %d %s", code, body)
	}
	for _, want := range []string{"core", "core/commands", "cmds/http", "modules", "bitswap", "dht"} {
		if !strings.Contains(" "+strings.Join(ls.Strings, " ")+" ", " "+want+" ") {
			t.Errorf("log/ls lacks %s: %v", want, ls.Strings)
		}
	}
}
