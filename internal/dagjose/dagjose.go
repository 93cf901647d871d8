// Package dagjose is the dag-jose codec (multicodec 0x85) as Kubo 0.42
// has it through its dagjose plugin (github.com/ceramicnetwork/go-dag-jose
// v0.1.1): the same blocks, CIDs, dag/get output and errors, written over
// the dag-cbor and dag-json codecs the node links anyway. go-dag-jose does
// it with about 1.8 MB of code generated from its IPLD schema (in the
// arm64 binary); this is a table of the schema's six struct types and one
// walk over it.
//
// Importing the package registers the codec with go-ipld-prime's
// multicodec registry (as the plugin does in Kubo).
//
// # What the codec does
//
// Decode reads a block as dag-cbor and matches it against the JWE schema,
// then, failing that, the JWS one: a map with only the schema's keys, the
// required ones present (ciphertext; payload; a signature's signature),
// byte fields as bytes (or base64url text), "header" and "unprotected"
// any data but booleans, nulls and links. It shows the byte fields as
// unpadded base64url text and adds a JWS's "link", the CID its payload
// holds.
//
// Encode takes a JOSE object in the general or the flattened JSON
// serialization (a map with "ciphertext" or "payload", text fields in
// base64url) and writes the general one as dag-cbor, byte fields as bytes,
// keys sorted. Like go-dag-jose it passes the JOSE fields through a JSON
// round trip, so numbers inside headers come back as go-dag-jose's do:
// through a float64 printed with %g (an integer of 7 digits or more
// becomes a float), and unknown top-level keys (such as "link") are
// dropped.
//
// The differences: where go-dag-jose panics (a JWE with "recipients": [],
// a null header, unprotected, recipients or signatures) this returns an
// error; a block that is not dag-cbor fails with the dag-cbor error, where
// go-dag-jose may report a schema error it met before the bad byte.
// dagjose_test.go compares both codecs on the same inputs.
package dagjose

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/ipfs/go-cid"
	"github.com/ipld/go-ipld-prime/codec"
	"github.com/ipld/go-ipld-prime/codec/dagcbor"
	"github.com/ipld/go-ipld-prime/codec/dagjson"
	"github.com/ipld/go-ipld-prime/datamodel"
	cidlink "github.com/ipld/go-ipld-prime/linking/cid"
	"github.com/ipld/go-ipld-prime/multicodec"
	"github.com/ipld/go-ipld-prime/node/basicnode"
	"github.com/ipld/go-ipld-prime/schema"
)

// Code is dag-jose's multicodec code.
const Code = 0x85

func init() {
	multicodec.RegisterDecoder(Code, Decode)
	multicodec.RegisterEncoder(Code, Encode)
}

// fieldKind is what a schema field holds.
type fieldKind uint8

const (
	fBytes fieldKind = iota // Base64Url when decoding, Raw when encoding
	fAny                    // the schema's Any: all kinds but bool, null and link
	fLink                   // a CID (the decoded JWS's "link")
	fList                   // a list of elem structs
)

type field struct {
	name        string
	kind        fieldKind
	required    bool
	decodedOnly bool
	elem        *shape
}

// shape is one of the schema's struct types, named without its
// Decoded/Encoded prefix; list names the list type of a list of it.
type shape struct {
	name, list string
	fields     []field
}

var (
	recipient = &shape{"Recipient", "Recipients", []field{
		{name: "header", kind: fAny},
		{name: "encrypted_key", kind: fBytes},
	}}
	jweShape = &shape{"JWE", "", []field{
		{name: "aad", kind: fBytes},
		{name: "ciphertext", kind: fBytes, required: true},
		{name: "iv", kind: fBytes},
		{name: "protected", kind: fBytes},
		{name: "recipients", kind: fList, elem: recipient},
		{name: "tag", kind: fBytes},
		{name: "unprotected", kind: fAny},
	}}
	signature = &shape{"Signature", "Signatures", []field{
		{name: "header", kind: fAny},
		{name: "protected", kind: fBytes},
		{name: "signature", kind: fBytes, required: true},
	}}
	jwsShape = &shape{"JWS", "", []field{
		{name: "link", kind: fLink, decodedOnly: true},
		{name: "payload", kind: fBytes, required: true},
		{name: "signatures", kind: fList, elem: signature},
	}}
)

// Decode reads a dag-jose block from r into na.
func Decode(na datamodel.NodeAssembler, r io.Reader) error {
	nb := basicnode.Prototype.Any.NewBuilder()
	if err := dagcbor.Decode(nb, r); err != nil {
		return err
	}
	n := nb.Build()
	dec := matcher{decoded: true}
	out, err := dec.structure(jweShape, n)
	if err == nil {
		if err = dec.copyTo(jweShape, out, na); err == nil {
			return nil
		}
	}
	if out, err = dec.structure(jwsShape, n); err != nil {
		return err
	}
	if out[0] == nil { // no "link": the CID in the payload
		c, err := cid.Cast(out[1].(bytesValue))
		if err != nil {
			return err
		}
		out[0] = basicnode.NewLink(cidlink.Link{Cid: c})
	}
	return dec.copyTo(jwsShape, out, na)
}

// Encode writes n, a JWE or JWS in the general or flattened serialization,
// as a dag-jose block to w.
func Encode(n datamodel.Node, w io.Writer) error {
	s, obj, err := general(n)
	if err != nil {
		return err
	}
	nb := basicnode.Prototype.Any.NewBuilder()
	if err := dagjson.Decode(nb, bytes.NewReader(appendJSON(nil, obj))); err != nil {
		return err
	}
	enc := matcher{}
	out, err := enc.structure(s, nb.Build())
	if err != nil {
		return err
	}
	nb = basicnode.Prototype.Any.NewBuilder()
	if err := enc.assemble(s, out, nb); err != nil {
		return err
	}
	return dagcbor.EncodeOptions{MapSortMode: codec.MapSortMode_RFC7049}.Encode(nb.Build(), w)
}

// copyTo assembles vals (matched against s) and copies them into na, as
// go-dag-jose copies its representation node.
func (m matcher) copyTo(s *shape, vals []any, na datamodel.NodeAssembler) error {
	nb := basicnode.Prototype.Any.NewBuilder()
	if err := m.assemble(s, vals, nb); err != nil {
		return err
	}
	return datamodel.Copy(nb.Build(), na)
}

// general is n in the general serialization as JSON values, and the
// schema to match it against: a JWE when n has "ciphertext", else a JWS
// when it has "payload".
func general(n datamodel.Node) (*shape, map[string]any, error) {
	if v, err := lookup(n, "ciphertext", true); err != nil || v != nil {
		if err != nil {
			return nil, nil, err
		}
		obj, err := generalJWE(n)
		return jweShape, obj, err
	}
	if v, err := lookup(n, "payload", true); err != nil || v != nil {
		if err != nil {
			return nil, nil, err
		}
		obj, err := generalJWS(n)
		return jwsShape, obj, err
	}
	return nil, nil, errors.New("invalid JOSE object")
}

// generalJWE is go-dag-jose's unflattenJWE: the JWE's fields as JSON
// values, with a flattened JWE's header and encrypted_key moved into
// recipients.
func generalJWE(n datamodel.Node) (map[string]any, error) {
	ct, err := n.LookupByString("ciphertext")
	if err != nil {
		return nil, err
	}
	s, err := ct.AsString()
	if err != nil {
		return nil, err
	}
	rs, err := lookup(n, "recipients", false)
	if err != nil {
		return nil, err
	}
	jwe := map[string]any{"ciphertext": s}
	if rs == nil {
		r0 := map[string]any{}
		if err := stringField(n, "encrypted_key", true, r0); err != nil {
			return nil, err
		}
		if err := mapField(n, "header", true, r0); err != nil {
			return nil, err
		}
		if len(r0) > 0 {
			jwe["recipients"] = []map[string]any{r0}
		}
	} else {
		if err := refuse(n, "invalid JWE serialization", "encrypted_key", "header"); err != nil {
			return nil, err
		}
		var list []map[string]any
		if err := toJSON(rs, &list); err != nil {
			return nil, err
		}
		if len(list) == 0 { // go-dag-jose panics here
			return nil, errors.New("invalid JWE serialization")
		}
		if len(list[0]) > 0 {
			jwe["recipients"] = list
		}
	}
	for _, k := range []string{"aad", "iv", "protected", "tag"} {
		if err := stringField(n, k, false, jwe); err != nil {
			return nil, err
		}
	}
	if err := mapField(n, "unprotected", false, jwe); err != nil {
		return nil, err
	}
	return jwe, nil
}

// generalJWS is go-dag-jose's unflattenJWS: the JWS's payload (which must
// be a CID) and signatures as JSON values, a flattened JWS's header,
// protected and signature moved into one signature.
func generalJWS(n datamodel.Node) (map[string]any, error) {
	p, err := n.LookupByString("payload")
	if err != nil {
		return nil, err
	}
	s, err := p.AsString()
	if err != nil {
		return nil, err
	}
	if _, err := cid.Decode("u" + s); err != nil {
		return nil, fmt.Errorf("payload is not a valid CID: %v", err)
	}
	sigs, err := lookup(n, "signatures", false)
	if err != nil {
		return nil, err
	}
	jws := map[string]any{"payload": s}
	if sigs == nil {
		s0 := make(map[string]any, 1)
		if err := mapField(n, "header", true, s0); err != nil {
			return nil, err
		}
		if err := stringField(n, "protected", true, s0); err != nil {
			return nil, err
		}
		if err := stringField(n, "signature", true, s0); err != nil {
			return nil, err
		}
		jws["signatures"] = []map[string]any{s0}
	} else {
		if err := refuse(n, "invalid JWS serialization", "header", "protected", "signature"); err != nil {
			return nil, err
		}
		var list []map[string]any
		if err := toJSON(sigs, &list); err != nil {
			return nil, err
		}
		jws["signatures"] = list
	}
	return jws, nil
}

// lookup is n's value at key, nil when absent; typedAbsent also takes a
// typed node's "no such field" as absent.
func lookup(n datamodel.Node, key string, typedAbsent bool) (datamodel.Node, error) {
	v, err := n.LookupByString(key)
	if err != nil {
		_, absent := err.(datamodel.ErrNotExists)
		if _, noField := err.(schema.ErrNoSuchField); !absent && !(noField && typedAbsent) {
			return nil, err
		}
		return nil, nil
	}
	if v == datamodel.Absent {
		return nil, nil
	}
	return v, nil
}

// stringField copies n's text at key, when present, into dst.
func stringField(n datamodel.Node, key string, typedAbsent bool, dst map[string]any) error {
	v, err := lookup(n, key, typedAbsent)
	if err != nil || v == nil {
		return err
	}
	s, err := v.AsString()
	if err != nil {
		return err
	}
	dst[key] = s
	return nil
}

// mapField copies n's map at key, when present, into dst as a JSON value.
func mapField(n datamodel.Node, key string, typedAbsent bool, dst map[string]any) error {
	v, err := lookup(n, key, typedAbsent)
	if err != nil || v == nil {
		return err
	}
	var m map[string]any
	if err := toJSON(v, &m); err != nil {
		return err
	}
	dst[key] = m
	return nil
}

// refuse fails with msg when n has any of keys.
func refuse(n datamodel.Node, msg string, keys ...string) error {
	for _, k := range keys {
		if v, err := lookup(n, k, true); err != nil {
			return err
		} else if v != nil {
			return errors.New(msg)
		}
	}
	return nil
}

// toJSON decodes n's dag-json text (no links, no bytes) into dst.
func toJSON(n datamodel.Node, dst any) error {
	var buf bytes.Buffer
	if err := (dagjson.EncodeOptions{EncodeLinks: false, EncodeBytes: false}).Encode(n, &buf); err != nil {
		return err
	}
	return json.Unmarshal(buf.Bytes(), dst)
}

// appendJSON writes v (a value json.Unmarshal makes, or the maps and lists
// built above) as JSON, map keys sorted and numbers printed with %g, as
// go-dag-jose's JSON library does.
func appendJSON(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case string:
		s, _ := json.Marshal(v) // a string always marshals
		return append(b, s...)
	case []any:
		return appendList(b, v)
	case []map[string]any:
		if v == nil {
			return append(b, "null"...)
		}
		return appendList(b, v)
	case map[string]any:
		if v == nil {
			return append(b, "null"...)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, k)
			b = append(b, ':')
			b = appendJSON(b, v[k])
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("dagjose: no JSON for %T", v))
}

func appendList[T any](b []byte, l []T) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, e := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSON(b, e)
	}
	return append(b, ']')
}

// bytesValue is a byte field's value between matching and assembling.
type bytesValue []byte

// matcher matches data against the schema's Decoded (decoded) or Encoded
// types, with the errors go-dag-jose's generated assemblers give.
type matcher struct{ decoded bool }

func (m matcher) typeName(name string) string {
	if m.decoded {
		return "dagjose.Decoded" + name + ".Repr"
	}
	return "dagjose.Encoded" + name + ".Repr"
}

// structure matches n against s and returns its fields' values in s's
// order (nil where absent): bytesValue, datamodel.Node (any, link) or
// []any (a list of structures).
func (m matcher) structure(s *shape, n datamodel.Node) ([]any, error) {
	tn := m.typeName(s.name)
	if n.Kind() != datamodel.Kind_Map {
		return nil, m.wrongKind(tn, n, datamodel.Kind_Map)
	}
	out := make([]any, len(s.fields))
	err := each(n, func(k, v datamodel.Node) error {
		key, err := k.AsString()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(s.fields, func(f field) bool {
			return f.name == key && (m.decoded || !f.decodedOnly)
		})
		if i < 0 {
			return invalidKey{tn, key}
		}
		out[i], err = m.value(s.fields[i], v)
		return err
	})
	if err != nil {
		return nil, err
	}
	var missing []string
	for i, f := range s.fields {
		if f.required && out[i] == nil {
			missing = append(missing, f.name)
		}
	}
	if missing != nil {
		return nil, schema.ErrMissingRequiredField{Missing: missing}
	}
	return out, nil
}

func (m matcher) value(f field, v datamodel.Node) (any, error) {
	switch f.kind {
	case fBytes:
		return m.bytes(v)
	case fAny:
		if err := checkAny(v); err != nil {
			return nil, err
		}
		if m.decoded {
			return bigUints(v), nil
		}
		return v, nil
	case fLink:
		if bigUint(v) {
			_, err := v.AsLink()
			return nil, err
		}
		if v.Kind() != datamodel.Kind_Link {
			return nil, m.wrongKind("dagjose.Link", v, datamodel.Kind_Link)
		}
		return v, nil
	}
	tn := m.typeName(f.elem.list)
	if v.Kind() != datamodel.Kind_List {
		return nil, m.wrongKind(tn, v, datamodel.Kind_List)
	}
	var l []any
	err := each(v, func(_, e datamodel.Node) error {
		if e.Kind() != datamodel.Kind_Map {
			return m.wrongKind(m.typeName(f.elem.name), e, datamodel.Kind_Map)
		}
		fs, err := m.structure(f.elem, e)
		l = append(l, fs)
		return err
	})
	return l, err
}

// bytes reads a byte field: bytes, or base64url text.
func (m matcher) bytes(v datamodel.Node) (any, error) {
	var b []byte
	var err error
	switch v.Kind() {
	case datamodel.Kind_String:
		s, _ := v.AsString()
		b, err = base64.RawURLEncoding.DecodeString(s)
	case datamodel.Kind_Bytes:
		b, err = v.AsBytes()
	default:
		if bigUint(v) && m.decoded {
			_, err := v.AsString() // Base64Url.AssignNode's error
			return nil, err
		}
		if m.decoded {
			return nil, m.wrongKind("dagjose.Base64Url", v, datamodel.Kind_String)
		}
		if v.Kind() == datamodel.Kind_Null {
			return nil, m.wrongKind("dagjose.Raw", v, datamodel.Kind_Bytes)
		}
		_, err = v.AsBytes() // go-dag-jose's Raw.AssignNode returns its error
	}
	if err != nil {
		return nil, err
	}
	return bytesValue(b), nil
}

// checkAny accepts what the schema's Any union holds: text, bytes,
// numbers, and maps and lists of those.
func checkAny(v datamodel.Node) error {
	switch v.Kind() {
	case datamodel.Kind_Map, datamodel.Kind_List:
		return each(v, func(_, e datamodel.Node) error { return checkAny(e) })
	case datamodel.Kind_Bool, datamodel.Kind_Null, datamodel.Kind_Link:
		return schema.ErrNotUnionStructure{TypeName: "dagjose.Any.Repr",
			Detail: kinds[v.Kind()].method + " called but is not valid for any of the kinds that are valid members of this union"}
	}
	return nil
}

// each calls f with each key and value of map v, or each value of list v
// (with a nil key).
func each(v datamodel.Node, f func(k, e datamodel.Node) error) error {
	if v.Kind() == datamodel.Kind_Map {
		for it := v.MapIterator(); !it.Done(); {
			k, e, err := it.Next()
			if err != nil {
				return err
			}
			if err := f(k, e); err != nil {
				return err
			}
		}
		return nil
	}
	for it := v.ListIterator(); !it.Done(); {
		_, e, err := it.Next()
		if err != nil {
			return err
		}
		if err := f(nil, e); err != nil {
			return err
		}
	}
	return nil
}

// bigUint tells an integer above the int64 range: dag-cbor hands those to
// go-dag-jose's assemblers with AssignNode, as a node.
func bigUint(v datamodel.Node) bool {
	_, ok := v.(datamodel.UintNode)
	return ok
}

// bigUints is v with each integer above the int64 range as -1, the value
// go-dag-jose's Any takes from it (AsInt's, its error dropped); v itself
// when it has none.
func bigUints(v datamodel.Node) datamodel.Node {
	n, _ := rebuildUints(v)
	return n
}

func rebuildUints(v datamodel.Node) (datamodel.Node, bool) {
	if bigUint(v) {
		return basicnode.NewInt(-1), true
	}
	var keys []string
	var vals []datamodel.Node
	changed := false
	if k := v.Kind(); k == datamodel.Kind_Map || k == datamodel.Kind_List {
		_ = each(v, func(k, e datamodel.Node) error {
			if k != nil {
				ks, _ := k.AsString()
				keys = append(keys, ks)
			}
			e, c := rebuildUints(e)
			vals, changed = append(vals, e), changed || c
			return nil
		})
	}
	if !changed {
		return v, false
	}
	nb := basicnode.Prototype.Any.NewBuilder()
	if keys != nil {
		ma, _ := nb.BeginMap(int64(len(keys)))
		for i, k := range keys {
			_ = ma.AssembleKey().AssignString(k)
			_ = ma.AssembleValue().AssignNode(vals[i])
		}
		_ = ma.Finish()
	} else {
		la, _ := nb.BeginList(int64(len(vals)))
		for _, e := range vals {
			_ = la.AssembleValue().AssignNode(e)
		}
		_ = la.Finish()
	}
	return nb.Build(), true
}

// assemble writes the values structure matched into na, as go-dag-jose's
// representation nodes show them: byte fields as base64url text when
// decoding, as bytes when encoding.
func (m matcher) assemble(s *shape, vals []any, na datamodel.NodeAssembler) error {
	n := 0
	for _, v := range vals {
		if v != nil {
			n++
		}
	}
	ma, err := na.BeginMap(int64(n))
	if err != nil {
		return err
	}
	for i, v := range vals {
		if v == nil {
			continue
		}
		f := s.fields[i]
		va, err := ma.AssembleEntry(f.name)
		if err != nil {
			return err
		}
		switch v := v.(type) {
		case bytesValue:
			if m.decoded {
				err = va.AssignString(base64.RawURLEncoding.EncodeToString(v))
			} else {
				err = va.AssignBytes(v)
			}
		case datamodel.Node:
			err = datamodel.Copy(v, va)
		case []any:
			var la datamodel.ListAssembler
			if la, err = va.BeginList(int64(len(v))); err != nil {
				return err
			}
			for _, e := range v {
				if err = m.assemble(f.elem, e.([]any), la.AssembleValue()); err != nil {
					return err
				}
			}
			err = la.Finish()
		}
		if err != nil {
			return err
		}
	}
	return ma.Finish()
}

// wrongKind is go-dag-jose's error for a value v given to an assembler
// of kind own named typeName: decoding streams dag-cbor into its
// assemblers (go-ipld-prime's mixins' errors), encoding copies nodes in
// with AssignNode.
func (m matcher) wrongKind(typeName string, v datamodel.Node, own datamodel.Kind) error {
	got := v.Kind()
	if got == datamodel.Kind_Null {
		if own == datamodel.Kind_Map || own == datamodel.Kind_List {
			typeName += ".Repr" // as go-dag-jose's generated code names it
		}
	} else if !m.decoded || bigUint(v) {
		return datamodel.ErrWrongKind{TypeName: typeName, MethodName: "AssignNode",
			AppropriateKind: kinds[own].set, ActualKind: got}
	}
	return datamodel.ErrWrongKind{TypeName: typeName, MethodName: kinds[got].method,
		AppropriateKind: kinds[got].set, ActualKind: own}
}

// kinds has, for each kind, the assembler method that takes a value of
// it and its KindSet.
var kinds = map[datamodel.Kind]struct {
	method string
	set    datamodel.KindSet
}{
	datamodel.Kind_Map:    {"BeginMap", datamodel.KindSet_JustMap},
	datamodel.Kind_List:   {"BeginList", datamodel.KindSet_JustList},
	datamodel.Kind_Null:   {"AssignNull", datamodel.KindSet_JustNull},
	datamodel.Kind_Bool:   {"AssignBool", datamodel.KindSet_JustBool},
	datamodel.Kind_Int:    {"AssignInt", datamodel.KindSet_JustInt},
	datamodel.Kind_Float:  {"AssignFloat", datamodel.KindSet_JustFloat},
	datamodel.Kind_String: {"AssignString", datamodel.KindSet_JustString},
	datamodel.Kind_Bytes:  {"AssignBytes", datamodel.KindSet_JustBytes},
	datamodel.Kind_Link:   {"AssignLink", datamodel.KindSet_JustLink},
}

// invalidKey is schema.ErrInvalidKey's text for go-dag-jose's key nodes.
type invalidKey struct{ typeName, key string }

func (e invalidKey) Error() string {
	return fmt.Sprintf("invalid key for map %s: %q: no such field", e.typeName, e.key)
}
