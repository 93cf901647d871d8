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
// Only the base, table, string, math and coroutine libraries are opened;
// dofile, loadfile, collectgarbage and the io, os (but os.time, os.clock,
// os.date, os.difftime), package and debug libraries are not there.
// require knows "net.http" / "util.http" (formdecode, urlencode,
// urldecode, formencode, parse_multipart), "net.http.files" (serve),
// "cairn" (the node API, also the global cairn), and util.json,
// util.encodings, util.hashes and util.set (lib_util.go, prelude.lua).
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
// to the OS) and rebuilt on the next request from the code read at Load;
// the file is never re-read. The string and table builtins that
// allocate or loop in Go check both caps themselves (bounded.go,
// pattern.go), so does `..` (every chunk is compiled by compile.go, which
// also bounds the nesting and memory of load and loadstring), the Lua stack and call depth are bounded, and a Lua error
// is a 500 page: none of these stop the node or the other modules.
package lua
