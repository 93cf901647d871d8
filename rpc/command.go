// command.go: the types a command family declares (Command, Option, Arg)
// and the Request, Emitter and TextEnv its Run and Text functions see.

package rpc

import (
	"context"
	"io"

	"cairn/node"

	"github.com/ipfs/boxo/files"
)

// OptType is the type of an option's value.
type OptType int

// Option types, named as Kubo names them in conversion errors.
const (
	Bool OptType = iota
	Int
	Uint
	Int64
	Uint64
	Float
	String
	StringList
)

func (t OptType) String() string {
	switch t {
	case Bool:
		return "bool"
	case Int:
		return "int"
	case Uint:
		return "uint"
	case Int64:
		return "int64"
	case Uint64:
		return "uint64"
	case Float:
		return "float64"
	case StringList:
		return "array"
	}
	return "string"
}

// Option is a named flag. Names[0] is the canonical (long) name; the rest
// are aliases, as in Kubo (e.g. {"recursive", "r"}).
type Option struct {
	Names   []string
	Type    OptType
	Default any // nil: no default (absent unless given)
	Help    string
}

// Name is the canonical name.
func (o Option) Name() string { return o.Names[0] }

// ArgKind says where an argument's values come from.
type ArgKind int

// Argument kinds.
const (
	ArgString ArgKind = iota // query "arg" values (or body lines, see Stdin)
	ArgFile                  // multipart parts
)

// Arg is a positional argument.
type Arg struct {
	Name     string
	Kind     ArgKind
	Required bool
	Variadic bool
	// Stdin: for string args, values may also come from the first
	// multipart part, one per line (HTTP) or from stdin (CLI); for file
	// args, stdin is read when no path is given on the CLI.
	Stdin bool
	// Recursive: a file argument whose CLI paths may be directories
	// (with -r).
	Recursive bool
	// Secret: the value is never logged (the request log of diag/cmds
	// shows "<secret>"), e.g. a pinning service's key.
	Secret bool
	Help   string
}

// OutputKind is the shape of a command's output on the wire.
type OutputKind int

// Output shapes.
const (
	OutNone   OutputKind = iota // nothing: 200 + X-Chunked-Output, empty body
	OutSingle                   // one JSON value
	OutStream                   // NDJSON, X-Chunked-Output
	OutBytes                    // raw bytes, X-Stream-Output
)

// Command is one entry of the table.
type Command struct {
	Path     string // "block/stat"; "" is the root
	Synopsis string // one line for help
	Help     string // longer help text
	Args     []Arg
	Options  []Option
	Output   OutputKind
	// OutputFor, if set, picks the output shape per request (ls and
	// pin/ls stream only with stream=true).
	OutputFor func(r *Request) OutputKind
	// Run executes the command, emitting values or bytes to e. It must not
	// touch HTTP or argv.
	Run func(r *Request, e Emitter) error
	// Type returns a fresh value to decode one JSON output into (client
	// side). Nil for OutBytes and OutNone.
	Type func() any
	// Text renders one output value for people (the CLI, encoding=text).
	// Nil means JSON.
	Text func(t *TextEnv, v any) error
	// TextDone runs after the last value (e.g. to close a progress bar).
	TextDone func(t *TextEnv) error
	// BodyArgs: every line of the first multipart part becomes an
	// argument (cat, ls, refs, pin/add, ...), not just missing ones.
	BodyArgs bool
	// SurplusArgs: values beyond the declared arguments are kept as
	// empty strings, as Kubo's HTTP parser keeps them (its config then
	// reads three values as a get); other commands drop them.
	SurplusArgs bool
	// NoRemote commands are not served over HTTP (404); NoLocal ones need
	// a daemon; NoRepo ones run in the CLI without the repo (version).
	NoRemote, NoLocal, NoRepo bool
	// Pending marks a command of the reference that this build does not
	// implement yet: it answers a clear error (see pending.go).
	Pending bool
	// ClientOutput, if set, consumes a byte stream in the CLI instead of
	// copying it to stdout (get extracts its tar).
	ClientOutput func(r *Request, body io.Reader, stdout io.Writer) error
	// ContentType of a byte stream (default text/plain).
	ContentType func(r *Request) string
	// PreRun, if set, runs in the CLI before the options are decoded and
	// the request is sent or run: it may set client-side defaults in opts
	// (raw values, as on the command line), e.g. add's progress on a TTY.
	PreRun func(opts map[string]string, t *TextEnv)
	// EncodeArgs, if set, rewrites the arguments the CLI sends to a
	// daemon (pubsub's multibase topics, as Kubo's CLI sends them).
	EncodeArgs func(args []string) []string
}

// Request is one invocation, whichever transport carries it.
type Request struct {
	Ctx     context.Context
	Node    *node.Node // nil for NoRepo commands run by the CLI
	Command *Command
	Args    []string
	Opts    map[string]any // canonical name => typed value, defaults included
	// Files is the tree of file arguments (multipart parts or local
	// paths); nil when there are none.
	Files files.Directory
	// Env holds what the daemon offers commands (shutdown, bound
	// addresses); nil in-process.
	Env *Env
}

// Env is what the running daemon offers commands.
type Env struct {
	Shutdown func()
	Table    *Table
	// Requests is the server's log of running and recent requests
	// (diag/cmds); NewServer makes it when it is nil.
	Requests *ReqLog
	// Mount mounts /ipfs and /ipns at the given points with FUSE,
	// replacing earlier mounts (nil: this process cannot mount).
	Mount func(ipfs, ipns string) error
}

// Emitter receives a command's output. Values go through Emit; byte
// streams through Write (after an optional SetLength).
type Emitter interface {
	Emit(v any) error
	io.Writer
	// SetLength announces the byte count of a byte stream
	// (X-Content-Length); call it before the first Write.
	SetLength(n uint64)
}

// StreamStarter is implemented by emitters that can send the answer's
// headers before the first value (the HTTP one).
type StreamStarter interface {
	StartStream() error
}

// StartStream sends e's headers now if e can (a no-op otherwise).
func StartStream(e Emitter) error {
	if s, ok := e.(StreamStarter); ok {
		return s.StartStream()
	}
	return nil
}

// TextEnv is what a text renderer writes to.
type TextEnv struct {
	Out, Err io.Writer
	Req      *Request
	// TTY is true when Err is a terminal (progress bars).
	TTY bool
	// State is the renderer's own, kept across values of one stream.
	State any
}

// Bool returns a bool option (false when absent).
func (r *Request) Bool(name string) bool { v, _ := r.Opts[name].(bool); return v }

// String returns a string option ("" when absent).
func (r *Request) String(name string) string { v, _ := r.Opts[name].(string); return v }

// Strings returns a list option.
func (r *Request) Strings(name string) []string { v, _ := r.Opts[name].([]string); return v }

// Int returns an integer option of any width as int64 (0 when absent).
func (r *Request) Int(name string) int64 {
	switch v := r.Opts[name].(type) {
	case int:
		return int64(v)
	case int64:
		return v
	case uint:
		return int64(v)
	case uint64:
		return int64(v)
	}
	return 0
}

// IsSet reports whether an option was given (or has a default).
func (r *Request) IsSet(name string) bool { _, ok := r.Opts[name]; return ok }
