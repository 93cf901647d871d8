// urlcode.go: urlencode, urldecode, formdecode, formencode with the exact
// rules of Prosody's net.http (each function states its rule).

package httpapp

import (
	"strings"
)

func unhex(c byte) (byte, int) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', 0
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, 1
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, 2
	}
	return 0, -1
}

// URLDecode decodes %HH escapes whose hex letters are all lower-case or all
// upper-case ("%41", "%af", "%AF"; not "%aF"). Short or invalid escapes
// stay as they are, and "+" is not touched.
func URLDecode(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			h, k1 := unhex(s[i+1])
			l, k2 := unhex(s[i+2])
			if k1 >= 0 && k2 >= 0 && (k1 == 0 || k2 == 0 || k1 == k2) {
				b.WriteByte(h<<4 | l)
				i += 2
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// URLEncode escapes every byte except A-Z a-z 0-9 . ~ _ - as %xx
// (lower-case hex).
func URLEncode(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '~' || c == '_' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// FormField is one name=value pair of a decoded form, in order.
type FormField struct{ Name, Value string }

// Form is what FormDecode returns. When the input has no "=" at all,
// IsString is true and String holds urldecode(input) ("+" unchanged).
// Otherwise Fields lists the pairs in order and Values maps each name to
// its last value.
type Form struct {
	IsString bool
	String   string
	Fields   []FormField
	Values   map[string]string
}

func formUnescape(s string) string {
	return URLDecode(strings.ReplaceAll(s, "+", " "))
}

// FormDecode decodes an application/x-www-form-urlencoded string as
// Prosody's formdecode does: pieces are split on "&"; a piece without "=" is
// skipped; the value runs to the next "&" (so "a=b=c" gives a = "b=c");
// empty names are allowed; "+" becomes a space before %XX is decoded.
func FormDecode(s string) Form {
	if !strings.Contains(s, "=") {
		return Form{IsString: true, String: URLDecode(s)}
	}
	f := Form{Values: map[string]string{}}
	for _, piece := range strings.Split(s, "&") {
		name, value, ok := strings.Cut(piece, "=")
		if !ok {
			continue
		}
		name, value = formUnescape(name), formUnescape(value)
		f.Fields = append(f.Fields, FormField{name, value})
		f.Values[name] = value
	}
	return f
}

// FormEncode joins the fields as name=value pairs with "&", urlencoding
// both sides and writing spaces as "+".
func FormEncode(fields []FormField) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = strings.ReplaceAll(URLEncode(f.Name), "%20", "+") + "=" + strings.ReplaceAll(URLEncode(f.Value), "%20", "+")
	}
	return strings.Join(parts, "&")
}
