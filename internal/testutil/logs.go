// logs.go: what go-log writes, captured for a test.

package testutil

import (
	"bufio"
	"encoding/json"
	"testing"

	logging "github.com/ipfs/go-log/v2"
)

// CaptureLog collects the lines go-log writes (every logger of the
// process, at every level its subsystem lets through) from now until
// stop, each decoded from go-log's JSON output.
func CaptureLog(t testing.TB) (stop func() []map[string]any) {
	t.Helper()
	p := logging.NewPipeReader(logging.PipeFormat(logging.JSONOutput))
	done := make(chan []map[string]any)
	go func() {
		var lines []map[string]any
		sc := bufio.NewScanner(p)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("log line %q: %v", sc.Text(), err)
			}
			lines = append(lines, m)
		}
		done <- lines
	}()
	return func() []map[string]any {
		p.Close()
		return <-done
	}
}
