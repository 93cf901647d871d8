// fastdecode.go: turning a generic config document straight into a typed
// value, without encoding/json's reflection caches.
//
// Decoding the config through encoding/json (marshal the document, then
// unmarshal it into the struct) makes the json package build and keep its
// field tables for every struct type of Kubo's and cairn's configs, and
// leaves the garbage of building them: about half a megabyte of the
// daemon's idle memory, read once at start (docs/performance.md, "Idle
// memory"). DecodeDoc does the common case by walking the document and the
// type together, and declines (returns false) whenever encoding/json might
// do anything else: the caller then takes the encoding/json path, which
// also gives every error its usual text.

package config

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"
)

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
)

// decodeInto sets *out (a pointer to a zero value) to what
// json.Unmarshal(json.Marshal(doc), out) gives, with DecodeDoc when it can
// tell and through the JSON text otherwise.
func decodeInto(doc map[string]any, out any) error {
	if DecodeDoc(doc, out) {
		return nil
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// DecodeDoc sets *out (a pointer to a zero value) to what
// json.Unmarshal(json.Marshal(doc), out) would, and reports true; it
// reports false, with *out unchanged, when it cannot tell that the two
// agree (an ill-typed value, a type or tag it does not handle): the caller
// must then decode with encoding/json.
func DecodeDoc(doc map[string]any, out any) bool {
	p := reflect.ValueOf(out)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return false
	}
	v := reflect.New(p.Elem().Type()).Elem()
	if !decodeValue(doc, v) {
		return false
	}
	p.Elem().Set(v)
	return true
}

// decodeValue decodes the generic value in into v, a settable zero value
// (fresh: decoding never merges into earlier contents), as encoding/json's
// indirect and value/literalStore/object/array do for the JSON text of in.
func decodeValue(in any, v reflect.Value) bool {
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		if in == nil {
			return true // null leaves a nil pointer
		}
		v.Set(reflect.New(t.Elem()))
		if t.Implements(unmarshalerType) || t.Implements(textUnmarshalerType) {
			return callUnmarshaler(in, v)
		}
		return decodeValue(in, v.Elem())
	}
	if t.Name() != "" {
		pt := reflect.PointerTo(t)
		if pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
			return callUnmarshaler(in, v.Addr())
		}
	}
	switch in := in.(type) {
	case nil:
		// null: no effect on a value, nil for the rest (v is zero).
		return true
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			return decodeStruct(in, v)
		case reflect.Map:
			return decodeMap(in, v)
		case reflect.Interface:
			return setInterface(in, v)
		}
	case []any:
		switch t.Kind() {
		case reflect.Slice:
			if t.Elem().Kind() == reflect.Uint8 {
				return false // []byte decodes from base64 text
			}
			s := reflect.MakeSlice(t, len(in), len(in))
			for i, e := range in {
				if !decodeValue(e, s.Index(i)) {
					return false
				}
			}
			v.Set(s)
			return true
		case reflect.Interface:
			return setInterface(in, v)
		}
	case string:
		if !utf8.ValidString(in) {
			return false // Marshal would replace the invalid bytes
		}
		switch t.Kind() {
		case reflect.String:
			if t == numberType {
				return false
			}
			v.SetString(in)
			return true
		case reflect.Interface:
			return setInterface(in, v)
		}
	case bool:
		switch t.Kind() {
		case reflect.Bool:
			v.SetBool(in)
			return true
		case reflect.Interface:
			return setInterface(in, v)
		}
	case float64:
		// Exact integers only, well inside the range where the text
		// Marshal writes reads back as the same integer.
		integral := in == math.Trunc(in) && math.Abs(in) <= 1<<53
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if !integral || v.OverflowInt(int64(in)) {
				return false
			}
			v.SetInt(int64(in))
			return true
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			if !integral || math.Signbit(in) || v.OverflowUint(uint64(in)) { // "-0" is no uint
				return false
			}
			v.SetUint(uint64(in))
			return true
		case reflect.Float64:
			if math.IsInf(in, 0) || math.IsNaN(in) {
				return false
			}
			v.SetFloat(in)
			return true
		case reflect.Interface:
			if math.IsInf(in, 0) || math.IsNaN(in) {
				return false
			}
			return setInterface(in, v)
		}
	}
	return false
}

// setInterface stores a copy of in into an empty interface, as
// encoding/json stores a value it decoded without a Go type.
func setInterface(in any, v reflect.Value) bool {
	if v.NumMethod() != 0 {
		return false
	}
	c, ok := copyGeneric(in)
	if ok {
		v.Set(reflect.ValueOf(&c).Elem())
	}
	return ok
}

// copyGeneric deep-copies a generic JSON value; false for values that are
// not what encoding/json decodes into an interface (or that would not
// come back unchanged from their JSON text).
func copyGeneric(in any) (any, bool) {
	switch in := in.(type) {
	case nil, bool:
		return in, true
	case string:
		return in, utf8.ValidString(in)
	case float64:
		return in, !math.IsInf(in, 0) && !math.IsNaN(in)
	case map[string]any:
		out := make(map[string]any, len(in))
		for k, e := range in {
			c, ok := copyGeneric(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(in))
		for i, e := range in {
			c, ok := copyGeneric(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// callUnmarshaler hands the JSON text of in to p's UnmarshalJSON (or a
// string's bytes to its UnmarshalText); an error declines, so that
// encoding/json reports it in its own words.
func callUnmarshaler(in any, p reflect.Value) bool {
	if u, ok := reflect.TypeAssert[json.Unmarshaler](p); ok {
		b, err := json.Marshal(in)
		return err == nil && u.UnmarshalJSON(b) == nil
	}
	u, ok := reflect.TypeAssert[encoding.TextUnmarshaler](p)
	if !ok {
		return false
	}
	switch in := in.(type) {
	case nil:
		return true // null does not reach UnmarshalText
	case string:
		return utf8.ValidString(in) && u.UnmarshalText([]byte(in)) == nil
	}
	return false
}

// decodeMap fills a map with string keys.
func decodeMap(in map[string]any, v reflect.Value) bool {
	t := v.Type()
	kt := t.Key()
	if kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshalerType) {
		return false
	}
	m := reflect.MakeMapWithSize(t, len(in))
	for k, e := range in {
		if !utf8.ValidString(k) {
			return false
		}
		ev := reflect.New(t.Elem()).Elem()
		if !decodeValue(e, ev) {
			return false
		}
		kv := reflect.New(kt).Elem()
		kv.SetString(k)
		m.SetMapIndex(kv, ev)
	}
	v.Set(m)
	return true
}

// decodeStruct sets the fields the document names exactly. Keys that only
// match a field ignoring case, and struct types whose JSON fields
// encoding/json works out with rules DecodeDoc does not follow (embedded
// fields, the string option, clashing names), decline.
func decodeStruct(in map[string]any, v reflect.Value) bool {
	t := v.Type()
	names := make([]string, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return false
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") {
			return false
		}
		if name == "" {
			name = f.Name
		} else if !plainName(name) {
			return false
		}
		for _, other := range names[:i] {
			if strings.EqualFold(other, name) {
				return false
			}
		}
		names[i] = name
	}
	for k, e := range in {
		field := -1
		for i, name := range names {
			if name == "" {
				continue
			}
			if name == k {
				field = i
				break
			}
			if strings.EqualFold(name, k) {
				return false
			}
		}
		if field < 0 {
			if !utf8.ValidString(k) {
				return false
			}
			continue // encoding/json ignores unknown keys
		}
		if !decodeValue(e, v.Field(field)) {
			return false
		}
	}
	return true
}

// plainName reports whether a tag name is letters, digits and
// underscores, which encoding/json takes as given.
func plainName(s string) bool {
	for _, c := range s {
		if c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && !('0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}
