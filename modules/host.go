// host.go: loading modules and running the listeners.

package modules

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cairn/modules/events"
	"cairn/modules/httpapp"
	"cairn/modules/lua"
	"cairn/modules/modapi"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"

	// Built-in modules register themselves.
	_ "cairn/modules/files"
	_ "cairn/modules/status"

	"github.com/valyala/fasthttp"
)

// Options are the host's non-config inputs.
type Options struct {
	Repo    string       // repo directory (certificates, Lua modules)
	Version string       // shown in page footers
	Log     *slog.Logger // default slog.Default()
	// API is the RPC's API.Authorizations (rpc.NewAuth; nil: none).
	// Without Modules.Authorizations, the apps of writing modules then
	// take the secrets that the RPC takes for /api/v0/add (see
	// CheckExposure).
	API rpc.Auth
	// MemoryMiB is the node's memory budget (Budget.MemoryMiB; 0:
	// node.DefaultMemoryMiB). The Lua cap is derived from it unless
	// Modules.Lua.MaxMemory is set.
	MemoryMiB int
	// GatewayPort is the HTTP gateway's port ("" when none listens); the
	// status page links to it.
	GatewayPort string
	// Gateway answers a content path as the node's HTTP gateway does
	// (gateway.Server.ServePath); the http_ipfs app serves through it and
	// does not load without it.
	Gateway func(c *fasthttp.RequestCtx, contentPath string)
}

// LuaMemoryFor is the default Modules.Lua.MaxMemory of a memory budget:
// a sixteenth, between 8 and 64 MiB. A capped call can briefly take
// about twice that (one string doubling is not interruptible), so a
// runaway handler stays within an eighth of the budget.
func LuaMemoryFor(budgetMiB int) int64 {
	if budgetMiB <= 0 {
		budgetMiB = node.DefaultMemoryMiB
	}
	return min(max(int64(budgetMiB)<<20/16, 8<<20), 64<<20)
}

// Host runs the loaded modules and the http provider.
type Host struct {
	srv      *httpapp.Server
	log      *slog.Logger
	view     modapi.NodeView
	cfg      config.ModulesConfig
	settings *modapi.Settings
	events   *events.Bus // module events (module:hook)
	http     *events.Bus // the HTTP server's (http-error, directory-index)
	shared   *modapi.Shared

	mu      sync.Mutex
	loaded  map[string]modapi.Module
	loading map[string]bool
	order   []string
	failed  map[string]error
}

// Start loads cfg.Enabled and serves their apps. With nothing enabled it
// returns a host with no listener. It fails only when the config is
// invalid or a listener cannot bind; module failures are logged.
func Start(_ context.Context, v modapi.NodeView, cfg config.ModulesConfig, o Options) (*Host, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	def := config.DefaultModules()
	h := &Host{log: o.Log, view: v, cfg: cfg, events: &events.Bus{}, http: &events.Bus{},
		loaded: map[string]modapi.Module{}, loading: map[string]bool{}, failed: map[string]error{}}
	st, hopts, err := settings(cfg, def, o)
	if err != nil {
		return nil, err
	}
	h.settings = st
	h.shared = modapi.NewShared(st.LuaMaxMemory / 2) // a call that fills it stays within its cap
	hopts.Events = h.http
	if len(cfg.Enabled) == 0 {
		return h, nil
	}
	if err := CheckExposure(cfg, o.API); err != nil {
		return nil, err
	}
	if o.API != nil && len(cfg.Authorizations) == 0 && !cfg.AllowUnauthenticated && len(cfg.AllowWrite) > 0 {
		hopts.AppLogin = &httpapp.AppLogin{Modules: cfg.AllowWrite, Source: "API.Authorizations",
			Accept: func(hv string) bool { return o.API.Allows(hv, writePath) }}
		o.Log.Info("the apps of modules that write take the RPC's logins: a secret of API.Authorizations that may use "+writePath,
			"modules", cfg.AllowWrite)
	}
	hopts.Log = o.Log
	if h.srv, err = httpapp.NewServer(hopts); err != nil {
		return nil, fmt.Errorf("modules: %w", err)
	}
	if err := h.listen(cfg, def, o.Repo); err != nil {
		h.srv.Close()
		return nil, err
	}
	for _, name := range cfg.Enabled {
		if err := h.Load(name); err != nil {
			h.log.Error("module failed to load", "module", name, "err", err)
		}
	}
	return h, nil
}

func orDefault[T any](v, d []T) []T {
	if v == nil {
		return d
	}
	return v
}

func str(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// settings turns the config into module settings and server options.
func settings(cfg, def config.ModulesConfig, o Options) (*modapi.Settings, httpapp.Options, error) {
	st := &modapi.Settings{Repo: o.Repo, Version: o.Version, GatewayPort: o.GatewayPort, Gateway: o.Gateway, FilesPath: cfg.Files.Path,
		DirListing: cfg.Files.DirListing, IndexFiles: cfg.Files.IndexFiles, Options: cfg.Options}
	st.ModulesDir = str(cfg.Dir, filepath.Join(o.Repo, "modules"))
	if st.FilesPath != "" && !filepath.IsAbs(st.FilesPath) {
		st.FilesPath = filepath.Join(o.Repo, st.FilesPath)
	}
	var ho httpapp.Options
	var err error
	errs := []error{}
	add := func(e error) {
		if e != nil {
			errs = append(errs, e)
		}
	}
	lim, err := cfg.Limits()
	add(err)
	ho.MaxBodySize, st.MaxUploadSize = lim.MaxBodySize, lim.MaxUploadSize
	st.LuaMaxMemory = LuaMemoryFor(o.MemoryMiB)
	if cfg.Lua.MaxMemory != "" {
		st.LuaMaxMemory = lim.LuaMaxMemory
	}
	st.LuaMaxRunTime = lim.LuaMaxRunTime
	ho.ReadTimeout, ho.WriteTimeout, ho.IdleTimeout, ho.HandlerTimeout = lim.ReadTimeout, lim.WriteTimeout, lim.IdleTimeout, lim.HandlerTimeout
	ho.TrustedProxies = orDefault(cfg.HTTP.TrustedProxies, def.HTTP.TrustedProxies)
	ho.Hosts = hostNames(cfg, def)
	if len(cfg.Authorizations) > 0 {
		ho.Authorizations = map[string][]string{}
		for name, scope := range cfg.Authorizations {
			hv, ok := "", scope != nil && scope.AuthSecret != "" && !strings.HasSuffix(scope.AuthSecret, ":")
			if ok {
				hv, ok = config.AuthHeaderValue(scope.AuthSecret)
			}
			if !ok {
				add(fmt.Errorf("config Modules.Authorizations.%s: AuthSecret wants \"basic:user:password\" or \"bearer:TOKEN\"", name))
				continue
			}
			ho.Authorizations[hv] = append(ho.Authorizations[hv], scope.AllowedPaths...)
		}
	}
	ho.CORS = cfg.HTTP.CORS
	ho.Paths = cfg.HTTP.Paths
	ho.Errors, err = errorPages(cfg.Options["http_errors"])
	add(err)
	return st, ho, errors.Join(errs...)
}

// errorPages reads mod_http_errors' options from
// Modules.Options.http_errors, under Prosody's names:
// http_errors_messages ({"404": ["template with %", "alternative", ...]}
// or one string), http_errors_default_message, http_errors_always_show
// (default true) and http_errors_detailed (default false).
func errorPages(o map[string]any) (httpapp.ErrorPages, error) {
	var p httpapp.ErrorPages
	bad := func(key, want string) error {
		return fmt.Errorf("config Modules.Options.http_errors.%s: want %s", key, want)
	}
	for key, v := range o {
		switch key {
		case "http_errors_messages":
			m, ok := v.(map[string]any)
			if !ok {
				return p, bad(key, `{"<code>": ["message", ...]}`)
			}
			p.Messages = map[int][]string{}
			for code, msgs := range m {
				n, err := strconv.Atoi(code)
				if err != nil || n < 100 || n > 999 {
					return p, bad(key, "status codes as keys, not "+strconv.Quote(code))
				}
				switch msgs := msgs.(type) {
				case string:
					p.Messages[n] = []string{msgs}
				case []any:
					for _, s := range msgs {
						str, ok := s.(string)
						if !ok {
							return p, bad(key, "strings as messages")
						}
						p.Messages[n] = append(p.Messages[n], str)
					}
				default:
					return p, bad(key, "a string or a list of strings per code")
				}
			}
		case "http_errors_default_message":
			s, ok := v.(string)
			if !ok {
				return p, bad(key, "a string")
			}
			p.DefaultMessage = s
		case "http_errors_always_show", "http_errors_detailed":
			b, ok := v.(bool)
			if !ok {
				return p, bad(key, "true or false")
			}
			if key == "http_errors_detailed" {
				p.Detailed = b
			} else {
				p.SkipUnlisted = !b
			}
		}
	}
	return p, nil
}

// hostNames are the names a request's Host may carry besides
// "localhost" and IP literals: Modules.HTTP.Hosts, the interfaces given
// as names, and the machine's host name with and without ".local".
func hostNames(cfg, def config.ModulesConfig) []string {
	names := append([]string(nil), cfg.HTTP.Hosts...)
	for _, iface := range slices.Concat(orDefault(cfg.HTTP.Interfaces, def.HTTP.Interfaces), orDefault(cfg.HTTPS.Interfaces, def.HTTPS.Interfaces)) {
		if _, err := netip.ParseAddr(iface); err != nil && iface != "" {
			names = append(names, iface)
		}
	}
	if hn, err := os.Hostname(); err == nil && hn != "" {
		names = append(names, hn)
		if !strings.Contains(hn, ".") {
			names = append(names, hn+".local")
		}
	}
	return names
}

// writePath is the RPC path whose secrets open the writing apps when
// Modules.Authorizations is unset: a secret that may add may write.
const writePath = "/api/v0/add"

// CheckExposure refuses, before anything listens, module listeners off
// loopback without Modules.Authorizations, and writing modules
// (Modules.AllowWrite) without them when the RPC is protected (api:
// API.Authorizations is set) by no secret that may use /api/v0/add;
// with one, Start has the writing apps take the RPC's secrets.
// Modules.AllowUnauthenticated lifts both refusals. With nothing enabled
// nothing listens and all is allowed.
func CheckExposure(cfg config.ModulesConfig, api rpc.Auth) error {
	if len(cfg.Enabled) == 0 || len(cfg.Authorizations) > 0 || cfg.AllowUnauthenticated {
		return nil
	}
	const fix = `set Modules.Authorizations (e.g. cairn config --json Modules.Authorizations ` +
		`'{"me":{"AuthSecret":"basic:me:SECRET","AllowedPaths":["/"]}}')`
	def := config.DefaultModules()
	services := []struct {
		ports  []int
		ifaces []string
	}{
		{orDefault(cfg.HTTP.Ports, def.HTTP.Ports), orDefault(cfg.HTTP.Interfaces, def.HTTP.Interfaces)},
		{orDefault(cfg.HTTPS.Ports, def.HTTPS.Ports), orDefault(cfg.HTTPS.Interfaces, def.HTTPS.Interfaces)},
	}
	for _, svc := range services {
		for _, iface := range svc.ifaces {
			if a, err := netip.ParseAddr(iface); (err == nil && a.IsLoopback()) || iface == "localhost" || len(svc.ports) == 0 {
				continue
			}
			return fmt.Errorf("refusing to serve the modules on %s without protection: %s "+
				"or, at your own risk, Modules.AllowUnauthenticated true", net.JoinHostPort(iface, strconv.Itoa(svc.ports[0])), fix)
		}
	}
	if api != nil && len(cfg.AllowWrite) > 0 && !mayWrite(api) {
		return fmt.Errorf("refusing to let modules %s write to the node without protection while API.Authorizations is set: %s, "+
			"empty Modules.AllowWrite, or, at your own risk, set Modules.AllowUnauthenticated true", strings.Join(cfg.AllowWrite, ", "), fix)
	}
	return nil
}

// mayWrite reports whether one of the RPC's secrets may use writePath.
func mayWrite(api rpc.Auth) bool {
	for hv := range api {
		if api.Allows(hv, writePath) {
			return true
		}
	}
	return false
}

// listen binds every configured port on every interface.
func (h *Host) listen(cfg, def config.ModulesConfig, repo string) error {
	for _, p := range orDefault(cfg.HTTP.Ports, def.HTTP.Ports) {
		for _, iface := range orDefault(cfg.HTTP.Interfaces, def.HTTP.Interfaces) {
			if _, err := h.srv.Listen(net.JoinHostPort(iface, strconv.Itoa(p)), nil); err != nil {
				return fmt.Errorf("modules http listener: %w", err)
			}
		}
	}
	ports := orDefault(cfg.HTTPS.Ports, def.HTTPS.Ports)
	if len(ports) == 0 {
		return nil
	}
	if gen, err := EnsureCert(repo, cfg); err != nil {
		return err
	} else if gen {
		h.log.Info("generated a self-signed certificate for the modules' HTTPS service")
	}
	tc, err := loadTLS(repo, cfg.HTTPS)
	if err != nil {
		return err
	}
	for _, p := range ports {
		for _, iface := range orDefault(cfg.HTTPS.Interfaces, def.HTTPS.Interfaces) {
			if _, err := h.srv.Listen(net.JoinHostPort(iface, strconv.Itoa(p)), tc); err != nil {
				return fmt.Errorf("modules https listener: %w", err)
			}
		}
	}
	return nil
}

// Load loads module name (and what it depends on). It is a no-op for a
// loaded module. A name that is not a module name (see modapi.CheckName)
// is refused before anything is looked up.
func (h *Host) Load(name string) error {
	if err := modapi.CheckName(name); err != nil {
		h.fail(name, err)
		return err
	}
	h.mu.Lock()
	if _, ok := h.loaded[name]; ok {
		h.mu.Unlock()
		return nil
	}
	if h.loading[name] {
		h.mu.Unlock()
		return fmt.Errorf("module %s: circular dependency", name)
	}
	h.loading[name] = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.loading, name)
		h.mu.Unlock()
	}()

	m, from, err := h.find(name)
	if err != nil {
		h.fail(name, err)
		return err
	}
	v := h.view
	if !slices.Contains(h.cfg.AllowWrite, name) {
		v = modapi.ReadOnly(v)
	}
	ctx := &modapi.Context{
		Name: name, Node: v, Settings: h.settings, Log: h.log.With("module", name),
		Events: h.events, HTTPEvents: h.http, Shared: h.shared,
		ProvideFunc: func(app *httpapp.App) (httpapp.AppInfo, error) {
			info, err := h.srv.Add(app)
			if err == nil {
				h.log.Info("module app mounted", "module", name, "app", info.Name, "urls", h.appURLs(info.Home))
			}
			return info, err
		},
		DependsFunc: h.Load,
		URLFunc:     h.baseURL,
		AppsFunc:    h.srv.Apps,
	}
	if err := safeLoad(m, ctx); err != nil {
		h.srv.Remove(name)
		h.unhook(name)
		if u, ok := m.(modapi.Unloader); ok {
			_ = u.Unload()
		}
		h.fail(name, err)
		return err
	}
	h.mu.Lock()
	h.loaded[name] = m
	h.order = append(h.order, name)
	delete(h.failed, name)
	h.mu.Unlock()
	h.log.Info("module loaded", "module", name, "from", from)
	return nil
}

func safeLoad(m modapi.Module, ctx *modapi.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic while loading: %v", p)
		}
	}()
	return m.Load(ctx)
}

func (h *Host) fail(name string, err error) {
	h.mu.Lock()
	h.failed[name] = err
	h.mu.Unlock()
}

// find returns the Lua file <Dir>/mod_<name>/mod_<name>.lua or
// <Dir>/mod_<name>.lua (Prosody's plugin loader looks in that order, so
// a prosody-modules checkout's folders load as they are), else the
// built-in module: as with Prosody's plugin_paths, the user's file wins.
// The second result says where the module came from, for the log.
func (h *Host) find(name string) (modapi.Module, string, error) {
	file := "mod_" + name + ".lua"
	p := filepath.Join(h.settings.ModulesDir, "mod_"+name, file)
	_, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		p = filepath.Join(h.settings.ModulesDir, file)
		_, err = os.Stat(p)
	}
	if err == nil {
		return lua.New(name, p), p, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", err
	}
	if info, ok := modapi.Lookup(name); ok {
		return info.New(), "built-in", nil
	}
	return nil, "", fmt.Errorf("module %s not found (no built-in, no %s)", name, p)
}

// Unload withdraws a module's apps and hooks and releases it.
func (h *Host) Unload(name string) error {
	h.mu.Lock()
	m, ok := h.loaded[name]
	delete(h.loaded, name)
	h.order = slices.DeleteFunc(h.order, func(s string) bool { return s == name })
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("module %s is not loaded", name)
	}
	h.srv.Remove(name)
	h.unhook(name)
	var err error
	if u, ok := m.(modapi.Unloader); ok {
		err = u.Unload()
	}
	h.log.Info("module unloaded", "module", name)
	return err
}

// unhook removes every event handler of module name.
func (h *Host) unhook(name string) {
	h.events.RemoveOwner(name)
	h.http.RemoveOwner(name)
}

// Loaded lists the loaded modules in load order.
func (h *Host) Loaded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.order...)
}

// Failed returns the modules that failed to load and why.
func (h *Host) Failed() map[string]error {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]error{}
	for k, v := range h.failed {
		out[k] = v
	}
	return out
}

// Listeners returns the bound listeners (none with nothing enabled).
func (h *Host) Listeners() []httpapp.Listener {
	if h == nil || h.srv == nil {
		return nil
	}
	return h.srv.Listeners()
}

// baseURL is the URL of base on the first listener (HTTPS preferred,
// as Prosody's module:http_url does).
func (h *Host) baseURL(base string) string {
	ls := h.Listeners()
	if len(ls) == 0 {
		return "http://disabled.invalid/"
	}
	best := ls[0]
	for _, l := range ls {
		if l.Secure {
			best = l
			break
		}
	}
	return best.URL() + base
}

// appURLs is the app's home path (one that answers a GET) on every
// listener.
func (h *Host) appURLs(home string) []string {
	var out []string
	for _, l := range h.Listeners() {
		out = append(out, l.URL()+home)
	}
	return out
}

// URLs lists "app: url" lines for every mounted app and listener.
func (h *Host) URLs() []string {
	if h == nil || h.srv == nil {
		return nil
	}
	var out []string
	for _, a := range h.srv.Apps() {
		for _, u := range h.appURLs(a.Home) {
			out = append(out, a.Name+": "+u)
		}
	}
	return out
}

// Close stops the listeners and unloads every module, newest first.
func (h *Host) Close() error {
	if h == nil {
		return nil
	}
	var errs []error
	if h.srv != nil {
		errs = append(errs, h.srv.Close())
	}
	loaded := h.Loaded()
	for i := len(loaded) - 1; i >= 0; i-- {
		if err := h.Unload(loaded[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
