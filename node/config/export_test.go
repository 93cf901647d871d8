package config

import "reflect"

// KuboDefaultDoc is the document Kubo 0.42's init writes (Identity with
// an empty PeerID), as the config type encodes it, without cairn's keys.
func KuboDefaultDoc() map[string]any {
	doc, err := kuboDefault().ToDoc()
	if err != nil {
		panic(err)
	}
	return WithoutOwnKeys(doc)
}

// WithoutOwnKeys removes from doc the keys only cairn has (kubo:"-"),
// leaving Kubo's, and returns it.
func WithoutOwnKeys(doc map[string]any) map[string]any {
	dropOwn(doc, reflect.TypeFor[Config]())
	return doc
}

func dropOwn(doc map[string]any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for k, v := range doc {
		f, ok := t.FieldByName(k)
		if !ok {
			continue
		}
		if f.Tag.Get("kubo") == "-" {
			delete(doc, k)
			continue
		}
		if m, ok := v.(map[string]any); ok {
			dropOwn(m, f.Type)
		}
	}
}
