package config_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/node/config"
)

// viaJSON is what DecodeDoc stands for: the document's JSON text decoded
// by encoding/json into a new value of out's type.
func viaJSON(doc map[string]any, out any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// checkDecodeDoc decodes doc both ways into new values of the type of
// zero (a pointer) and fails if DecodeDoc accepted a document that
// encoding/json decodes differently or refuses. It reports whether
// DecodeDoc accepted it.
func checkDecodeDoc(t *testing.T, doc map[string]any, zero any) bool {
	t.Helper()
	typ := reflect.TypeOf(zero).Elem()
	fast := reflect.New(typ)
	ok := config.DecodeDoc(doc, fast.Interface())
	slow := reflect.New(typ)
	err := viaJSON(doc, slow.Interface())
	if !ok {
		if !reflect.DeepEqual(fast.Elem().Interface(), reflect.Zero(typ).Interface()) {
			t.Fatalf("DecodeDoc declined but changed its output")
		}
		return false
	}
	if err != nil {
		b, _ := json.Marshal(doc)
		t.Fatalf("DecodeDoc accepted a document encoding/json refuses (%v): %s", err, b)
	}
	if !reflect.DeepEqual(fast.Elem().Interface(), slow.Elem().Interface()) {
		b, _ := json.Marshal(doc)
		t.Fatalf("DecodeDoc and encoding/json differ on %s:\nfast %#v\njson %#v", b, fast.Elem().Interface(), slow.Elem().Interface())
	}
	return true
}

// TestDecodeDoc_ConfigsDecodeFast: the documents cairn writes (the default
// with each profile, a board budget) take the fast path, for Kubo's and
// for cairn's config types, with encoding/json's result.
func TestDecodeDoc_ConfigsDecodeFast(t *testing.T) {
	docs := map[string]map[string]any{"kubo default": config.KuboDefaultDoc()}
	for _, p := range append(config.ProfileNames(), "") {
		doc := config.DefaultDoc(config.Identity{PeerID: "12D3KooWtest"})
		if p != "" {
			if err := config.ApplyProfiles(doc, p); err != nil {
				t.Fatal(p, err)
			}
		}
		docs["cairn "+p] = testutil.JSONRoundTrip(t, doc)
	}
	budget := testutil.JSONRoundTrip(t, config.DefaultDoc(config.Identity{}))
	budget["Budget"] = map[string]any{"Board": "pi-zero-2w", "MemoryMiB": 256.0, "HTTPConcurrency": 64.0}
	docs["budget"] = budget
	for name, doc := range docs {
		if !checkDecodeDoc(t, doc, &config.Config{}) {
			t.Errorf("%s: DecodeDoc declined the config type", name)
		}
	}
}

// TestDecodeDoc_Declines: values encoding/json would refuse or treat
// specially are left to it.
func TestDecodeDoc_Declines(t *testing.T) {
	base := testutil.JSONRoundTrip(t, config.DefaultDoc(config.Identity{}))
	for _, tc := range []struct {
		key string
		val any
	}{
		{"Datastore.StorageGCWatermark", "90"},          // string into an int
		{"Datastore.StorageGCWatermark", 90.5},          // fraction into an int
		{"Datastore.StorageGCWatermark", 1e300},         // out of range
		{"Datastore.BloomFilterSize", -1.0},             // negative
		{"Bootstrap", "not a list"},                     // string into a slice
		{"Discovery.MDNS.Enabled", 1.0},                 // number into a bool
		{"Ipns.ResolveCacheSize", math.Copysign(0, -1)}, // -0 is fine for an int
		{"Addresses.API", 5.0},                          // number into Strings (UnmarshalJSON fails)
		{"Swarm.ConnMgr.GracePeriod", "not a duration"},
		{"Datastore.storagemax", "1GB"}, // matches StorageMax only ignoring case
		{"Identity", []any{}},
		{"Budget.MemoryMiB", "256"},
		{"Pinning.RemoteServices", "x"},
		{"API.HTTPHeaders", map[string]any{"X": "not a list"}},
		{"Datastore.StorageMax", "\xff"}, // invalid UTF-8
		{"Datastore.StorageMax", 3},      // a Go int: not what a document read from JSON holds
	} {
		doc := testutil.JSONRoundTrip(t, base)
		if err := setPath(doc, tc.key, tc.val); err != nil {
			t.Fatal(err)
		}
		checkDecodeDoc(t, doc, &config.Config{})
	}
}

func setPath(doc map[string]any, key string, v any) error {
	parts := strings.Split(key, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
	return nil
}

// TestDecodeDoc_Mutations changes random values of the default document
// (and adds keys differing only in case) and compares DecodeDoc with
// encoding/json on each; both paths must be taken many times (one config
// type sees every mutation, and declines most, hence the many documents).
func TestDecodeDoc_Mutations(t *testing.T) {
	base := testutil.JSONRoundTrip(t, config.DefaultDoc(config.Identity{PeerID: "x"}))
	base["Budget"] = map[string]any{"MemoryMiB": 512.0}
	r := rand.New(rand.NewPCG(1, 2))
	var paths [][]string
	var walk func(m map[string]any, at []string)
	walk = func(m map[string]any, at []string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append([]string{}, at...), k)
			paths = append(paths, p)
			if sub, ok := m[k].(map[string]any); ok {
				walk(sub, p)
			}
		}
	}
	walk(base, nil)
	values := []any{nil, true, false, 0.0, 1.0, -1.0, 2.5, 1e21, 65536.0, 1 << 40, "", "x", "1h", "10GB", "auto",
		"/ip4/127.0.0.1/tcp/5001", []any{}, []any{"a"}, []any{1.0}, []any{nil}, map[string]any{},
		map[string]any{"a": "b"}, map[string]any{"Enabled": true}, map[string]any{"x": []any{"y"}}}
	accepted, declined := 0, 0
	for i := range 10000 {
		doc := testutil.JSONRoundTrip(t, base)
		for range 1 + r.IntN(3) {
			p := paths[r.IntN(len(paths))]
			// A copy: a later mutation may write into a map it sets.
			v := config.CopyValue(values[r.IntN(len(values))])
			if r.IntN(10) == 0 {
				// A key that only differs in case, or an unknown one.
				last := p[len(p)-1]
				p = append(append([]string{}, p[:len(p)-1]...), []string{strings.ToLower(last), last + "X"}[r.IntN(2)])
			}
			if err := setPath(doc, strings.Join(p, "."), v); err != nil {
				t.Fatal(err)
			}
		}
		if checkDecodeDoc(t, doc, &config.Config{}) {
			accepted++
		} else {
			declined++
		}
		if t.Failed() {
			t.Fatalf("mutation %d", i)
		}
	}
	t.Logf("accepted %d, declined %d", accepted, declined)
	if accepted < 1000 || declined < 500 {
		t.Fatalf("too few of one path: accepted %d, declined %d", accepted, declined)
	}
}

// FuzzDecodeDoc: any JSON object decodes the same both ways when
// DecodeDoc accepts it.
func FuzzDecodeDoc(f *testing.F) {
	def, _ := json.Marshal(config.DefaultDoc(config.Identity{}))
	f.Add(def)
	f.Add([]byte(`{"Datastore":{"StorageMax":"1GB","StorageGCWatermark":-0},"Bootstrap":null}`))
	f.Add([]byte(`{"Swarm":{"ConnMgr":{"LowWater":1e3,"GracePeriod":"20s"},"ResourceMgr":{"MaxMemory":"1GB"}}}`))
	f.Add([]byte(`{"API":{"HTTPHeaders":{"a":["b"]}},"Pinning":{"RemoteServices":{"s":{"API":{"Key":"k"}}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var doc map[string]any
		if json.Unmarshal(b, &doc) != nil || doc == nil {
			return
		}
		checkDecodeDoc(t, doc, &config.Config{})
	})
}
