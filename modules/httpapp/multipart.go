// multipart.go: multipart/form-data parsing for uploads.

package httpapp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"
)

// Part is one part of a multipart body.
type Part struct {
	Name        string // form field name
	Filename    string // "" for plain fields
	ContentType string
	// Headers use the table convention (content_disposition, ...).
	Headers map[string]string
	Body    []byte
}

// ErrNotMultipart is returned for a Content-Type that is not multipart/*
// with a boundary.
var ErrNotMultipart = errors.New("not a multipart body")

// MultipartReader returns a streaming reader over body for a
// multipart/* content type.
func MultipartReader(body io.Reader, contentType string) (*multipart.Reader, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return nil, ErrNotMultipart
	}
	return multipart.NewReader(body, params["boundary"]), nil
}

// ParseMultipart splits a whole multipart body into parts. maxParts caps
// the number of parts (0: 1000).
func ParseMultipart(body []byte, contentType string, maxParts int) ([]Part, error) {
	if maxParts <= 0 {
		maxParts = 1000
	}
	mr, err := MultipartReader(bytes.NewReader(body), contentType)
	if err != nil {
		return nil, err
	}
	var parts []Part
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("multipart: %w", err)
		}
		if len(parts) == maxParts {
			return nil, fmt.Errorf("multipart: more than %d parts", maxParts)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("multipart: %w", err)
		}
		h := map[string]string{}
		for k, v := range p.Header {
			h[HeaderKey(k)] = strings.Join(v, ",")
		}
		parts = append(parts, Part{Name: p.FormName(), Filename: p.FileName(), ContentType: p.Header.Get("Content-Type"), Headers: h, Body: b})
	}
}
