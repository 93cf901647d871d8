// document.go: the config file as a generic JSON document, the form the
// config commands get and set arbitrary keys in (Kubo's `ipfs config`
// works on the JSON document too), and the one way between it and the
// typed Config: Decode one way, ToDoc the other.

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// File is the config's file name inside a repo.
const File = "config"

// ReadDoc reads the config file of repo as a generic JSON document. Kubo
// keys the file lacks (a repo made before cairn wrote them all) read as
// Kubo's defaults (FillMissing); the file itself changes only when the
// config is next written.
func ReadDoc(repo string) (map[string]any, error) {
	path := filepath.Join(repo, File)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if doc == nil {
		return nil, fmt.Errorf("config %s: not a JSON object", path)
	}
	FillMissing(doc)
	return doc, nil
}

// Decode turns a JSON document into a Config: the one way from document
// to typed config. A value of the wrong type fails with Kubo's message
// ("failure to decode config: ..."; "invalid config: ..." for a key only
// cairn has). Both the deprecated Internal.UnixFSShardingSizeThreshold and
// its successor set is an error, as Kubo's daemon refuses to start on it.
func Decode(doc map[string]any) (*Config, error) {
	var c Config
	if err := decodeInto(doc, &c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && ownKey(te.Field) {
			return nil, fmt.Errorf("invalid config: %w", err)
		}
		return nil, fmt.Errorf("failure to decode config: %w", err)
	}
	if c.Internal.UnixFSShardingSizeThreshold != nil && !c.Import.UnixFSHAMTDirectorySizeThreshold.IsDefault() {
		return nil, errors.New(DeprecatedShardingThreshold)
	}
	return &c, nil
}

// ToDoc turns c into a generic JSON document, every key present (zero
// values included) except those omitted when empty: the one way from
// typed config to document.
func (c *Config) ToDoc() (map[string]any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("failure to decode config: %w", err)
	}
	return doc, nil
}

// Normalize returns doc as a config replace stores it: every key of
// Config present, with doc's value or the zero value, as a decode and
// encode leave them (keys Config does not know are not in the result).
func Normalize(doc map[string]any) (map[string]any, error) {
	c, err := Decode(doc)
	if err != nil {
		return nil, err
	}
	return c.ToDoc()
}

// ownKey reports whether the dotted key path lies in a key only cairn
// has (a field tagged kubo:"-").
func ownKey(path string) bool {
	t := reflect.TypeFor[Config]()
	for _, part := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := t.FieldByName(part)
		if !ok {
			return false
		}
		if f.Tag.Get("kubo") == "-" {
			return true
		}
		t = f.Type
	}
	return false
}

// CheckKey reports whether key (dot-separated, names matched exactly)
// names a config key, as Kubo's config.CheckKey does: any name is
// accepted inside a map section or a free-form value. Errors are the
// ones Kubo gives, for Kubo's keys alone: "A.B not found", "A key is not
// a map".
func CheckKey(key string) error {
	if checkKeyIn(reflect.TypeFor[Config](), key, false) == nil {
		return nil
	}
	return checkKeyIn(reflect.TypeFor[Config](), key, true)
}

// checkKeyIn is CheckKey for the fields of the struct type t; kuboOnly
// passes over the fields tagged kubo:"-".
func checkKeyIn(t reflect.Type, key string, kuboOnly bool) error {
	parts := strings.Split(key, ".")
	for i, part := range parts {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := t.FieldByName(part)
			if !ok || !f.IsExported() || kuboOnly && f.Tag.Get("kubo") == "-" {
				return fmt.Errorf("%s not found", strings.Join(parts[:i+1], "."))
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
		case reflect.Interface:
			return nil
		default:
			return fmt.Errorf("%s key is not a map", strings.Join(parts[:i], "."))
		}
	}
	return nil
}

// FillMissing adds to doc the keys of the default document (DefaultDoc)
// that doc lacks, where they are Kubo keys: it descends into sections that are structs in
// Config (Datastore, Swarm.ConnMgr, ...) but never into maps of the
// user's entries (DNS.Resolvers, API.HTTPHeaders, ...), so a map the user
// emptied stays empty. Values present in doc, null included, are never
// changed; cairn's own keys (kubo:"-") and unknown keys are left as they
// are. Values taken from the defaults are copied (CopyValue): doc never
// shares them. Identity is never added.
func FillMissing(doc map[string]any) {
	fillMissing(doc, defaultDocOnce(), reflect.TypeFor[Config]())
}

func fillMissing(doc, defaults map[string]any, t reflect.Type) {
	for k, dv := range defaults {
		f, ok := t.FieldByName(k)
		if !ok || !f.IsExported() || f.Tag.Get("kubo") == "-" {
			continue
		}
		cur, present := doc[k]
		if !present {
			doc[k] = CopyValue(dv)
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		cm, ok1 := cur.(map[string]any)
		dm, ok2 := dv.(map[string]any)
		if ok1 && ok2 && ft.Kind() == reflect.Struct {
			fillMissing(cm, dm, ft)
		}
	}
}

// CopyValue deep-copies a generic JSON document value (maps and slices;
// other values are shared, as they are immutable).
func CopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = CopyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = CopyValue(e)
		}
		return out
	}
	return v
}

// MergeDocs returns a copy of left with right merged in: where both hold
// a map the maps are merged recursively, otherwise right's value wins.
func MergeDocs(left, right map[string]any) map[string]any {
	out := maps.Clone(left)
	if out == nil {
		out = map[string]any{}
	}
	for k, rv := range right {
		if rm, ok := rv.(map[string]any); ok {
			if lm, ok := out[k].(map[string]any); ok {
				out[k] = MergeDocs(lm, rm)
				continue
			}
		}
		out[k] = rv
	}
	return out
}

// jsonCopy returns doc as it reads back from JSON.
func jsonCopy(doc map[string]any) (map[string]any, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// GetKey looks up a dotted key in a config document.
func GetKey(doc map[string]any, key string) (any, error) {
	var cur any = doc
	parts := strings.Split(key, ".")
	for i, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s key is not a map", strings.Join(parts[:i], "."))
		}
		v, ok := lookupFold(m, p)
		if !ok {
			return nil, fmt.Errorf("key has no attribute %s", p)
		}
		cur = v
	}
	return cur, nil
}

// SetKey sets a dotted key in a config document, creating maps on the way.
func SetKey(doc map[string]any, key string, value any) error {
	parts := strings.Split(key, ".")
	cur := doc
	for i, p := range parts[:len(parts)-1] {
		name := foldName(cur, p)
		next, ok := cur[name]
		if !ok || next == nil {
			nm := map[string]any{}
			cur[name] = nm
			cur = nm
			continue
		}
		nm, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s key is not a map", strings.Join(parts[:i+1], "."))
		}
		cur = nm
	}
	cur[foldName(cur, parts[len(parts)-1])] = value
	return nil
}

func lookupFold(m map[string]any, k string) (any, bool) {
	if v, ok := m[k]; ok {
		return v, true
	}
	for name, v := range m {
		if strings.EqualFold(name, k) {
			return v, true
		}
	}
	return nil, false
}

func foldName(m map[string]any, k string) string {
	if _, ok := m[k]; ok {
		return k
	}
	for name := range m {
		if strings.EqualFold(name, k) {
			return name
		}
	}
	return k
}

// GetKeyExact returns the value at a dotted key, matching names exactly
// (Kubo's MapGetKV): "A.B not found", "A key is not a map".
func GetKeyExact(doc map[string]any, key string) (any, error) {
	var cur any = doc
	parts := strings.Split(key, ".")
	for i, part := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s key is not a map", strings.Join(parts[:i], "."))
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("%s not found", strings.Join(parts[:i+1], "."))
		}
	}
	return cur, nil
}

// SetKeyExact sets the value at a dotted key, matching names exactly and
// creating missing (or null) maps on the way (Kubo's MapSetKV).
func SetKeyExact(doc map[string]any, key string, value any) error {
	var cur any = doc
	parts := strings.Split(key, ".")
	for i, part := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("%s key is not a map", strings.Join(parts[:i], "."))
		}
		if i == len(parts)-1 {
			m[part] = value
			return nil
		}
		next, ok := m[part]
		if !ok || next == nil {
			next = map[string]any{}
			m[part] = next
		}
		cur = next
	}
	return nil
}
