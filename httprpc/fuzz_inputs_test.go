package httprpc_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"reflect"
	"strings"
	"testing"

	"cairn/httprpc"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/node/config"
	"cairn/storage"

	"github.com/ipfs/boxo/files"
	"github.com/ipfs/go-cid"
)

// The fuzz targets below feed the outside inputs of issue 11 (a CAR, a
// tar, dag-json and dag-cbor, a config document, a multipart add) to
// their commands on a node with real storage. Whatever the input, the
// command answers a value or an error (a panic fails the target), the
// canary file added before stays whole and pinned, a failed command
// leaves the pins as they were, and the store passes its check at the
// end. `make fuzz` runs each for a short time; plain `go test` runs the
// seeds.

// fuzzNode opens a node with a pinned canary file and returns a check
// of the invariants to run after each input.
func fuzzNode(f *testing.F) (*node.Node, func(t *testing.T, err error, pinsBefore int)) {
	n := testutil.MustOpenNode(f)
	canary := bytes.Repeat([]byte("canary "), 40000) // several blocks
	res, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "add", nil, nil,
		files.NewMapDirectory(map[string]files.Node{"canary": files.NewBytesFile(canary)}))
	if err != nil {
		f.Fatal(err)
	}
	root := res.Values[len(res.Values)-1].(*node.AddEvent).Hash
	c, err := cid.Decode(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		if errs := n.Store.Check(storage.CheckOptions{}); len(errs) > 0 {
			f.Errorf("store check after fuzzing: %v", errs)
		}
	})
	return n, func(t *testing.T, err error, pinsBefore int) {
		t.Helper()
		if err != nil && (strings.Contains(err.Error(), "panic") || err.Error() == "") {
			t.Fatalf("unclear error: %q", err)
		}
		if got, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "cat", []string{root}, nil, nil); err != nil || !bytes.Equal(got.Bytes, canary) {
			t.Fatalf("canary unreadable or changed: %v", err)
		}
		if ok, err := n.IsPinnedRecursive(context.Background(), c); !ok || err != nil {
			t.Fatalf("canary no longer pinned: %v", err)
		}
		if err != nil {
			if now := pinCount(t, n); now != pinsBefore {
				t.Fatalf("a failed command changed the pins: %d then %d", pinsBefore, now)
			}
		}
	}
}

func oneFile(name string, data []byte) files.Directory {
	return files.NewMapDirectory(map[string]files.Node{name: files.NewBytesFile(data)})
}

// FuzzCARImport feeds arbitrary bytes to dag/import (pinning roots).
func FuzzCARImport(f *testing.F) {
	n, check := fuzzNode(f)
	res, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "add", nil, map[string]string{"pin": "false"},
		oneFile("x", []byte("a small file for a CAR")))
	if err != nil {
		f.Fatal(err)
	}
	root := res.Values[len(res.Values)-1].(*node.AddEvent).Hash
	exp, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "dag/export", []string{root}, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	car := exp.Bytes
	f.Add(car)
	f.Add(car[:len(car)-5])                          // cut in a block
	f.Add(append(append([]byte{}, car...), 3, 0, 1)) // a short trailing section
	f.Add([]byte("\x0a\xa1dtest\x01"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		before := pinCount(t, n)
		_, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "dag/import", nil,
			map[string]string{"pin-roots": "true"}, oneFile("in.car", data))
		check(t, err, before)
	})
}

// FuzzTarAdd feeds arbitrary bytes to tar/add.
func FuzzTarAdd(f *testing.F) {
	n, check := fuzzNode(f)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "d/a", Typeflag: tar.TypeReg, Mode: 0o644, Size: 5})
	tw.Write([]byte("hello"))
	tw.WriteHeader(&tar.Header{Name: "d/l", Typeflag: tar.TypeSymlink, Linkname: "a"})
	tw.Close()
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:700])
	f.Add(sparseTar(1 << 20))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		before := pinCount(t, n)
		_, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "tar/add", nil, nil, oneFile("in.tar", data))
		check(t, err, before)
	})
}

// FuzzDagPut feeds arbitrary dag-json (even first byte of codec) and
// dag-cbor (odd) to dag/put, stored in the same codec and pinned.
func FuzzDagPut(f *testing.F) {
	n, check := fuzzNode(f)
	f.Add(byte(0), []byte(`{"a":[1,2.5,"x",{"/":"bafkqaaa"},{"/":{"bytes":"aGk"}}],"b":null}`))
	f.Add(byte(0), []byte(`[{"/":"not a cid"}, 1e999, "\ud800"]`))
	f.Add(byte(1), []byte("\xa2aa\x82\x01\xf9\x3c\x00ab\xd8\x2a\x45\x00\x01\x55\x00\x00"))
	f.Add(byte(1), []byte("\x9f\x01\xff"))
	f.Add(byte(1), []byte("\xbb\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		codec := "dag-json"
		if which%2 == 1 {
			codec = "dag-cbor"
		}
		before := pinCount(t, n)
		_, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "dag/put", nil,
			map[string]string{"input-codec": codec, "store-codec": codec, "pin": "true"}, oneFile("in", data))
		check(t, err, before)
	})
}

// FuzzConfigReplace feeds arbitrary documents to config/replace: a
// refused one leaves the config as it was.
func FuzzConfigReplace(f *testing.F) {
	n, check := fuzzNode(f)
	doc, err := n.ConfigDoc()
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(doc)
	f.Add(good)
	f.Add([]byte(`{"Datastore":{"StorageMax":"1x"}}`))
	f.Add([]byte(`{"API":{"Authorizations":{"a":{"AuthSecret":"basic:","AllowedPaths":["/"]}}}}`))
	f.Add([]byte(`{"Identity":{"PeerID":"x"},"Modules":{"Enabled":["../x"]}}`))
	f.Add([]byte(`[1,2]`))
	// Values config/replace must refuse (TestConfig_IllTypedValues_Refused),
	// each in the node's whole config and alone.
	for _, tc := range illTypedValues {
		whole, alone := map[string]any{}, map[string]any{}
		json.Unmarshal(good, &whole)
		for _, d := range []map[string]any{whole, alone} {
			if err := config.SetKeyExact(d, tc.key, tc.val); err != nil {
				f.Fatal(err)
			}
			b, _ := json.Marshal(d)
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before, err := n.ConfigDoc()
		if err != nil {
			t.Fatal(err)
		}
		pins := pinCount(t, n)
		_, err = httprpc.Call(context.Background(), n, httprpc.DefaultTable, "config/replace", nil, nil, oneFile("config", data))
		check(t, err, pins)
		after, derr := n.ConfigDoc()
		if derr != nil {
			t.Fatalf("config unreadable after replace (%v): %v", err, derr)
		}
		if err != nil && !reflect.DeepEqual(before, after) {
			t.Fatalf("a refused replace (%v) changed the config", err)
		}
		if err == nil {
			// Back to the original, for the next input (without the
			// private key, which config/replace keeps, as Kubo).
			b, _ := json.Marshal(before)
			var back map[string]any
			json.Unmarshal(b, &back)
			if id, ok := back["Identity"].(map[string]any); ok {
				delete(id, "PrivKey")
			}
			b, _ = json.Marshal(back)
			if _, err := httprpc.Call(context.Background(), n, httprpc.DefaultTable, "config/replace", nil, nil, oneFile("config", b)); err != nil {
				t.Fatalf("restoring the config: %v", err)
			}
		}
	})
}

// FuzzMultipartAddStored is FuzzMultipartAdd with the blocks stored and
// pinned.
func FuzzMultipartAddStored(f *testing.F) {
	n, check := fuzzNode(f)
	for _, s := range multipartSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		mr := multipart.NewReader(bytes.NewReader(body), "B")
		dir, err := files.NewFileFromPartReader(mr, "multipart/form-data")
		if err != nil {
			return
		}
		before := pinCount(t, n)
		_, err = httprpc.Call(context.Background(), n, httprpc.DefaultTable, "add", nil,
			map[string]string{"wrap-with-directory": boolStr(len(body)%3 == 0)}, dir)
		check(t, err, before)
	})
}
