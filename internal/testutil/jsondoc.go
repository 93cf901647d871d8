package testutil

import (
	"encoding/json"
	"testing"
)

// JSONRoundTrip is doc as it reads back from its JSON text (what a config
// file holds): numbers become float64, typed values generic ones.
func JSONRoundTrip(t testing.TB, doc map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
