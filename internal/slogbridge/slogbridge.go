// Package slogbridge is where cairn's slog loggers meet go-log, the one
// log sink of the process: cmd/cairn/logging.go wires slog's default
// logger and libp2p's loggers to [Handler], and the daemon's module host
// logs through [Logger].
//
// # Error values
//
// go-log's bridge hands a slog value of kind Any to zap as a reflected
// value, which zap encodes as JSON: an error with unexported fields
// (every fmt.Errorf wrap, errors.New) becomes {} and its text is lost.
// Handler turns every error value, at any depth of groups and in With
// attributes, into a string of its Error text first, as slog's own
// handlers and zap's sugared loggers render errors. A typed nil pointer
// is "<nil>", as in zap.
package slogbridge

import (
	"context"
	"log/slog"
	"reflect"

	logging "github.com/ipfs/go-log/v2"
)

// Handler is go-log's slog bridge with error values logged as their text.
func Handler() slog.Handler { return errText{logging.SlogHandler()} }

// Logger is a slog logger that writes under the go-log subsystem name,
// listed by `cairn log ls` and leveled by `cairn log level`.
func Logger(name string) *slog.Logger {
	logging.Logger(name)
	return slog.New(Handler()).With("logger", name)
}

// errText is a handler that passes records and attributes on with every
// error value replaced by its text.
type errText struct{ next slog.Handler }

// GoLogBridge keeps the marker by which libraries detect go-log's bridge.
func (errText) GoLogBridge() {}

func (h errText) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h errText) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(textAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h errText) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = textAttr(a)
	}
	return errText{h.next.WithAttrs(out)}
}

func (h errText) WithGroup(name string) slog.Handler { return errText{h.next.WithGroup(name)} }

// textAttr is a with its error values, here or inside groups, as text.
func textAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, errorText(err))
		}
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, x := range g {
			out[i] = textAttr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// errorText is err.Error(), or "<nil>" for a typed nil pointer.
func errorText(err error) string {
	if v := reflect.ValueOf(err); v.Kind() == reflect.Pointer && v.IsNil() {
		return "<nil>"
	}
	return err.Error()
}
