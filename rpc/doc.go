// Package rpc is the wire framework of cairn's Kubo-compatible RPC API
// (/api/v0/): the command table types, the HTTP server, the client the CLI
// uses, and in-process calls. It knows nothing of any command: the command
// families live in package commands and are plain data (Command values) whose
// Run functions see only a *Request and an Emitter.
//
// Connections reach the server through a connlimit.Guard (capacity, a share
// kept for loopback, a cap per client address, a deadline for the first
// byte); server.go adds fasthttp's head and idle deadlines and an idle
// deadline per body read.
//
// Start with command.go (Command, Option, Arg, Request, Emitter, TextEnv)
// and table.go (the tree of commands). A request to the server goes
// server.go (lifecycle, path checks, in Kubo's processing order) -> auth.go
// (API.Authorizations) -> origin.go (Origin/Referer gate, CORS preflight)
// -> dispatch.go (route, decode.go for options and arguments, the multipart
// body, then Run in its own goroutine) -> response.go (the Emitter that
// writes the preamble at the first output, the error body) -> pipe.go (the
// hand-off to fasthttp's body writer) -> cork.go (the connection gathers an
// answer's small writes into a few large ones); buffers.go keeps the
// large buffers of those two from one answer to the next. errors.go is the command
// error type and its wire form; hangup_linux.go notices a client that hung
// up while its command runs (hangup_other.go: the other systems, which
// notice at the next write); reqlog.go keeps the running and recent
// requests for diag/cmds; metrics.go serves /debug/metrics/prometheus and
// latency.go the request duration summary. client.go is the other end,
// local.go runs a command in-process (the CLI without a daemon, tests),
// cidenc.go formats CIDs for the global cid-base options.
//
// The framework's tests (server_test.go, auth_test.go, origin_test.go,
// decode_test.go, response_test.go) run the server on a small command table
// of their own (testTable), not on the command families.
//
// The HTTP state of a request (fasthttp's RequestCtx, the response writer)
// lives only in unexported fields of this package, so a command cannot touch
// HTTP: what it may do is Emit values, Write bytes, and read its Request.
//
// # Errors
//
// A request refused before its command runs is answered in text/plain: 404
// for an unknown path, 400 with Kubo's text for a bad option value or a
// missing argument (ParseError).
// A command's error before any output becomes Kubo's JSON error object
// ({"Message", "Code", "Type": "error"}): an *Error with CodeClient (ClientError) is 400, anything else 500
// with Code 0. An error after output has started is sent in the
// X-Stream-Error trailer. A panic in a command is recovered, logged (go-log
// subsystem cmds/http) and answered as "an error occurred"; it never
// reaches fasthttp.
// Emit and Write return ErrClientGone once the client has disconnected;
// commands should stop then.
//
// # Concurrency
//
// A Table is built once (NewTable) and only read afterwards, from any number
// of goroutines. The server runs each command in a goroutine of its own with
// a context that ends at Shutdown, at the request's timeout option, or when
// the client goes; the Emitter it gets is not safe for concurrent use, so a
// command that works in several goroutines must funnel its output through
// one. Server.Serve may be called for several listeners; Shutdown stops them
// all.
package rpc
