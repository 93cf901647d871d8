// framework.go: the names of the wire framework (package rpc) that the
// command families and cairn's other packages use, as aliases, so that a
// family file reads `*Request`, `Emitter`, `OutStream` without a prefix.
// Nothing here has behaviour of its own; see rpc/doc.go.

package commands

import (
	"cairn/node"
	"cairn/rpc"
)

// Command declaration types.
type (
	Command    = rpc.Command
	Option     = rpc.Option
	OptType    = rpc.OptType
	Arg        = rpc.Arg
	ArgKind    = rpc.ArgKind
	OutputKind = rpc.OutputKind
	Table      = rpc.Table
	TreeNode   = rpc.TreeNode
)

// What a command's Run and Text functions see.
type (
	Request    = rpc.Request
	Emitter    = rpc.Emitter
	TextEnv    = rpc.TextEnv
	Env        = rpc.Env
	CidEncoder = rpc.CidEncoder
	Error      = rpc.Error
)

// Transports: the server, the client, and in-process calls.
type (
	Server        = rpc.Server
	ServerOptions = rpc.ServerOptions
	Client        = rpc.Client
	Response      = rpc.Response
	FuncEmitter   = rpc.FuncEmitter
	Result        = rpc.Result
	KV            = rpc.KV
	ParseError    = rpc.ParseError
)

// Option types.
const (
	Bool       = rpc.Bool
	Int        = rpc.Int
	Uint       = rpc.Uint
	Int64      = rpc.Int64
	Uint64     = rpc.Uint64
	Float      = rpc.Float
	String     = rpc.String
	StringList = rpc.StringList
)

// Argument kinds.
const (
	ArgString = rpc.ArgString
	ArgFile   = rpc.ArgFile
)

// Output shapes.
const (
	OutNone   = rpc.OutNone
	OutSingle = rpc.OutSingle
	OutStream = rpc.OutStream
	OutBytes  = rpc.OutBytes
)

// Error codes.
const (
	CodeNormal         = rpc.CodeNormal
	CodeClient         = rpc.CodeClient
	CodeImplementation = rpc.CodeImplementation
)

// Wait bounds how long the CLI waits for a daemon to answer a probe.
const Wait = rpc.Wait

// StartStream sends a stream's headers before its first value.
var StartStream = rpc.StartStream

var (
	// ErrConnRefused reports that no daemon answered at the address.
	ErrConnRefused = rpc.ErrConnRefused
	// errClientGone is what Emit and Write return once the client has gone.
	errClientGone = rpc.ErrClientGone
	// baseCidEncoder renders CIDs as CIDv1 in a given base.
	baseCidEncoder = rpc.BaseCidEncoder
)

// ClientError builds a Code 1 (400) error.
func ClientError(format string, a ...any) error { return rpc.ClientError(format, a...) }

// Functions of the framework used by the CLI and tests.
var (
	NewTable       = rpc.NewTable
	NewServer      = rpc.NewServer
	Call           = rpc.Call
	ConvertOption  = rpc.ConvertOption
	DecodeOptions  = rpc.DecodeOptions
	BindArgs       = rpc.BindArgs
	SplitBodyLines = rpc.SplitBodyLines
)

// NewClient makes a client for an API multiaddr that identifies itself as
// this build of cairn.
func NewClient(apiAddr, authSecret string) (*Client, error) {
	return rpc.NewClient(apiAddr, authSecret, "cairn/"+node.Version)
}
