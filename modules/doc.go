// Package modules is cairn's module host: it loads the modules named in
// Modules.Enabled (built-ins and Lua files), runs the http provider's
// listeners on Modules.HTTP/HTTPS, and gives each module a narrow view of
// the node (read-only unless Modules.AllowWrite names it).
//
// Start from [Start] (called by the daemon after the RPC is up), [ViewOf]
// and [EnsureCert] (called at init). The pieces live below:
//
//   - modules/httpapp: the http provider (routes, requests, error pages,
//     formdecode, multipart);
//   - modules/modapi: what a module sees (NodeView, Context, registry);
//   - modules/files: http_files, http_ipfs, http_dir_listing;
//   - modules/status: http_status, the node's status page;
//   - modules/lua: mod_<name>.lua modules on gopher-lua.
//
// # Failures
//
// A module that fails to load (bad route key, Lua error, missing
// dependency) is logged, anything it provided is withdrawn, and the other
// modules and the node go on. Only a listener that cannot bind makes
// Start fail.
//
// # Files
//
//   - host.go: loading modules and running the listeners (Start).
//   - view.go: the narrow node view modules get (modapi.NodeView over
//     *node.Node).
//   - tls.go: the self-signed certificate of the HTTPS service (EnsureCert).
//   - metrics.go: each module's caps and what its calls took (Metrics, a
//     Prometheus collector the RPC serves; Host.Usage).
package modules
