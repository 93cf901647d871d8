// local.go: running a command in-process (the CLI without a daemon, and
// tests), collecting what it emits.

package rpc

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"cairn/node"

	"github.com/ipfs/boxo/files"
)

// FuncEmitter adapts callbacks to an Emitter.
type FuncEmitter struct {
	OnValue  func(v any) error
	OnBytes  io.Writer
	OnLength func(n uint64)
}

// Emit calls OnValue.
func (f *FuncEmitter) Emit(v any) error {
	if f.OnValue == nil {
		return nil
	}
	return f.OnValue(v)
}

// Write forwards to OnBytes.
func (f *FuncEmitter) Write(p []byte) (int, error) {
	if f.OnBytes == nil {
		return len(p), nil
	}
	return f.OnBytes.Write(p)
}

// SetLength calls OnLength.
func (f *FuncEmitter) SetLength(n uint64) {
	if f.OnLength != nil {
		f.OnLength(n)
	}
}

// Result is what a command emitted, collected.
type Result struct {
	Values []any
	Bytes  []byte
	Length int64 // -1 when not announced
}

// Call runs the command at path in-process. raw holds option values as
// strings (as a query would); args are string arguments; dir holds file
// arguments (nil if none). Defaults are applied and values converted as
// the server does.
func Call(ctx context.Context, n *node.Node, t *Table, path string, args []string, raw map[string]string, dir files.Directory) (*Result, error) {
	cmd := t.Find(path)
	if cmd == nil {
		return nil, fmt.Errorf("unknown command %q", path)
	}
	var pairs []KV
	for k, v := range raw {
		pairs = append(pairs, KV{k, v})
	}
	opts, err := DecodeOptions(t.OptionsFor(path), pairs)
	if err != nil {
		return nil, err
	}
	bound, err := BindArgs(cmd, args, nil, dir != nil)
	if err != nil {
		return nil, err
	}
	res := &Result{Length: -1}
	var buf bytes.Buffer
	em := &FuncEmitter{
		OnValue:  func(v any) error { res.Values = append(res.Values, v); return nil },
		OnBytes:  &buf,
		OnLength: func(l uint64) { res.Length = int64(l) },
	}
	req := &Request{Ctx: ctx, Node: n, Command: cmd, Args: bound, Opts: opts, Files: dir}
	err = cmd.Run(req, em)
	res.Bytes = buf.Bytes()
	return res, err
}
