package commands_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/rpc"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
)

// FuzzDecodeArgs feeds arbitrary query strings to option decoding and
// argument binding for every command: they must return a value or a
// ParseError, never panic.
func FuzzDecodeArgs(f *testing.F) {
	f.Add("add", "arg=a&pin=TRUE&chunker=size-10&cid-version=0x1")
	f.Add("cat", "offset=010&length=1_000&arg=/ipfs/x")
	f.Add("cid/format", "f=%25P&v=0&b=base32&arg=Qm")
	f.Add("version", "number=&all=maybe")
	f.Add("add", "pin=true&pin=false&mode=0644&mtime=-1")
	cmds := commands.DefaultTable.Commands()
	f.Fuzz(func(t *testing.T, path, query string) {
		cmd := commands.DefaultTable.Find(path)
		if cmd == nil {
			cmd = cmds[len(path)%len(cmds)]
		}
		vals, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		var pairs []rpc.KV
		var args []string
		for k, vs := range vals {
			for _, v := range vs {
				pairs = append(pairs, rpc.KV{Key: k, Value: v})
				if k == "arg" {
					args = append(args, v)
				}
			}
		}
		opts, err := rpc.DecodeOptions(commands.DefaultTable.OptionsFor(cmd.Path), pairs)
		if err != nil {
			if _, ok := err.(*rpc.ParseError); !ok {
				t.Fatalf("non-parse error %T: %v", err, err)
			}
			return
		}
		for _, o := range commands.DefaultTable.OptionsFor(cmd.Path) {
			if o.Default != nil {
				if _, ok := opts[o.Name()]; !ok {
					t.Fatalf("default of %s missing", o.Name())
				}
			}
		}
		lines := rpc.SplitBodyLines([]byte(query))
		if _, err := rpc.BindArgs(cmd, args, lines, len(query)%2 == 0); err != nil {
			if _, ok := err.(*rpc.ParseError); !ok {
				t.Fatalf("non-parse error %T: %v", err, err)
			}
		}
	})
}

// FuzzMultipartAdd feeds arbitrary multipart bodies to the add path
// (only-hash): it must end with events or an error, never a panic, and
// nothing may be stored.
func FuzzMultipartAdd(f *testing.F) {
	for _, s := range multipartSeeds() {
		f.Add(s)
	}
	n := testutil.MustOpenNode(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		mr := multipart.NewReader(bytes.NewReader(body), "B")
		dir, err := files.NewFileFromPartReader(mr, "multipart/form-data")
		if err != nil {
			return
		}
		_, err = rpc.Call(context.Background(), n, commands.DefaultTable, "add", nil,
			map[string]string{"only-hash": "true", "wrap-with-directory": boolStr(len(body)%3 == 0)}, dir)
		if err != nil && strings.Contains(err.Error(), "panic") {
			t.Fatal(err)
		}
		if st, _ := n.Store.Stat(); st.NumBlocks != 0 {
			t.Fatalf("only-hash stored %d blocks", st.NumBlocks)
		}
	})
	if errs := n.Store.Check(storage.CheckOptions{}); len(errs) > 0 {
		f.Fatal(errs)
	}
}

// multipartSeeds are multipart bodies (boundary "B") for the add targets.
func multipartSeeds() [][]byte {
	seed := func(parts ...[3]string) []byte {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.SetBoundary("B")
		for _, p := range parts {
			h := map[string][]string{"Content-Disposition": {`form-data; name="file"; filename="` + p[0] + `"`}}
			if p[1] != "" {
				h["Content-Type"] = []string{p[1]}
			}
			w, _ := mw.CreatePart(h)
			w.Write([]byte(p[2]))
		}
		mw.Close()
		return b.Bytes()
	}
	return [][]byte{
		seed([3]string{"d", "application/x-directory", ""}, [3]string{"d%2Fa", "", "hello"}),
		seed([3]string{"..%2F..%2Fetc", "", "x"}, [3]string{"l", "application/symlink", "target"}),
		seed([3]string{"a%2Fb", "", "1"}, [3]string{"c", "", "2"}, [3]string{"a%2Fd", "", "3"}),
		[]byte("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nunterminated"),
		[]byte("--B--\r\n"),
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
