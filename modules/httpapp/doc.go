// Package httpapp is the "http" provider of cairn's module facility: the
// Prosody-style web server on which modules publish apps, following
// Prosody's mod_http and net.http.server except where listed below.
//
// Start from [App] (what a module publishes), [Server] (listeners, the
// route table, dispatch) and [Event] (what a handler gets). It knows
// nothing about the IPFS node or about Lua: modules/lua adapts Lua
// handlers to [Handler], modules/files builds handlers on it.
//
// # Route keys
//
// A key is "METHOD", "METHOD /sub" or "METHOD /prefix/*". Keys are
// parsed when an app is added and a bad key fails the whole app with an
// error naming the app and the key (see route.go). Matching order:
// deeper patterns first, exact before wildcard at equal depth, then
// priority (0 for handlers, -1 for the automatic trailing-slash
// redirects), then the order in which apps were added. A handler that
// returns nil passes the request to the next candidate; HEAD falls back
// to GET routes; nothing left gives a 404 page.
//
// # Deliberate differences from Prosody
//
//   - No virtual hosts: every app is "global". The Host header is only
//     checked against the server's names (Options.Hosts, "localhost", IP
//     literals); any other gets 403 "Unknown host" (Prosody: 404), which
//     stops DNS rebinding.
//   - Options.Authorizations: logins (Basic or Bearer) scoped to path
//     prefixes, checked before any handler; Prosody has none.
//   - Options.AppLogin: without Authorizations, a login that only the
//     apps of some modules need (the host: the RPC's secrets, for the
//     modules that write).
//   - A key whose path does not start with "/" ("GET x") is rejected, not
//     appended to the base path.
//   - Two keys of one app that mean the same event ("get /a", "GET /a")
//     fail the app instead of one being ignored.
//   - A body over the cap gets 413 (then up to 256 KiB more of it is read
//     and dropped, and the connection is closed) instead of a closed
//     connection; timeouts exist (read, write, idle, handler).
//   - A handler error gives a 500 page with Connection: close on the
//     request's own HTTP version, never a dropped connection.
//   - CORS is off unless configured (the status app can add files).
//
// # Files
//
//   - event.go: what a module publishes (App) and what its handlers get
//     (Event, Request, Response) and may return.
//   - route.go: route keys, the candidate index and order, the automatic
//     redirects.
//   - path.go: the request target turned into the path used for matching.
//   - server.go: the Server: apps, listeners, dispatch of one request.
//   - errorpage.go: the http-error event, the default error pages and the root
//     page.
//   - urlcode.go: urlencode, urldecode, formdecode, formencode.
//   - multipart.go: multipart/form-data parsing for uploads.
package httpapp
