package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"cairn/node/config"
)

func TestWriteFile_ReplaceAndAtomic(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{
		"atomic": config.WriteFileAtomic, "replace": config.WriteFileReplace,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			for _, want := range []string{"first", "second, longer than the first", "3"} {
				if err := write(p, []byte(want), 0o600); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(p)
				if err != nil || string(got) != want {
					t.Fatalf("read back %q, %v; want %q", got, err, want)
				}
			}
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, %v; want 0600", fi.Mode(), err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Fatalf("directory holds %d entries, want only the file (no temporary left)", len(ents))
			}
			if err := write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
				t.Fatal("write into a missing directory succeeded")
			}
		})
	}
}
