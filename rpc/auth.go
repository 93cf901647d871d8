// auth.go: API.Authorizations: the expected Authorization header values
// and the path prefixes each may use.

package rpc

import (
	"strings"

	"github.com/valyala/fasthttp"
)

func (s *Server) authorized(ctx *fasthttp.RequestCtx, path string) bool {
	prefixes, ok := s.auth[string(ctx.Request.Header.Peek("Authorization"))]
	if !ok {
		return false
	}
	if path == "/api/v0/version" { // Kubo's only exception
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
