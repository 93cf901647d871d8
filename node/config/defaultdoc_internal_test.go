package config

import (
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"
)

var updateDefaultDoc = flag.Bool("update", false, "rewrite defaultdoc.json from buildDefaultDoc")

// TestDefaultDocFile: the default document the daemon reads from
// defaultdoc.json is the one the config types build.
func TestDefaultDocFile(t *testing.T) {
	want := buildDefaultDoc()
	if *updateDefaultDoc {
		b, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("defaultdoc.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("defaultdoc.json rewritten: run the test again to check it")
		return
	}
	var got map[string]any
	if err := json.Unmarshal(defaultDocJSON, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Fatalf("defaultdoc.json is stale (go test ./node/config -run TestDefaultDocFile -update):\nfile:  %s\nbuilt: %s", gb, wb)
	}
	if !reflect.DeepEqual(defaultDoc(), want) {
		t.Fatal("defaultDoc differs from buildDefaultDoc")
	}
}
