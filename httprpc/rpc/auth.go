// auth.go: API.Authorizations: the expected Authorization header values
// and the path prefixes each may use (spec/rpc-wire.md 5.2).

package rpc

import (
	"encoding/base64"
	"strings"

	"github.com/valyala/fasthttp"
)

// AuthHeaderValue turns an AuthSecret ("bearer:T", "basic:u:p",
// "basic:<b64>", or a bare token) into the Authorization header it expects.
func AuthHeaderValue(secret string) (string, bool) {
	typ, val, ok := strings.Cut(secret, ":")
	if !ok {
		return "Bearer " + secret, true
	}
	switch strings.ToLower(typ) {
	case "bearer":
		return "Bearer " + val, true
	case "basic":
		if strings.Contains(val, ":") {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(val)), true
		}
		return "Basic " + val, true
	}
	return "", false
}

func (s *Server) authorized(ctx *fasthttp.RequestCtx, path string) bool {
	prefixes, ok := s.auth[string(ctx.Request.Header.Peek("Authorization"))]
	if !ok {
		return false
	}
	if path == "/api/v0/version" || strings.HasPrefix(path, "/api/v0/version/") {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
