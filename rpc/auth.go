// auth.go: API.Authorizations: the expected Authorization header values
// and the path prefixes each may use.

package rpc

import (
	"strings"

	"cairn/node/config"

	"github.com/valyala/fasthttp"
)

// Auth is API.Authorizations as the RPC checks a request: each
// Authorization header value it takes (config.AuthHeaderValue of an
// AuthSecret) and the path prefixes that value may use. It is nil when
// there are none; a non-nil Auth with no usable secret takes nothing.
type Auth map[string][]string

// NewAuth reads API.Authorizations.
func NewAuth(scopes map[string]*config.RPCAuthScope) Auth {
	if len(scopes) == 0 {
		return nil
	}
	a := Auth{}
	for _, scope := range scopes {
		if scope == nil {
			continue
		}
		if hv, ok := config.AuthHeaderValue(scope.AuthSecret); ok {
			a[hv] = append(a[hv], scope.AllowedPaths...)
		}
	}
	return a
}

// Allows reports whether a request for path with the Authorization
// header value hv is let through: hv is a known secret and path starts
// with one of its prefixes, or is /api/v0/version (Kubo's only
// exception).
func (a Auth) Allows(hv, path string) bool {
	prefixes, ok := a[hv]
	if !ok {
		return false
	}
	if path == "/api/v0/version" {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

func (s *Server) authorized(ctx *fasthttp.RequestCtx, path string) bool {
	return s.auth.Allows(string(ctx.Request.Header.Peek("Authorization")), path)
}
