package httpapp_test

import (
	"reflect"
	"strings"
	"testing"

	"cairn/modules/httpapp"
)

func TestFormDecode_Rules(t *testing.T) {
	f := func(pairs ...string) []httpapp.FormField {
		var out []httpapp.FormField
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, httpapp.FormField{Name: pairs[i], Value: pairs[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		in       string
		isString bool
		str      string
		fields   []httpapp.FormField
		values   map[string]string
	}{
		{in: "a=1&a=2&b=x+y%21&c", fields: f("a", "1", "a", "2", "b", "x y!"), values: map[string]string{"a": "2", "b": "x y!"}},
		{in: "x+y", isString: true, str: "x+y"},
		{in: "x%20y%aF", isString: true, str: "x y%aF"},
		{in: "", isString: true, str: ""},
		{in: "a=1&b&c=2", fields: f("a", "1", "c", "2"), values: map[string]string{"a": "1", "c": "2"}},
		{in: "a=b=c", fields: f("a", "b=c"), values: map[string]string{"a": "b=c"}},
		{in: "=v", fields: f("", "v"), values: map[string]string{"": "v"}},
		{in: "k%2Bx=%2B+%2b", fields: f("k+x", "+ +"), values: map[string]string{"k+x": "+ +"}},
		{in: "a=%zz&b=%4", fields: f("a", "%zz", "b", "%4"), values: map[string]string{"a": "%zz", "b": "%4"}},
		{in: "a=&&b=", fields: f("a", "", "b", ""), values: map[string]string{"a": "", "b": ""}},
	} {
		got := httpapp.FormDecode(tc.in)
		if got.IsString != tc.isString || got.String != tc.str || !reflect.DeepEqual(got.Fields, tc.fields) ||
			(tc.values != nil && !reflect.DeepEqual(got.Values, tc.values)) {
			t.Errorf("FormDecode(%q) = %+v, want string=%v %q fields %v values %v", tc.in, got, tc.isString, tc.str, tc.fields, tc.values)
		}
	}
}

func TestURLDecode_HexCase(t *testing.T) {
	for in, want := range map[string]string{
		"%41": "A", "%af": "\xaf", "%AF": "\xaf", "%aF": "%aF", "%Af": "%Af", "%4": "%4", "%": "%", "a+b": "a+b", "%zz%41": "%zzA",
	} {
		if got := httpapp.URLDecode(in); got != want {
			t.Errorf("URLDecode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURLEncode_Unreserved(t *testing.T) {
	if got := httpapp.URLEncode("aZ09.~_- /?é"); got != "aZ09.~_-%20%2f%3f%c3%a9" {
		t.Errorf("got %q", got)
	}
	if got := httpapp.FormEncode([]httpapp.FormField{{"a b", "c&d"}, {"e", ""}}); got != "a+b=c%26d&e=" {
		t.Errorf("FormEncode: got %q", got)
	}
}

func TestParseMultipart_Parts(t *testing.T) {
	body := "--XX\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n" +
		"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\nworld\r\n--XX--\r\n"
	parts, err := httpapp.ParseMultipart([]byte(body), "multipart/form-data; boundary=XX", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Name != "field" || string(parts[0].Body) != "value" ||
		parts[1].Filename != "a.txt" || parts[1].ContentType != "text/plain" || string(parts[1].Body) != "hello\nworld" ||
		!strings.Contains(parts[1].Headers["content_disposition"], "a.txt") {
		t.Errorf("got %+v", parts)
	}
	if _, err := httpapp.ParseMultipart([]byte(body), "text/plain", 0); err == nil {
		t.Error("a non-multipart type was accepted")
	}
	if _, err := httpapp.ParseMultipart([]byte(body), "multipart/form-data; boundary=XX", 1); err == nil {
		t.Error("the part cap was not applied")
	}
}
