// mime.go: the Content-Type of a file: a serve() instance's mime_map,
// the built-in map, then mime.types (TypeOf).

package files

import (
	"bufio"
	"os"
	"path"
	"strings"
	"sync"
)

var builtinTypes = map[string]string{
	"html": "text/html", "htm": "text/html", "xml": "application/xml", "txt": "text/plain",
	"css": "text/css", "js": "application/javascript", "png": "image/png", "gif": "image/gif",
	"jpeg": "image/jpeg", "jpg": "image/jpeg", "svg": "image/svg+xml",
}

// mimeTypes looks extensions up in a mime.types file once loaded.
type mimeTypes struct {
	file string
	once sync.Once
	ok   bool
	m    map[string]string
}

var systemMime = &mimeTypes{file: "/etc/mime.types"}

func (t *mimeTypes) load() {
	f, err := os.Open(t.file)
	if err != nil {
		return
	}
	defer f.Close()
	t.m = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fs := strings.Fields(line)
		for _, ext := range fs[min(1, len(fs)):] {
			if _, dup := t.m[ext]; !dup {
				t.m[ext] = fs[0]
			}
		}
	}
	t.ok = true
}

// TypeOf returns the Content-Type of a file name: the built-in map
// (case-sensitive), then mime.types (lower-cased), then
// application/octet-stream; "" when the name has no extension, or when
// mime.types is unreadable and the built-in map misses.
func TypeOf(name string) string {
	return systemMime.typeOf(name)
}

// typeOf is TypeOf with a serve() instance's own mime_map looked up first.
func typeOf(name string, mimeMap map[string]string) string {
	if ext := extOf(name); ext != "" {
		if ty, ok := mimeMap[ext]; ok {
			return ty
		}
	}
	return TypeOf(name)
}

// extOf is the text after the last "." of name's last segment.
func extOf(name string) string {
	base := path.Base(name)
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		return base[i+1:]
	}
	return ""
}

func (t *mimeTypes) typeOf(name string) string {
	ext := extOf(name)
	if ext == "" {
		return ""
	}
	if ty, ok := builtinTypes[ext]; ok {
		return ty
	}
	t.once.Do(t.load)
	if !t.ok {
		return ""
	}
	if ty, ok := t.m[strings.ToLower(ext)]; ok {
		return ty
	}
	return "application/octet-stream"
}
