package tests

import (
	"crypto/sha3"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The input generator of tests/testdata/kubo/gen_inputs.py, in Go, so that
// the parity test needs no Python.

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((i*31 + 7) % 251)
	}
	return b
}

func shake(n int) []byte {
	if n == 0 {
		return nil
	}
	h := sha3.NewSHAKE256()
	h.Write([]byte("kubo-ref-vectors"))
	b := make([]byte, n)
	h.Read(b)
	return b
}

// content returns the bytes of a named input ("hello", "pattern-N", ...).
func content(name string) ([]byte, error) {
	switch name {
	case "empty":
		return []byte{}, nil
	case "hello":
		return []byte("hello world\n"), nil
	}
	fam, num, ok := strings.Cut(name, "-")
	if !ok {
		return nil, fmt.Errorf("unknown input %q", name)
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return nil, fmt.Errorf("unknown input %q", name)
	}
	switch fam {
	case "pattern":
		return pattern(n), nil
	case "shake":
		return shake(n), nil
	case "zero":
		return make([]byte, n), nil
	}
	return nil, fmt.Errorf("unknown input %q", name)
}

const uniName = "\u00fcn\u00efc\u00f8d\u00e9-\u6587\u4ef6.txt"

type treeEntry struct {
	rel, kind, spec string
	raw             []byte
}

var tree = []treeEntry{
	{rel: "hello.txt", kind: "file", spec: "hello"},
	{rel: "empty-file", kind: "file", spec: "empty"},
	{rel: "file with space.txt", kind: "bytes", raw: []byte("space\n")},
	{rel: uniName, kind: "bytes", raw: []byte("unicode\n")},
	{rel: ".hidden", kind: "bytes", raw: []byte("hidden\n")},
	{rel: "link-to-hello", kind: "symlink", spec: "hello.txt"},
	{rel: "empty-dir", kind: "dir"},
	{rel: "sub", kind: "dir"},
	{rel: "sub/pattern-1000.bin", kind: "file", spec: "pattern-1000"},
	{rel: "sub/deeper", kind: "dir"},
	{rel: "sub/deeper/pattern-262145.bin", kind: "file", spec: "pattern-262145"},
	{rel: "sub/deeper/deepest", kind: "dir"},
	{rel: "sub/deeper/deepest/x.txt", kind: "bytes", raw: []byte("x\n")},
}

// genInputs writes the named file inputs and both directory trees to out.
func genInputs(out string, names []string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		p := filepath.Join(out, name)
		if name == "tree" {
			if err := genTree(p); err != nil {
				return err
			}
			continue
		}
		if name == "hamt-dir" {
			if err := genHAMT(p); err != nil {
				return err
			}
			continue
		}
		b, err := content(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func genTree(root string) error {
	for _, e := range tree {
		p := filepath.Join(root, e.rel)
		switch e.kind {
		case "dir":
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case "symlink":
			os.Remove(p)
			if err := os.Symlink(e.spec, p); err != nil {
				return err
			}
		default:
			data := e.raw
			if e.kind == "file" {
				var err error
				if data, err = content(e.spec); err != nil {
					return err
				}
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func genHAMT(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	for i := 0; i < 8000; i++ {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%05d.txt", i)), []byte(fmt.Sprintf("%d\n", i)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
