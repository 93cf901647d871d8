// ranges.go: the Range header, read as Go's http.ServeContent reads it
// (what Kubo's gateway answers with): one or more byte ranges of a file
// of known size.

package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/textproto"
	"strconv"
	"strings"
)

// httpRange is a span of a file: start and length in bytes.
type httpRange struct{ start, length int64 }

func (r httpRange) contentRange(size int64) string {
	return fmt.Sprintf("bytes %d-%d/%d", r.start, r.start+r.length-1, size)
}

var (
	errBadRange  = errors.New("invalid range")
	errNoOverlap = errors.New("invalid range: failed to overlap")
)

// parseRange reads a Range header ("bytes=0-99,200-", "bytes=-500") for a
// file of size bytes. No header, or ranges that together ask for more
// than the file, give none (the whole file is the answer); a syntax error
// is errBadRange; ranges all past the end are errNoOverlap (416).
func parseRange(s string, size int64) ([]httpRange, error) {
	if s == "" {
		return nil, nil
	}
	const b = "bytes="
	if !strings.HasPrefix(s, b) {
		return nil, errBadRange
	}
	var ranges []httpRange
	noOverlap := false
	for _, ra := range strings.Split(s[len(b):], ",") {
		ra = textproto.TrimString(ra)
		if ra == "" {
			continue
		}
		start, end, ok := strings.Cut(ra, "-")
		if !ok {
			return nil, errBadRange
		}
		start, end = textproto.TrimString(start), textproto.TrimString(end)
		var r httpRange
		if start == "" {
			// A suffix: the last end bytes.
			if end == "" || end[0] == '-' {
				return nil, errBadRange
			}
			i, err := strconv.ParseInt(end, 10, 64)
			if i < 0 || err != nil {
				return nil, errBadRange
			}
			i = min(i, size)
			r.start = size - i
			r.length = size - r.start
		} else {
			i, err := strconv.ParseInt(start, 10, 64)
			if err != nil || i < 0 {
				return nil, errBadRange
			}
			if i >= size {
				noOverlap = true
				continue
			}
			r.start = i
			if end == "" {
				r.length = size - r.start
			} else {
				i, err := strconv.ParseInt(end, 10, 64)
				if err != nil || r.start > i {
					return nil, errBadRange
				}
				i = min(i, size-1)
				r.length = i - r.start + 1
			}
		}
		ranges = append(ranges, r)
	}
	if noOverlap && len(ranges) == 0 {
		return nil, errNoOverlap
	}
	var sum int64
	for _, r := range ranges {
		sum += r.length
	}
	if sum > size {
		return nil, nil
	}
	return ranges, nil
}

// newBoundary is a random multipart boundary, as mime/multipart makes.
func newBoundary() string {
	var b [30]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
