// Package lua loads user modules written in Lua (gopher-lua), in the
// style of Prosody modules:
//
//	module:depends("http")
//	module:provides("http", {
//		route = {
//			["GET /"] = function(event) return "Hello from " .. module.name end,
//			["POST /echo"] = function(event)
//				event.response.headers.content_type = "text/plain"
//				event.response:send(event.request.body)
//				return true
//			end,
//		},
//	})
//
// A file <Modules.Dir>/mod_<name>.lua is the module <name>; its app name
// drops an "http_" prefix.
//
// # Sandbox
//
// Only the base, table, string, math, coroutine and utf8 libraries are opened;
// dofile, loadfile, collectgarbage and the io, os (but os.time, os.clock,
// os.date, os.difftime), package and debug libraries are not there.
// require knows "net.http" / "util.http" (formdecode, urlencode,
// urldecode, formencode, parse_multipart), "net.http.files" (serve),
// "cairn" (the node API, also the global cairn), "net.http.server" (the
// HTTP server's events: http-error, directory-index), util.json,
// util.encodings, util.hashes and util.set (lib_util.go, prelude.lua),
// and what published prosody-modules reach for: util.jid, util.stanza,
// util.uuid, util.id, util.datetime, util.timer, lfs.attributes and the
// prosody and hosts globals (lib_prosody.go, prelude.lua).
//
// # Between modules
//
// module:shared tables live in the host (modapi.Shared) and reach Lua
// as userdata proxies (lib_shared.go); module:hook and fire_event use
// the host's event buses (modules/events, lib_events.go). Event data and
// answers that cross from one module's state to another's are copied.
// A hook runs under its own module's lock and limits; a firing that
// comes back into a module whose call is waiting for it runs in that
// call (the context marks which states the goroutine holds).
// os.date and os.time follow Lua 5.1 (lib_os.go).
//
// # Limits
//
// Each module has one Lua state; its calls run one at a time. Every call
// (a handler, or the file itself at load) is stopped when it runs longer
// than Modules.Lua.MaxRunTime, or when the Go heap grows by more than
// Modules.Lua.MaxMemory while it runs (checked every few milliseconds and
// confirmed after a garbage collection). The request then gets a 500
// page; after a memory stop the state is thrown away (its pages returned
// to the OS) and rebuilt at once from the code read at Load;
// the file is never re-read. The string and table builtins that
// allocate or loop in Go check both caps themselves (bounded.go,
// pattern.go), so does `..` (every chunk is compiled by compile.go, which
// also bounds the nesting and memory of load and loadstring), the Lua stack and call depth are bounded, and a Lua error
// is a 500 page: none of these stop the node or the other modules.
//
// # Files
//
//   - module.go: a Lua module: its state, its load, its route handlers.
//   - state.go: the sandboxed Lua state and the API modules see.
//   - limits.go: running Lua under a time and a memory cap.
//   - compile.go: turning Lua source into functions within the caps (it
//     parses with luaparse, gopher-lua's parser with Lua 5.2-5.4 syntax).
//   - ops53.go: Lua 5.3's operators (// and the bitwise ones, which
//     compile.go turns into calls), table.move/pack/unpack and utf8.
//   - bounded.go: the string and table builtins that allocate or loop in Go,
//     bounded by the caps.
//   - pattern.go: Lua 5.1 patterns with bounded work.
//   - convert.go: events into Lua tables, Lua results into Go values.
//   - syntax.go: load errors that name a line.
//   - lib_events.go: module:hook, module:fire_event and the HTTP server's
//     events.
//   - lib_module.go: module:load_resource and module:add_timer.
//   - lib_os.go: the os functions the sandbox keeps.
//   - lib_shared.go: module:shared, and copying Lua values between module
//     states.
//   - lib_util.go: the util.* libraries a ported Prosody module uses (util.set
//     is Lua code in prelude.lua).
//   - lib_prosody.go: the rest of Prosody's environment that published
//     prosody-modules use (util.jid and util.stanza are in prelude.lua).
//   - snippet.go: running a chunk as module code runs, outside a module
//     (scripts/luacmp).
package lua
