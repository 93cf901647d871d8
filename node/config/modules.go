// modules.go: the Modules section, cairn's own (Kubo has none): the
// module facility's listeners, limits and apps (docs/modules.md).

package config

import (
	"cmp"
	"errors"
	"fmt"
	"time"
)

// ModulesConfig is cairn's module facility (Kubo has no such section).
// Modules publish web apps, as Prosody's mod_http does; see
// docs/modules.md. Zero values mean the defaults named below.
type ModulesConfig struct {
	// Enabled lists modules to load at daemon start, by internal name
	// (Prosody's modules_enabled): a built-in ("http_status",
	// "http_files", "http_ipfs", "http_dir_listing") or a Lua file
	// <Dir>/mod_<name>.lua. Empty: no module, no listener.
	Enabled []string
	// Dir is where Lua modules live (default <repo>/modules).
	Dir string `json:",omitempty"`
	// AllowWrite lists modules whose node view may add and pin; every
	// other module gets a read-only view.
	AllowWrite []string
	// Authorizations, in API.Authorizations' shape, protect every module
	// request: AuthSecret "basic:user:password" (browsers prompt for it)
	// or "bearer:TOKEN"; AllowedPaths are URL path prefixes ("/" is every
	// app). They are required for a listener off loopback, and for
	// writing modules (AllowWrite) when API.Authorizations is set; the
	// daemon refuses to start otherwise (see docs/modules.md).
	Authorizations map[string]*RPCAuthScope `json:",omitempty"`
	// AllowUnauthenticated lifts that requirement, at the owner's risk.
	AllowUnauthenticated bool `json:",omitempty"`
	HTTP                 ModulesHTTP
	HTTPS                ModulesHTTPS
	Files                ModulesFiles
	Lua                  ModulesLua
	// Options holds free-form options per module, read by Lua modules
	// with module:get_option(name, default).
	Options map[string]map[string]any `json:",omitempty"`
}

// ModulesHTTP is the plain-HTTP service and the limits of both services.
type ModulesHTTP struct {
	// Ports (default [5280]) on each of Interfaces (default loopback
	// only: ["127.0.0.1"]).
	Ports      []int
	Interfaces []string
	// MaxBodySize caps a buffered request body (default "10MiB"; larger:
	// 413). MaxUploadSize caps a streamed upload to the status app
	// (default "1GiB").
	MaxBodySize   string
	MaxUploadSize string
	// Go durations: reading a request (30s), writing a response (5m), an
	// idle keep-alive connection (2m), one handler chain (60s).
	ReadTimeout    string
	WriteTimeout   string
	IdleTimeout    string
	HandlerTimeout string
	// TrustedProxies (IPs or CIDRs) may set X-Forwarded-For and
	// X-Forwarded-Proto (default ["127.0.0.1", "::1"]).
	TrustedProxies []string
	// Hosts are extra names the Host header may carry (e.g. "pi.lan"),
	// on both services. "localhost", IP literals, the machine's host name
	// (and <name>.local) and names in Interfaces are always accepted;
	// any other Host gets 403 (DNS rebinding).
	Hosts []string `json:",omitempty"`
	// CORS turns on Access-Control-* headers and OPTIONS answers.
	CORS bool
	// Paths maps an app name to its base path (Prosody's http_paths),
	// e.g. {"files": "/"}.
	Paths map[string]string `json:",omitempty"`
}

// ModulesHTTPS is the TLS service. Certificate and Key are PEM files,
// relative to the repo unless absolute; init generates a self-signed
// pair there (default tls/modules.crt, tls/modules.key).
type ModulesHTTPS struct {
	Ports       []int // default [5281]
	Interfaces  []string
	Certificate string
	Key         string
}

// ModulesFiles configures the http_files app.
type ModulesFiles struct {
	// Path is the folder served at /files, or an /ipfs/<cid> path served
	// from the node's storage.
	Path string
	// DirListing shows directory listings (needs http_dir_listing, which
	// is then loaded too).
	DirListing bool
	// IndexFiles are tried in a directory (default index.html, index.htm).
	IndexFiles []string `json:",omitempty"`
}

// ModulesLua limits each Lua handler call and module load.
type ModulesLua struct {
	// MaxRunTime is a Go duration (default "1s"); a call still running
	// then is stopped with an error.
	MaxRunTime string
	// MaxMemory is how much the Go heap may grow during a call before the
	// call is stopped and the module's Lua state is thrown away and
	// rebuilt. Empty (the default): a sixteenth of Budget.MemoryMiB
	// (DefaultMemoryMiB without one), between 8 and 64 MiB.
	MaxMemory string
}

// ModulesLimits are the sizes and durations of the Modules section, with
// DefaultModules' values for those not set.
type ModulesLimits struct {
	MaxBodySize, MaxUploadSize int64
	LuaMaxMemory               int64 // 0 when not set (the host derives it from the budget)
	LuaMaxRunTime              time.Duration
	ReadTimeout, WriteTimeout  time.Duration
	IdleTimeout                time.Duration
	HandlerTimeout             time.Duration
}

// Limits parses the Modules sizes (ParseSize: "10MiB", "1GB", "10 gb") and
// durations; the error names every bad one.
func (m ModulesConfig) Limits() (ModulesLimits, error) {
	def := DefaultModules()
	var l ModulesLimits
	var errs []error
	size := func(key, v, d string, dst *int64) {
		s := cmp.Or(v, d)
		if s == "" {
			return
		}
		b, err := ParseSize("Modules."+key, s)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = int64(b)
	}
	dur := func(key, v, d string, dst *time.Duration) {
		t, err := time.ParseDuration(cmp.Or(v, d))
		if err != nil {
			errs = append(errs, fmt.Errorf("config Modules.%s %q: %w", key, v, err))
		}
		*dst = t
	}
	size("HTTP.MaxBodySize", m.HTTP.MaxBodySize, def.HTTP.MaxBodySize, &l.MaxBodySize)
	size("HTTP.MaxUploadSize", m.HTTP.MaxUploadSize, def.HTTP.MaxUploadSize, &l.MaxUploadSize)
	size("Lua.MaxMemory", m.Lua.MaxMemory, "", &l.LuaMaxMemory)
	dur("Lua.MaxRunTime", m.Lua.MaxRunTime, def.Lua.MaxRunTime, &l.LuaMaxRunTime)
	dur("HTTP.ReadTimeout", m.HTTP.ReadTimeout, def.HTTP.ReadTimeout, &l.ReadTimeout)
	dur("HTTP.WriteTimeout", m.HTTP.WriteTimeout, def.HTTP.WriteTimeout, &l.WriteTimeout)
	dur("HTTP.IdleTimeout", m.HTTP.IdleTimeout, def.HTTP.IdleTimeout, &l.IdleTimeout)
	dur("HTTP.HandlerTimeout", m.HTTP.HandlerTimeout, def.HTTP.HandlerTimeout, &l.HandlerTimeout)
	return l, errors.Join(errs...)
}

// DefaultModules returns the Modules section init writes.
func DefaultModules() ModulesConfig {
	return ModulesConfig{
		Enabled:    []string{"http_status"},
		AllowWrite: []string{"http_status"},
		HTTP: ModulesHTTP{
			Ports: []int{5280}, Interfaces: []string{"127.0.0.1"},
			MaxBodySize: "10MiB", MaxUploadSize: "1GiB",
			ReadTimeout: "30s", WriteTimeout: "5m", IdleTimeout: "2m", HandlerTimeout: "60s",
			TrustedProxies: []string{"127.0.0.1", "::1"},
		},
		HTTPS: ModulesHTTPS{
			Ports: []int{5281}, Interfaces: []string{"127.0.0.1"},
			Certificate: "tls/modules.crt", Key: "tls/modules.key",
		},
		Lua: ModulesLua{MaxRunTime: "1s"},
	}
}
